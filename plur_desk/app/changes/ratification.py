"""What a ratification or a revert of a listed agent change writes into the watched baseline, and which command
decides a change as shown: the baseline's own bookkeeping, below the watch (app/changes/watch.py) that calls it.

A ratification writes the values it let stand into the baseline as a `ratified` line, a revert the values it put back
as a `reverted` line; the undo of either writes the values the baseline held before it (so the agent's change is
listed again, not taken as the reviewer's), its redo the decision's values again. Every decision goes through the
journal and the undo history like any review decision (domain/agents/agent_change_commands.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from plur_desk.domain.agents.agent_change_commands import (
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
    Baseline,
    Values,
    engram_extras,
    engram_values,
    tension_values,
)
from plur_desk.domain.agents.baseline_lines import CLAIM_OF_ACTION
from plur_desk.domain.review import tension_fingerprint
from plur_desk.domain.seen import Seen
from plur_desk.infra.errors import ActionRefused, ChangedSinceError

if TYPE_CHECKING:
    from plur_desk.app.review.snapshot import Snapshot
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


def ratified_values(
    ratified: dict[int, tuple[object, Ratified]],
    baseline: Baseline,
    snapshot: Snapshot,
    step: tuple[object, object, bool],
    tables: Tables,
) -> tuple[str, Since | None]:
    """Put a ratification's or a revert's values (or, undoing it, the values before it) into the baseline line about
    to be written (`tables`, changed in place); returns the line's claim and, for an undo, the dates its records'
    values stand from again (the agent's events since then are listed behind the change once more). `step` is (command, operation, undoing);
    `ratified` keeps, by operation, what each ratification moved."""
    engrams, tensions, extras = tables
    command, op, undoing = step
    claim = CLAIM_OF_ACTION.get(str(getattr(command, "action", "")))
    if claim is not None:
        ratified[id(op)] = (op, _decided(baseline, snapshot, command, tables, claim))
    kept = ratified.get(id(op))
    done = kept[1] if kept is not None and kept[0] is op else None
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


def _decided(baseline: Baseline, snapshot: Snapshot, command: object, tables: Tables, claim: str) -> Ratified:
    """What the decision sets in the baseline, beside what the baseline held before it."""
    if claim == "ratified":
        stand_engrams, stand_tensions = command.stands()  # type: ignore[attr-defined]  # (a ratification: its action)
        now_extras = {}
        for ident in stand_engrams:
            current = snapshot.engrams.get(ident)
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


def command_for(change: AgentChange, seen: Seen, baseline: Baseline, snapshot: Snapshot, *, ratify: bool) -> object:
    """The command that reverts (or ratifies) `change` as shown; `seen` is its record as displayed (a tension's
    with both engrams), `baseline` the watched values. Refused at once when the record no longer reads as the change
    showed it."""
    if change.target == "engram":
        shown = _values(ENGRAM_FIELDS, change.after)
        if shown is None:
            raise ActionRefused(f"{change.id} is no longer in the store; nothing to ratify or revert")
        if ratify:
            return RatifyEngramChange(seen, change.kind, shown)
        before = _values(ENGRAM_FIELDS, change.before)
        return RevertEngramChange(seen, change.kind, shown, before, baseline.extras.get(change.id))
    shown = _values(TENSION_FIELDS, change.after)
    record = snapshot.tensions.get(change.id)
    if shown is None or record is None:
        raise ActionRefused(f"{change.id} is not in tensions.yaml")
    moved = [n for n, a, b in zip(TENSION_FIELDS, tension_values(record), shown, strict=True) if a != b]
    moved += seen.moved(tension_fingerprint(record))
    if moved:
        raise ChangedSinceError(change.id, sorted(set(moved)))
    if ratify:
        return _ratify_tension(snapshot, change, seen, shown)
    restore = _values(TENSION_FIELDS, change.before)
    if restore is None:
        raise ActionRefused(f"{change.id} was created by an agent: dismiss or resolve it in Tensions")
    if not change.also:
        return RevertTensionChange(seen, change.kind, shown, restore)
    loser = change.also[0]
    known, current = baseline.engrams.get(loser), snapshot.engrams.get(loser)
    if known is None or current is None:
        raise ActionRefused(f"{loser} has no baseline values to restore")
    return RevertResolution(
        seen, change.kind, shown, restore, loser, engram_values(current), known, baseline.extras.get(loser)
    )


def _ratify_tension(snapshot: Snapshot, change: AgentChange, seen: Seen, shown: Values) -> RatifyTensionChange:
    """A resolution's ratification stamps its retired loser, whose retirement stands with it; any other stamps the
    tension's first engram as displayed (the engram PLUR's tension events name)."""
    if change.also:
        loser = change.also[0]
        side, current = seen.side(loser), snapshot.engrams.get(loser)
        if side is None or current is None:
            raise ActionRefused(f"{loser}, the engram this resolution retired, is not in the store as listed")
        return RatifyTensionChange(side, change.id, change.kind, shown, engram_values(current))
    if not seen.sides:
        raise ActionRefused(f"neither engram of {change.id} is in the store: nothing to sign the ratification on")
    return RatifyTensionChange(seen.sides[0], change.id, change.kind, shown, None)


def _values(names: tuple[str, ...], values: dict[str, object] | None) -> Values | None:
    return None if values is None else tuple(values.get(n) for n in names)
