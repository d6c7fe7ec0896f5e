"""Ratify and Revert of a listed agent change, as the session's commands: which command decides a change as shown,
and what a ratification (its undo, its redo) writes into the watched baseline.

Every decision goes through the journal and the undo history like any review decision (domain/
agent_change_commands.py). A ratification writes the values it let stand into the baseline as a `ratified` line, a
revert the values it put back as a `reverted` line; the undo of either writes the values the baseline held before
it (so the agent's change is listed again, not taken as the reviewer's), its redo the decision's values again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from plur_desk.domain.agents.agent_change_commands import (
    EngramChanges,
    RatifyEngramChange,
    RatifyTensionChange,
    RevertEngramChange,
    RevertResolution,
    RevertTensionChange,
)
from plur_desk.domain.agents.agent_changes import (
    ENGRAM_FIELDS,
    TENSION_FIELDS,
    AgentChange,
    Values,
    engram_extras,
    engram_values,
    tension_values,
)
from plur_desk.domain.changes import ChangeSet
from plur_desk.domain.review import engram_fingerprint, tension_fingerprint
from plur_desk.domain.seen import Seen
from plur_desk.infra.errors import ActionRefused, ChangedSinceError, PlurDeskError

if TYPE_CHECKING:
    from plur_desk.app.changes.watch import ChangeWatch
    from plur_desk.app.review.session import ReviewSession
    from plur_desk.domain.agents.baseline_lines import Extras, Since

Tables = tuple[dict[str, Values], dict[str, Values], "Extras"]


@dataclass(frozen=True)
class Ratified:
    """What one ratification moved in the baseline: each record's values before it (None: not in the baseline,
    which no line can say again) and the values it let stand."""

    engrams: dict[str, tuple[Values | None, Values]]
    tensions: dict[str, tuple[Values | None, Values]]
    extras: dict[str, tuple[dict[str, object] | None, dict[str, object]]]
    claim: str = "ratified"
    since: Since | None = None  # each record's date in the baseline before it: what its undo puts back


_RATIFY = (RatifyEngramChange, RatifyTensionChange)
_REVERT = (RevertEngramChange, RevertTensionChange, RevertResolution)


def ratified_values(
    watch: ChangeWatch, command: object, op: object, undoing: bool, tables: Tables
) -> tuple[str, Since | None]:
    """Put a ratification's or a revert's values (or, undoing it, the values before it) into the baseline line about
    to be written (`tables`, changed in place); returns the line's claim and, for an undo, the dates its records'
    values stand from again (the agent's events since then are listed behind the change once more)."""
    engrams, tensions, extras = tables
    claim = _claim(command)
    if claim is not None:
        watch.ratified[id(op)] = _decided(watch, command, tables, claim)
    done = watch.ratified.get(id(op))
    if done is None:
        return "decided", None
    pick = 0 if undoing else 1
    for table, moved in ((engrams, done.engrams), (tensions, done.tensions)):
        for ident, both in moved.items():
            if both[pick] is not None:
                table[ident] = both[pick]  # type: ignore[assignment]
    for ident, held in done.extras.items():
        if held[pick] is not None and ident in engrams:
            extras[ident] = held[pick]  # type: ignore[assignment]
    if undoing:  # what the baseline holds already is not signed again: its date stays, and the agent's events with it
        baseline = watch.read().baseline
        for ident in [i for i, v in engrams.items() if baseline.engrams.get(i) == v]:
            if extras.get(ident) == baseline.extras.get(ident):
                del engrams[ident]
                extras.pop(ident, None)
        for ident in [i for i, v in tensions.items() if baseline.tensions.get(i) == v]:
            del tensions[ident]
    return ("decided", _since(done, engrams, tensions)) if undoing else (done.claim, None)


def _since(done: Ratified, engrams: dict[str, Values], tensions: dict[str, Values]) -> Since:
    """The dates the records an undo's line names stood from before the decision (the line's own date otherwise)."""
    dates = done.since or {}
    return {
        "engrams": {i: d for i, d in dates.get("engrams", {}).items() if i in engrams},
        "tensions": {i: d for i, d in dates.get("tensions", {}).items() if i in tensions},
    }


def _claim(command: object) -> str | None:
    """`ratified` or `reverted` for a decision on listed changes, else None."""
    if isinstance(command, _RATIFY):
        return "ratified"
    if isinstance(command, _REVERT):
        return "reverted"
    if isinstance(command, EngramChanges):
        return "ratified" if command.action == "ratify_agent_change" else "reverted"
    return None


def _decided(watch: ChangeWatch, command: object, tables: Tables, claim: str) -> Ratified:
    """What the decision sets in the baseline, beside what the baseline held before it."""
    baseline = watch.read().baseline
    if claim == "ratified":
        stand_engrams, stand_tensions = command.stands()  # type: ignore[attr-defined]  # (a ratification: _claim)
        now_extras = {}
        for ident in stand_engrams:
            current = watch.session.engram(ident)
            if current is not None:
                now_extras[ident] = engram_extras(current)
    else:  # a revert: the values its patches put back (the baseline's, with anything it did not move)
        stand_engrams, stand_tensions, now_extras = dict(tables[0]), dict(tables[1]), dict(tables[2])
    return Ratified(
        {i: (baseline.engrams.get(i), v) for i, v in stand_engrams.items()},
        {i: (baseline.tensions.get(i), v) for i, v in stand_tensions.items()},
        {i: (baseline.extras.get(i), v) for i, v in now_extras.items()},
        claim,
        {
            "engrams": {i: baseline.engram_at[i] for i in stand_engrams if i in baseline.engram_at},
            "tensions": {i: baseline.tension_at[i] for i in stand_tensions if i in baseline.tension_at},
        },
    )


def command_for(watch: ChangeWatch, change: AgentChange, seen: Seen, *, ratify: bool) -> object:
    """The command that reverts (or ratifies) `change` as shown; `seen` is its record as displayed (a tension's
    with both engrams). Refused at once when the record no longer reads as the change showed it."""
    if change.target == "engram":
        shown = _values(ENGRAM_FIELDS, change.after)
        if shown is None:
            raise ActionRefused(f"{change.id} is no longer in the store; nothing to ratify or revert")
        if ratify:
            return RatifyEngramChange(seen, change.kind, shown)
        before = _values(ENGRAM_FIELDS, change.before)
        return RevertEngramChange(seen, change.kind, shown, before, watch.read().baseline.extras.get(change.id))
    shown = _values(TENSION_FIELDS, change.after)
    record = watch.session.tension(change.id)
    if shown is None or record is None:
        raise ActionRefused(f"{change.id} is not in tensions.yaml")
    moved = [n for n, a, b in zip(TENSION_FIELDS, tension_values(record), shown, strict=True) if a != b]
    moved += seen.moved(tension_fingerprint(record))
    if moved:
        raise ChangedSinceError(change.id, sorted(set(moved)))
    if ratify:
        return _ratify_tension(watch, change, seen, shown)
    restore = _values(TENSION_FIELDS, change.before)
    if restore is None:
        raise ActionRefused(f"{change.id} was created by an agent: dismiss or resolve it in Tensions")
    if not change.also:
        return RevertTensionChange(seen, change.kind, shown, restore)
    loser = change.also[0]
    baseline = watch.read().baseline
    known, current = baseline.engrams.get(loser), watch.session.engram(loser)
    if known is None or current is None:
        raise ActionRefused(f"{loser} has no baseline values to restore")
    return RevertResolution(
        seen, change.kind, shown, restore, loser, engram_values(current), known, baseline.extras.get(loser)
    )


def _ratify_tension(watch: ChangeWatch, change: AgentChange, seen: Seen, shown: Values) -> RatifyTensionChange:
    """A resolution's ratification stamps its retired loser, whose retirement stands with it; any other stamps the
    tension's first engram as displayed (the engram PLUR's tension events name)."""
    if change.also:
        loser = change.also[0]
        side, current = seen.side(loser), watch.session.engram(loser)
        if side is None or current is None:
            raise ActionRefused(f"{loser}, the engram this resolution retired, is not in the store as listed")
        return RatifyTensionChange(side, change.id, change.kind, shown, engram_values(current))
    if not seen.sides:
        raise ActionRefused(f"neither engram of {change.id} is in the store: nothing to sign the ratification on")
    return RatifyTensionChange(seen.sides[0], change.id, change.kind, shown, None)


def _values(names: tuple[str, ...], values: dict[str, object] | None) -> Values | None:
    return None if values is None else tuple(values.get(n) for n in names)


def decide_group(
    session: ReviewSession, group: list[AgentChange], seen: Mapping[tuple[str, str], Seen], *, ratify: bool
) -> ChangeSet:
    """Every change of a group ratified (or reverted), with bulk approve's safety: one that moved on since it was
    listed is refused and named, and the others still go through. The engram changes go as one action (one write of
    engrams.yaml, one undo); when that one is refused (a record moved on disk since), each goes on its own."""
    done, refused = ChangeSet(), []
    ready: list[tuple[AgentChange, object]] = []  # engram changes as shown, each with its command
    for change in (c for c in group if c.target == "engram"):
        try:
            shown = seen.get((change.target, change.id))
            current = session.engram(change.id)
            if shown is None or current is None:
                raise ActionRefused("not in the store as listed")
            moved = shown.moved(engram_fingerprint(current))
            if moved:
                raise ChangedSinceError(change.id, moved)
            ready.append((change, command_for(session.watch, change, shown, ratify=ratify)))
        except PlurDeskError as exc:
            refused.append(f"{change.id}: {exc}")
    one_by_one = ready if len(ready) == 1 else []
    if len(ready) > 1:
        try:
            done = session.execute(EngramChanges(tuple(command for _c, command in ready)))  # type: ignore[misc]
        except PlurDeskError:
            one_by_one = ready
    one_by_one += [(c, None) for c in group if c.target == "tension"]
    for change, command in one_by_one:
        try:
            shown = seen.get((change.target, change.id))
            if shown is None:
                raise ActionRefused("not in the store as listed")
            done = done.merge(session.execute(command or command_for(session.watch, change, shown, ratify=ratify)))  # type: ignore[arg-type]
        except PlurDeskError as exc:
            refused.append(f"{change.id}: {exc}")
    past = "ratified" if ratify else "reverted"
    said = f"{past} {len(group) - len(refused)} of {len(group)} agent changes"
    return done.saying(said).warning([f"Not {past}: " + "; ".join(refused)] if refused else [])
