"""ChangeSet: what one action or reload changed, by id, so panes refresh only that (frozen: built once, read by all).
It is also the event the window publishes once per change (`plur_desk.app.broadcast`): its `kind` says where the
change came from, and each subscriber decides from it what to show again."""

from __future__ import annotations

from collections.abc import Callable, Iterable
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


# What a decision did, in words for the status bar: the verb in the past tense and the statement it was about. The
# label of an operation ("approve ENG-2026-12-02-011 as decided") is what history records; a person reads the
# statement, so the message names it, and says how to take it back.
DONE = {
    "approve": "Approved",
    "reject": "Rejected",
    "edit": "Edited",
    "set_validity": "Validity set",
    "expire_now": "Expired",
    "settle_duplicates": "Duplicates settled",
    "settle_disagreement": "Disagreement settled",
    "supersede": "Superseded",
    "confirm_tension": "Contradiction confirmed",
    "dismiss_tension": "Contradiction dismissed",
    "resolve_tension": "Contradiction resolved",
    "split_in_time": "Split in time",
    "settle_two_winners": "Both kept",
    "record_tension": "Contradiction recorded",
}
UNDO_HINT = "Ctrl+Z undoes"


def quoted(statement: object, limit: int = 90) -> str:
    text = " ".join(str(statement).split())  # one line in a status bar
    return f"“{text if len(text) <= limit else text[: limit - 1] + '…'}”"


def said(
    action: str,
    label: str,
    ids: Iterable[str],
    statement_of: Callable[[str], object],
    verb: str = "",
) -> str:
    """`Approved: “…”` (and how many more), or for an undo/redo `Undone: approve “…”`; the label when no statement
    is known (a tension alone)."""
    ids = sorted(ids)
    statements = [s for i in ids if (s := statement_of(i))]
    what = quoted(statements[0]) if statements else label
    more = f" and {len(statements) - 1} more" if len(statements) > 1 else ""
    if verb:
        head = {"undo": "Undone", "redo": "Redone"}.get(verb, verb.capitalize())
        return f"{head}: {action.replace('_', ' ')} of {what}{more}"
    return f"{DONE.get(action, action.replace('_', ' ').capitalize())}: {what}{more} — {UNDO_HINT}"
