"""Ratify and Revert of an agent change, as review commands (the shapes of domain/commands.py): journaled, signed,
undoable, and refused when the record no longer reads as the change showed it (`shown`: its watched values then).

Revert puts the baseline's values back: a promoted draft is a draft again, a rewritten statement (and its content
hash) restored, a retired engram active, a pin undone; an engram an agent created straight as active becomes a
draft, so it waits in the queue like any other. A tension an agent settled is set back to its baseline status, and a
resolution's retired loser restored with it. Ratify lets the change stand: a signed event, and the record's values
join the baseline (app/changes/watch.py).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from plur_desk.domain import review
from plur_desk.domain.agents.agent_changes import (
    ENGRAM_FIELDS,
    RESTORE_FIELDS,
    TENSION_FIELDS,
    Values,
    engram_values,
    tension_values,
)
from plur_desk.domain.commands import (
    Context,
    EngramCommand,
    EngramSteps,
    Events,
    Lookup,
    Record,
    TensionCommand,
    TwoFileCommand,
)
from plur_desk.domain.lint import redact_credentials
from plur_desk.domain.plur_rules.derived import generate_summary
from plur_desk.domain.seen import Seen
from plur_desk.infra.clock import iso_ms
from plur_desk.infra.errors import ActionRefused, ChangedSinceError


def _as_shown(ident: str, names: tuple[str, ...], now: Values, shown: Values) -> None:
    moved = [n for n, a, b in zip(names, now, shown, strict=True) if a != b]
    if moved:
        raise ChangedSinceError(ident, moved)


def _plain(value: object) -> object:
    """A value as the decision's event records it: a credential-like string never enters history (as in an undo's
    event, app/review/undo.py), whatever text an agent put back or moved."""
    if isinstance(value, str):
        return redact_credentials(value)
    return value if value is None or isinstance(value, (bool, int, float)) else redact_credentials(str(value))


_ABSENT = object()


def _json(value: object) -> object:
    """A restored field's value as an event records it (absent reads as null)."""
    if value is _ABSENT:
        return None
    return value if isinstance(value, (dict, list)) else _plain(value)


def restore_engram(
    engram: Record, restore: Values, extras: Mapping[str, object] | None = None
) -> dict[str, dict[str, object]]:
    """Set the engram's watched fields to `restore`, and its `RESTORE_FIELDS` to `extras` when the baseline holds
    them (a field absent there is removed); returns the fields set, from -> to."""
    now = dict(zip(ENGRAM_FIELDS, engram_values(engram), strict=True))
    target = dict(zip(ENGRAM_FIELDS, restore, strict=True))
    moved = {k: {"from": _plain(now[k]), "to": _plain(target[k])} for k in ENGRAM_FIELDS if now[k] != target[k]}
    for key in moved:
        value = target[key]
        if key in ("valid_from", "valid_until"):
            old = engram.get("temporal")
            temporal: dict[str, object] = dict(old) if isinstance(old, dict) else {}
            if value is None:
                temporal.pop(key, None)
            else:
                temporal[key] = value
            if temporal:
                engram["temporal"] = temporal
            else:
                engram.pop("temporal", None)
        elif key == "pinned" and not value:
            engram.pop("pinned", None)
        else:
            engram[key] = value
    if extras is not None:
        for key in RESTORE_FIELDS:
            was, want = engram.get(key, _ABSENT), extras.get(key, _ABSENT)
            if was != want:
                moved[key] = {"from": _json(was), "to": _json(want)}
                if want is _ABSENT:
                    engram.pop(key, None)
                else:
                    engram[key] = copy.deepcopy(want)
    if "statement" in moved:
        summary = generate_summary(str(target["statement"]))
        if summary is not None:
            engram["summary"] = summary
        else:
            engram.pop("summary", None)
    return moved


