"""Ratify and Revert of an agent change, as review commands (the shapes of domain/commands.py): journaled, signed,
undoable, and refused when the record no longer reads as the change showed it (`shown`: its watched values then).

Revert puts the baseline's values back: a promoted draft is a draft again, a rewritten statement (and its content
hash) restored, a retired engram active, a pin undone; an engram an agent created straight as active becomes a
draft, so it waits in the queue like any other. A tension an agent settled is set back to its baseline status, and a
resolution's retired loser restored with it. Ratify lets the change stand: a signed event, and the record's values
join the baseline (app/changes.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from plur_desk.domain import review
from plur_desk.domain.agent_changes import ENGRAM_FIELDS, TENSION_FIELDS, Values, engram_values, tension_values
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
from plur_desk.domain.derived import generate_summary
from plur_desk.domain.seen import Seen
from plur_desk.infra.clock import iso_ms
from plur_desk.infra.errors import ActionRefused, ChangedSinceError


def _as_shown(ident: str, names: tuple[str, ...], now: Values, shown: Values) -> None:
    moved = [n for n, a, b in zip(names, now, shown, strict=True) if a != b]
    if moved:
        raise ChangedSinceError(ident, moved)


def _plain(value: object) -> object:
    return value if value is None or isinstance(value, (str, bool, int, float)) else str(value)


def restore_engram(engram: Record, restore: Values) -> dict[str, dict[str, object]]:
    """Set the engram's watched fields to `restore`; returns the fields set, from -> to."""
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
            moved = restore_engram(engram, self.restore)
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
    action: ClassVar[str] = "revert_agent_change"
    event: ClassVar[str] = "revert_agent_change"

    def label(self) -> str:
        return f"reopen {self.seen.id} and restore {self.loser}"

    def engram_steps(self, record: Mapping[str, object], lookup: Lookup, ctx: Context) -> EngramSteps:
        ident, shown, restore = self.loser, self.loser_shown, self.loser_restore

        def put_back(engram: Record) -> tuple[Record, Events]:
            _as_shown(ident, ENGRAM_FIELDS, engram_values(engram), shown)
            moved = restore_engram(engram, restore)
            engram["updated_at"] = iso_ms(ctx.now)
            data = {"action": "revert_agent_change", "kind": self.kind, "tension_id": self.seen.id, "fields": moved}
            return engram, [review.make_event("engram_updated", ident, ctx.now, data, ctx.reviewer)]

        return EngramSteps(((ident, put_back),), (ident,), {"kind": self.kind, "restored": ident})

    def decide(self, record: Record, ctx: Context) -> Record:
        return _restore_record(record, self.seen.id, self.shown, self.restore)
