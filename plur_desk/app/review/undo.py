"""Undo history: the session's done and undone operations (bounded), and what replaying one writes.

An undo is not a rewind: it is a new audited forward change (`data.action: "undo"`, `data.undos: <action>`) that
applies the operation's patches backwards, refused when a field no longer holds the value the action left there;
redo applies them forwards again the same way.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime

from plur_desk.domain import review
from plur_desk.domain.lint import redact_credentials
from plur_desk.domain.plur_rules.rekey import Renames
from plur_desk.domain.review import Operation, Patch, Reviewer, engram_fingerprint
from plur_desk.infra.errors import ActionRefused

UNDO_LIMIT = 200  # operations kept; the oldest is forgotten first (its events stay in history)

Apply = Callable[[dict[str, object]], tuple[dict[str, object], list[dict[str, object]]]]


@dataclass(frozen=True)
class UndoIntent:
    """An undo or redo as the reviewer asked for it, at the key press: the operation on top then (`exact`: nothing
    was being written), or, when actions asked for before it are still being written, whatever is on top once they
    are, provided none of them failed (else the undo would take back an earlier action than the one meant)."""

    top: Operation | None
    failures: int
    exact: bool


class UndoHistory:
    def __init__(self, limit: int = UNDO_LIMIT) -> None:
        self._undo: deque[Operation] = deque(maxlen=limit)
        self._redo: deque[Operation] = deque(maxlen=limit)
        self.failures = 0  # actions, undos and redos that were refused or failed (`UndoIntent`)

    def intent(self, redo: bool, exact: bool) -> UndoIntent:
        stack = self._redo if redo else self._undo
        return UndoIntent(stack[-1] if stack else None, self.failures, exact)

    def check(self, intent: UndoIntent | None, op: Operation, verb: str) -> None:
        """Refuse an undo or redo that would not take back (or redo) the action the reviewer meant."""
        if intent is None:
            return
        if self.failures != intent.failures:
            raise ActionRefused(f"an action asked for before this {verb} was not written; nothing was {verb}ne")
        if intent.exact and op is not intent.top:
            raise ActionRefused(f"the action to {verb} changed since you asked; nothing was {verb}ne")

    def done(self, op: Operation) -> None:
        """A new action: it can be undone, and what was undone before can no longer be redone."""
        self._undo.append(op)
        self._redo.clear()

    @property
    def can_undo(self) -> bool:
        return bool(self._undo)

    @property
    def can_redo(self) -> bool:
        return bool(self._redo)

    def undo_label(self) -> str:
        return self._undo[-1].label if self._undo else ""

    def redo_label(self) -> str:
        return self._redo[-1].label if self._redo else ""

    def next_undo(self) -> Operation:
        if not self._undo:
            raise ActionRefused("nothing to undo")
        return self._undo[-1]

    def next_redo(self) -> Operation:
        if not self._redo:
            raise ActionRefused("nothing to redo")
        return self._redo[-1]

    def undone(self) -> None:
        """The last operation was undone (only once its replay was written)."""
        self._redo.append(self._undo.pop())

    def redone(self) -> None:
        self._undo.append(self._redo.pop())


def undo_patches(op: Operation) -> list[Patch]:
    return [p.reversed() for p in reversed(op.patches)]


def replay_edit(patch: Patch, op: Operation, verb: str, reviewer: Reviewer, now: datetime) -> Apply:
    """The edit that applies `patch` to its record, with the event saying it is an undo (or redo) of `op`."""

    def apply(value: dict[str, object]) -> tuple[dict[str, object], list[dict[str, object]]]:
        new = patch.apply(value)
        fields = {k: {"from": _plain(old), "to": _plain(after)} for k, old, after in patch.changes}
        data = {"action": verb, verb + "s": op.action, "label": op.label, "fields": fields}
        if patch.file == "engrams":
            kind = "engram_retired" if new.get("status") == "retired" and "status" in fields else "engram_updated"
            return new, [review.make_event(kind, patch.key, now, data, reviewer)]
        engram = str(new.get("engram_a"))
        return new, [review.make_event("tension_reviewed", engram, now, {**data, "tension_id": patch.key}, reviewer)]

    return apply


def _plain(value: object) -> object:
    """A field's value as the event records it: a credential-like string never enters history by an undo either."""
    if isinstance(value, str):
        return redact_credentials(value)
    return None if value is review.ABSENT else value


def file_groups(patches: list[Patch]) -> list[tuple[str, list[Patch]]]:
    """Consecutive patches of the same file: one write step each, in order."""
    groups: list[tuple[str, list[Patch]]] = []
    for patch in patches:
        if groups and groups[-1][0] == patch.file:
            groups[-1][1].append(patch)
        else:
            groups.append((patch.file, [patch]))
    return groups


def followed(
    patch: Patch, prints: Mapping[str, dict[str, object]], engrams: Mapping[str, dict[str, object]], renames: Renames
) -> tuple[Patch, dict[str, object] | None]:
    """The patch and the print it is guarded by, on the engram PLUR 0.21 renamed since the action (a duplicate id,
    `engram_rekeyed`): the action's engram now reads under its new id as the action left it, while its old id, if
    still there, is another copy's. Otherwise as it was (a real change since is refused as such)."""
    key = f"{patch.file}/{patch.key}"
    later = renames.later(patch.key, engrams) if patch.file == "engrams" else None
    if later is None:
        return patch, prints.get(key)
    printed = prints.get(f"engrams/{later}", prints.get(key))
    now, before = engrams.get(patch.key), engrams[later]
    left_here = printed is not None and now is not None and engram_fingerprint(now) == printed
    if printed is None or left_here or engram_fingerprint(before) != printed:
        return patch, prints.get(key)
    return replace(patch, key=later), printed