@dataclass(frozen=True)
class RevertEngramChange(EngramCommand):
    """Put an engram back to its baseline values (`restore`; None: it was created straight as active, and becomes a
    draft)."""

    seen: Seen
    kind: str
    shown: Values
    restore: Values | None
    extras: Mapping[str, object] | None = None  # the baseline's RESTORE_FIELDS (None: it holds none)
    action: ClassVar[str] = "revert_agent_change"

    def targets(self) -> tuple[Seen, ...]:
        return (self.seen,)

    def label(self) -> str:
        return f"revert {self.kind.replace('_', ' ')} of {self.seen.id}"

    def apply(self, engram: Record, ctx: Context) -> tuple[Record, Events]:
        _as_shown(self.seen.id, ENGRAM_FIELDS, engram_values(engram), self.shown)
        if self.restore is None:
            if engram.get("commitment") == "draft":
                raise ActionRefused(f"{self.seen.id} is a draft already")
            moved = {"commitment": {"from": engram.get("commitment"), "to": "draft"}}
            engram["commitment"] = "draft"
        else:
            moved = restore_engram(engram, self.restore, self.extras)
        if not moved:
            raise ActionRefused(f"{self.seen.id} already holds its baseline values")
        engram["updated_at"] = iso_ms(ctx.now)
        kind = "engram_retired" if moved.get("status", {}).get("to") == "retired" else "engram_updated"
        data = {"action": "revert_agent_change", "kind": self.kind, "fields": moved}
        return engram, [review.make_event(kind, self.seen.id, ctx.now, data, ctx.reviewer)]


@dataclass(frozen=True)
class RatifyEngramChange(EngramCommand):
    """Let an agent's change to an engram stand: its values as shown join the baseline, with a signed event."""

    seen: Seen
    kind: str
    shown: Values
    action: ClassVar[str] = "ratify_agent_change"

    def targets(self) -> tuple[Seen, ...]:
        return (self.seen,)

    def label(self) -> str:
        return f"ratify {self.kind.replace('_', ' ')} of {self.seen.id}"

    def apply(self, engram: Record, ctx: Context) -> tuple[Record, Events]:
        _as_shown(self.seen.id, ENGRAM_FIELDS, engram_values(engram), self.shown)
        engram["updated_at"] = iso_ms(ctx.now)  # the decision's own mark: what it let stand is what it saw
        values = {k: _plain(v) for k, v in zip(ENGRAM_FIELDS, self.shown, strict=True)}
        data = {"action": "ratify_agent_change", "kind": self.kind, "values": values}
        return engram, [review.make_event("engram_updated", self.seen.id, ctx.now, data, ctx.reviewer)]

    def stands(self) -> tuple[dict[str, Values], dict[str, Values]]:
        """The values this ratification lets stand (engrams, tensions): they join the baseline."""
        return {self.seen.id: self.shown}, {}


@dataclass(frozen=True)
class RatifyTensionChange(EngramCommand):
    """Let an agent's decision on a tension stand. tensions.yaml keeps no field a reviewer could mark (PLUR strips
    unknown keys on tension records), so the signed event is carried by one of its engrams (`seen`): the loser a
    resolution retired, whose retirement stands with it (`loser_shown`: its values as shown), or else the tension's
    first engram; that engram's `updated_at` is the decision's mark, as for an engram's ratification. The tension's
    own record is checked against what was shown before the command is made (app/changes/change_decisions.py), and the
    baseline takes the values shown, so a move since is listed again rather than ratified unseen."""

    seen: Seen
    tension: str
    kind: str
    shown: Values
    loser_shown: Values | None
    action: ClassVar[str] = "ratify_agent_change"

    def targets(self) -> tuple[Seen, ...]:
        return (self.seen,)

    def label(self) -> str:
        return f"ratify {self.kind.replace('_', ' ')} of {self.tension}"

    def apply(self, engram: Record, ctx: Context) -> tuple[Record, Events]:
        if self.loser_shown is not None:
            _as_shown(self.seen.id, ENGRAM_FIELDS, engram_values(engram), self.loser_shown)
        engram["updated_at"] = iso_ms(ctx.now)
        data = {
            "action": "ratify_agent_change",
            "kind": self.kind,
            "tension_id": self.tension,
            "to": self.shown[0],
            "values": {k: _plain(v) for k, v in zip(TENSION_FIELDS, self.shown, strict=True)},
        }
        return engram, [review.make_event("engram_updated", self.seen.id, ctx.now, data, ctx.reviewer)]

    def stands(self) -> tuple[dict[str, Values], dict[str, Values]]:
        engrams = {self.seen.id: self.loser_shown} if self.loser_shown is not None else {}
        return engrams, {self.tension: self.shown}


