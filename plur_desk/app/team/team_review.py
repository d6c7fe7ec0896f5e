"""Team review on an open store: the disagreements waiting, each teammate's decisions, visibility warnings,
and settling a disagreement as an ordinary audited, undoable decision of this reviewer."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from plur_desk.app.review.reviewer import READER
from plur_desk.app.review.session import ChangeSet, ReviewSession
from plur_desk.app.team.disagreements import TeamDisagreement, find_disagreements
from plur_desk.app.team.git_repo import find_repo
from plur_desk.domain.merge.merge_engram import REVIEWS_KEY
from plur_desk.domain.seen import Seen, seen_engram, seen_tension
from plur_desk.infra.errors import ActionRefused, Outcome


def disagreements(session: ReviewSession) -> list[TeamDisagreement]:
    """Each with what a list shows of it (`seen`, from the same records as its summary): settling it is refused
    when the record or its engrams changed since (a teammate's rewrite arriving with a sync)."""
    engrams = session.engrams_by_id()  # (a copy in C: no second pass in Python over every engram)
    tensions = {str(t.get("id")): t for t in session.all_tensions()}
    found = find_disagreements(engrams.values(), tensions.values(), session.root)
    out = []
    for row in found:
        tension, engram = tensions.get(row.record), engrams.get(row.record)
        if tension is not None:
            shown = seen_tension(tension, [engrams.get(i) for i in row.engrams])
            out.append(replace(row, seen=shown))
        else:
            out.append(replace(row, seen=seen_engram(engram)) if engram is not None else row)
    return out


def shown_texts(seen: Seen | None) -> list[tuple[str, str]]:
    """(engram id, statement) for each engram a disagreement's `seen` holds, in order: what a list shows."""
    if seen is None:
        return []
    engrams = seen.sides if seen.kind == "tension" else (seen,)
    return [(s.id, str(s.expected().get("statement", ""))) for s in engrams]


def decisions(session: ReviewSession, engram_id: str) -> list[dict[str, object]]:
    """Every reviewer's decision kept on the engram (it travels with it through sync), oldest first."""
    engram = session.engram(engram_id) or {}
    found = [engram.get("review"), *(engram.get(REVIEWS_KEY) or [])]  # type: ignore[misc]
    unique = {repr(sorted(d.items())): d for d in found if isinstance(d, dict)}
    return sorted(unique.values(), key=lambda d: str(d.get("at", "")))


_REMOTES: dict[Path, str | None] = {}


def team_remote(root: Path) -> str | None:
    """The store's remote type when it is a git clone with an origin (asked once per store), else None."""
    if root not in _REMOTES:
        repo = find_repo(root)
        kind = None
        if repo is not None and repo.ok("remote", "get-url", "origin"):
            from plur_desk.app.team.sync import remote_type  # git sync's modules load only for a store that is a clone

            kind = remote_type(root)
        _REMOTES[root] = kind
    return _REMOTES[root]


def visibility_warnings(session: ReviewSession, ids: list[str]) -> list[str]:
    """Before deciding: engrams whose decision will never reach the team (only for stores synced with git)."""
    kind = team_remote(session.root)
    if kind is None:
        return []
    from plur_desk.store.team.sync_strip import why_not_pushed

    warnings = []
    for ident in ids:
        engram = session.engram(ident)
        reason = why_not_pushed(engram, kind) if engram is not None else None
        if reason:
            warnings.append(f"{ident}: {reason}")
    return warnings


def settle_decision(
    session: ReviewSession,
    engram_id: str,
    keep: str,
    level: str = "decided",
    note: str = "",
    seen: Seen | None = None,
) -> ChangeSet:
    from plur_desk.domain.commands import SettleDecision  # the commands load with the first decision

    if seen is None:  # a script deciding on the engram as the session holds it; the window gives what it showed
        (seen,) = session.writes.seen([engram_id])
    elif seen.kind != "engram" or seen.id != engram_id:
        raise ActionRefused(f"what was shown is not {engram_id}", outcome=Outcome.NOTHING_WRITTEN)
    return session.execute(SettleDecision(seen, keep, level, note))


def settle_two_winners(session: ReviewSession, tension_id: str, winner: str, seen: Seen | None = None) -> ChangeSet:
    """One winner for a tension two machines resolved differently: the record names it, it is active again.
    As with resolving, one journal record covers both files: the tension is written first (the winner's
    reinstatement journaled as planned), and set back if the engram cannot be written."""
    from plur_desk.domain.commands import SettleTwoWinners

    if session.tension(tension_id) is None:
        raise ActionRefused(f"{tension_id} is not in tensions.yaml")
    session.writes.seen([winner])  # refused, with the reason, when the winner cannot be acted on
    if seen is not None and (seen.kind != "tension" or seen.id != tension_id):
        raise ActionRefused(f"what was shown is not {tension_id}", outcome=Outcome.NOTHING_WRITTEN)
    shown = seen if seen is not None else session.writes.seen_tension(tension_id)  # (a script: the session's record)
    return session.execute(SettleTwoWinners(shown, winner))


def disagreements_main(argv: list[str]) -> int:
    """`plur-desk disagreements [STORE]`: list what teammates decided differently (read-only)."""
    import json
    import sys

    from plur_desk.app.review.bootstrap import open_session
    from plur_desk.infra.errors import PlurDeskError
    from plur_desk.infra.paths import default_store_path, store_parser

    parser = store_parser(
        "disagreements",
        "List team disagreements in a store: both decisions, and what is kept until someone decides.",
        epilog="exit status: 0 none, 1 some wait for a reviewer, 2 the store cannot be read",
        json="machine-readable list",
    )
    args = parser.parse_args(argv)
    try:
        session = open_session(default_store_path(args.store), READER, load_history=False, use_cache=False)
    except PlurDeskError as exc:
        sys.stdout.write(f"{exc}\n")
        return 2
    found = disagreements(session)
    if args.json:
        rows = [{"kind": d.kind, "record": d.record, "summary": d.summary, "engrams": list(d.engrams)} for d in found]
        sys.stdout.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write("".join(f"{d.summary}\n" for d in found) or "No team disagreements.\n")
    return 1 if found else 0
