"""The reviewer's answers to a contradiction candidate, each a human event: record it as a tension, say it is not
a conflict (a dismissed tension, so neither plur_desk nor PLUR's own scan suggests the pair again), or say one
engram replaces the other (supersedes, as PLUR's `learn(…, {supersedes})` links them; undoable)."""

from __future__ import annotations

from plur_desk.app.session import ChangeSet, ReviewSession
from plur_desk.domain import review
from plur_desk.domain.review import Operation, Patch, engram_fingerprint
from plur_desk.domain.tension_rules import add_relation, new_tension, next_tension_id, pair_key
from plur_desk.infra.clock import iso_ms
from plur_desk.infra.errors import ActionRefused
from plur_desk.store.plur_store import Apply, Edit
from plur_desk.store.tension_append import append_tension


def recorded_pair_keys(session: ReviewSession) -> frozenset[str]:
    """Every pair with a valid tension record, whatever its status: PLUR's scan excludes them all."""
    keys = set()
    for entry in session.store.tensions.entries:
        value = entry.value
        if entry.valid and isinstance(value, dict):
            keys.add(pair_key(str(value.get("engram_a")), str(value.get("engram_b"))))
    return frozenset(keys)


def _relation(engram: dict[str, object], name: str) -> list[object]:
    relations = engram.get("relations")
    values = relations.get(name) if isinstance(relations, dict) else None
    return list(values) if isinstance(values, list) else []


def _pair(session: ReviewSession, id_a: str, id_b: str) -> tuple[dict[str, object], dict[str, object]]:
    if id_a == id_b:
        raise ActionRefused("a tension needs two different engrams")
    a, b = session.engram(id_a), session.engram(id_b)
    for ident, engram in ((id_a, a), (id_b, b)):
        if engram is None:
            raise ActionRefused(f"{ident} is not in the store")
    assert a is not None and b is not None
    return a, b


def record_tension(
    session: ReviewSession, id_a: str, id_b: str, confidence: float, reason: str, *, dismissed: bool = False
) -> ChangeSet:
    """A new record in PLUR's shape (status detected, or dismissed for "not a conflict") and its history event."""
    a, b = _pair(session, id_a, id_b)
    session._check_writable()
    now = session.now()
    key = pair_key(id_a, id_b)

    def make(valid: list[dict[str, object]]) -> tuple[dict[str, object], list[dict[str, object]]]:
        for record in valid:
            if pair_key(str(record.get("engram_a")), str(record.get("engram_b"))) == key:
                raise ActionRefused(
                    f"{id_a} and {id_b} are already recorded as {record.get('id')} ({record.get('status', 'detected')})"
                )
        ident = next_tension_id([str(r.get("id", "")) for r in valid], now)
        record = new_tension(ident, a, b, confidence, reason, now, "dismissed" if dismissed else "detected")
        if dismissed:
            data: dict[str, object] = {
                "action": "not_a_conflict",
                "tension_id": ident,
                "engram_b": id_b,
                "from": None,
                "to": "dismissed",
                "reason": reason,
            }
            return record, [session.keys.sign(review.make_event("tension_reviewed", id_a, now, data, session.reviewer))]
        data = {
            "tension_id": ident,
            "engram_b": id_b,
            "confidence": record["confidence"],
            "reason": reason,
            "category": record["category"],
            "action": "record_tension",
        }
        return record, [
            session.keys.sign(review.make_event("contradiction_detected", id_a, now, data, session.reviewer))
        ]

    session.keys.ready()  # every event leaves the app signed; a locked keyring asks before any lock is taken
    result = append_tension(session.store, make, f"{'not a conflict' if dismissed else 'record tension'}: {key}")
    (ident,) = result.changed
    verb = "recorded not a conflict" if dismissed else "recorded tension"
    label = f"{verb} {ident} between {id_a} and {id_b}"
    # A new record has no earlier state to go back to: not on the undo stack (dismiss or resolve it instead).
    change = session._changes(
        Operation("record_tension", label, [Patch.between("tensions", ident, {}, result.after[ident])]), result
    )
    change.reloaded = True
    return change


def not_a_conflict(session: ReviewSession, id_a: str, id_b: str, reason: str = "") -> ChangeSet:
    why = reason.strip() or "not a conflict (reviewed in plur_desk)"
    return record_tension(session, id_a, id_b, 0.0, why, dismissed=True)


def supersede(session: ReviewSession, newer: str, older: str) -> ChangeSet:
    """`newer` replaces `older`: relations.supersedes on the newer, superseded_by on the older. Nothing retired."""
    a, b = _pair(session, newer, older)
    if older in _relation(a, "supersedes"):
        raise ActionRefused(f"{newer} already supersedes {older}")
    now = session.now()

    def link(name: str, target: str) -> Apply:
        def apply(engram: dict[str, object]) -> tuple[dict[str, object], list[dict[str, object]]]:
            before = _relation(engram, name)
            add_relation(engram, name, target)
            engram["updated_at"] = iso_ms(now)
            data = {"action": "supersede", "field": f"relations.{name}", "from": before, "to": _relation(engram, name)}
            return engram, [review.make_event("engram_updated", str(engram["id"]), now, data, session.reviewer)]

        return apply

    edits = [
        Edit(newer, link("supersedes", older), engram_fingerprint(a)),
        Edit(older, link("superseded_by", newer), engram_fingerprint(b)),
    ]
    session._check_writable()
    result = session.store.write_engrams(session._signed(edits), engram_fingerprint)
    op = Operation(
        "supersede",
        f"{newer} replaces {older}",
        [Patch.between("engrams", k, result.before[k], result.after[k]) for k in result.changed],
    )
    return session._done(op, result)