def _restore_record(record: Record, ident: str, shown: Values, restore: Values) -> Record:
    _as_shown(ident, TENSION_FIELDS, tension_values(record), shown)
    status, winner = restore
    record["status"] = status
    record["resolved_by"] = winner
    if winner is None and "resolved_at" in record:
        record["resolved_at"] = None
    return record


@dataclass(frozen=True)
class RevertTensionChange(TensionCommand):
    """Set a tension an agent confirmed or dismissed back to its baseline status."""

    seen: Seen
    kind: str
    shown: Values
    restore: Values
    action: ClassVar[str] = "revert_agent_change"
    event: ClassVar[str] = "revert_agent_change"

    def label(self) -> str:
        return f"revert {self.kind.replace('_', ' ')} of {self.seen.id}"

    def decide(self, record: Record, ctx: Context) -> Record:
        return _restore_record(record, self.seen.id, self.shown, self.restore)

    def event_fields(self) -> dict[str, object]:
        return {"kind": self.kind}


@dataclass(frozen=True)
class RevertResolution(TwoFileCommand):
    """Reopen a tension an agent resolved and restore the loser it retired (PLUR's order: the record, then the
    engram)."""

    seen: Seen
    kind: str
    shown: Values
    restore: Values
    loser: str
    loser_shown: Values
    loser_restore: Values
    loser_extras: Mapping[str, object] | None = None
    action: ClassVar[str] = "revert_agent_change"
    event: ClassVar[str] = "revert_agent_change"

    def label(self) -> str:
        return f"reopen {self.seen.id} and restore {self.loser}"

    def engram_steps(self, record: Mapping[str, object], lookup: Lookup, ctx: Context) -> EngramSteps:
        ident, shown, restore = self.loser, self.loser_shown, self.loser_restore

        def put_back(engram: Record) -> tuple[Record, Events]:
            _as_shown(ident, ENGRAM_FIELDS, engram_values(engram), shown)
            moved = restore_engram(engram, restore, self.loser_extras)
            engram["updated_at"] = iso_ms(ctx.now)
            data = {"action": "revert_agent_change", "kind": self.kind, "tension_id": self.seen.id, "fields": moved}
            return engram, [review.make_event("engram_updated", ident, ctx.now, data, ctx.reviewer)]

        return EngramSteps(((ident, put_back),), (ident,), {"kind": self.kind, "restored": ident})

    def decide(self, record: Record, ctx: Context) -> Record:
        return _restore_record(record, self.seen.id, self.shown, self.restore)


@dataclass(frozen=True)
class EngramChanges(EngramCommand):
    """Many engram changes of one group ratified (or reverted) as one action: one write of engrams.yaml and one undo,
    each engram still checked as it was shown and given its own signed event. Every part has the same `action`."""

    parts: tuple[RatifyEngramChange | RevertEngramChange, ...]

    @property
    def action(self) -> str:  # type: ignore[override]
        return self.parts[0].action

    def targets(self) -> tuple[Seen, ...]:
        return tuple(part.seen for part in self.parts)

    def label(self) -> str:
        verb = "ratify" if self.action == "ratify_agent_change" else "revert"
        return f"{verb} {len(self.parts)} agent changes"

    def apply(self, engram: Record, ctx: Context) -> tuple[Record, Events]:
        part = {p.seen.id: p for p in self.parts}.get(str(engram.get("id")))
        if part is None:
            raise ActionRefused(f"{engram.get('id')} is not one of the changes decided")
        return part.apply(engram, ctx)

    def stands(self) -> tuple[dict[str, Values], dict[str, Values]]:
        engrams: dict[str, Values] = {}
        for part in self.parts:
            if isinstance(part, RatifyEngramChange):
                engrams.update(part.stands()[0])
        return engrams, {}
