"""The reviewer's answers to a contradiction candidate, each a human event: record it as a tension, say it is not
a conflict (a dismissed tension, so neither plur_desk nor PLUR's own scan suggests the pair again), or say one
engram replaces the other (supersedes, as PLUR's `learn(…, {supersedes})` links them; undoable)."""

from __future__ import annotations

from plur_desk.app.review.session import ChangeSet, ReviewSession
from plur_desk.domain.commands import RecordTension, Supersede
from plur_desk.domain.plur_rules.tension_rules import pair_key
from plur_desk.domain.seen import Seen
from plur_desk.infra.errors import ActionRefused, Outcome


def recorded_pair_keys(session: ReviewSession) -> frozenset[str]:
    """Every pair with a valid tension record, whatever its status: PLUR's scan excludes them all."""
    return frozenset(pair_key(str(v.get("engram_a")), str(v.get("engram_b"))) for v in session.valid_tension_records())


def _pair(session: ReviewSession, id_a: str, id_b: str) -> None:
    if id_a == id_b:
        raise ActionRefused("a tension needs two different engrams")
    for ident in (id_a, id_b):
        if session.engram(ident) is None:
            raise ActionRefused(f"{ident} is not in the store")


def record_tension(
    session: ReviewSession,
    id_a: str,
    id_b: str,
    confidence: float,
    reason: str,
    *,
    dismissed: bool = False,
    seen: tuple[Seen, ...] = (),
) -> ChangeSet:
    """A new record in PLUR's shape (status detected, or dismissed for "not a conflict") and its history event.
    `seen`: both engrams as the reviewer was shown them (the window always gives it; refused if either changed)."""
    return session.execute(RecordTension(id_a, id_b, confidence, reason, dismissed, seen))


def not_a_conflict(
    session: ReviewSession, id_a: str, id_b: str, reason: str = "", seen: tuple[Seen, ...] = ()
) -> ChangeSet:
    why = reason.strip() or "not a conflict (reviewed in plur_desk)"
    return record_tension(session, id_a, id_b, 0.0, why, dismissed=True, seen=seen)


def supersede(session: ReviewSession, newer: str, older: str, seen: tuple[Seen, ...] | None = None) -> ChangeSet:
    """`newer` replaces `older`: relations.supersedes on the newer, superseded_by on the older. Nothing retired.
    `seen`: both as the reviewer was shown them (the window); None for a caller deciding on the session as it is."""
    _pair(session, newer, older)
    if seen is None:
        seen = tuple(session.writes.seen([newer, older]))
    if {s.id for s in seen} != {newer, older}:
        raise ActionRefused(f"what was shown of {newer} and {older} is not known", outcome=Outcome.NOTHING_WRITTEN)
    return session.execute(Supersede(seen, newer, older))
