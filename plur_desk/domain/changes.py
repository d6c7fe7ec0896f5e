"""ChangeSet: what one action or reload changed, by id, so panes refresh only that (frozen: built once, read by all).
It is also the event the window publishes once per change (`plur_desk.app.broadcast`): its `kind` says where the
change came from, and each subscriber decides from it what to show again."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Literal

# Where a change came from. By the reviewer: "decided" (any write the window asked for), "undone", "redone". Read
# from disk: "reloaded" (PLUR changed a file), "reread" (the reviewer asked to read the store again), "synced" (read
# again after a sync with the team). "refreshed": the whole store shown afresh (a store opened, a write half done).
# "reshown": the same store shown again differently (the queue's order or filter, the theme); nothing in it changed.
Kind = Literal["decided", "undone", "redone", "reloaded", "reread", "synced", "refreshed", "reshown"]
BY_REVIEWER: frozenset[Kind] = frozenset({"decided", "undone", "redone"})
READ_AGAIN: frozenset[Kind] = frozenset({"reloaded", "reread", "synced"})


@dataclass(frozen=True)
class ChangeSet:
    """What one change touched (engrams, tensions, events), what kind it was and what to tell the reviewer."""

    engrams: frozenset[str] = frozenset()
    tensions: frozenset[str] = frozenset()
    events: int = 0
    reloaded: bool = False
    warnings: tuple[str, ...] = ()
    message: str = ""
    kind: Kind = "decided"

    @property
    def by_reviewer(self) -> bool:
        """A write the window asked for (a decision, an undo, a redo, a ratified change…)."""
        return self.kind in BY_REVIEWER

    @property
    def read_again(self) -> bool:
        """Files read again from disk (PLUR's change, a reload asked for, a sync)."""
        return self.kind in READ_AGAIN

    @property
    def afresh(self) -> bool:
        """Every pane shown afresh, whatever the ids (a reload asked for, a sync, a store opened, a new order)."""
        return self.kind not in BY_REVIEWER and self.kind != "reloaded"

    @property
    def store_changed(self) -> bool:
        """Whether what the store holds may differ (not only how it is shown)."""
        return self.kind != "reshown"

    def merge(self, other: ChangeSet) -> ChangeSet:
        """Both changes together (this one's message kept)."""
        return replace(
            self,
            engrams=self.engrams | other.engrams,
            tensions=self.tensions | other.tensions,
            events=self.events + other.events,
            reloaded=self.reloaded or other.reloaded,
            warnings=self.warnings + other.warnings,
        )

    def saying(self, message: str) -> ChangeSet:
        return replace(self, message=message)

    def as_kind(self, kind: Kind) -> ChangeSet:
        return replace(self, kind=kind)

    def warning(self, lines: Iterable[str]) -> ChangeSet:
        return replace(self, warnings=self.warnings + tuple(lines))
