"""The contradiction checks of approvals, one after another in the order A was pressed. Every approval keeps its own
check and is decided when that check answers: a reviewer pressing A on the next draft while the last one is still
checked loses neither (the read pool shows only the newest read of a channel, and a second check on the same channel
dropped the first approval without a word). Run in order, the approvals' writes reach the session's lane in the order
they were asked for, and an undo held behind one of them (held_undo.py) lands behind the right write.

A newer approval of exactly the same drafts replaces the one still waiting or checked (a repeated A approves once).
An approval dropped for any other reason (its check cancelled, failed, or another store opened) is said in the status
bar; nothing is dropped silently."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from plur_desk.app.review.session import ReviewSession
from plur_desk.ui.review.held_undo import UndoBehindCheck
from plur_desk.ui.tensions.check_progress import PROGRESS_EVERY_S, CheckProgress, every
from plur_desk.ui.tensions.conflicts_support import Check, Checked
from plur_desk.ui.workspace import DECISION_CHECKS, Workspace

if TYPE_CHECKING:  # the dialog's class is made by PySide on its first import: with the first bulk check
    from PySide6.QtWidgets import QProgressDialog, QWidget


@dataclass(eq=False)
class Asked:
    """One approval asked for, waiting for its check: the drafts, the store, the check, and what its answer does
    (`decide` returns whether it approved, and whether the approval now waits for the reviewer's answer)."""

    ids: tuple[str, ...]
    session: ReviewSession
    check: Check
    decide: Callable[[Checked], tuple[bool, bool]]
    started: bool = False
    over: bool = False  # answered, failed or dropped: a late cancel (closing its progress) changes nothing
    progress: QProgressDialog | None = None

    def names(self) -> str:
        return ", ".join(self.ids[:3]) + (f" and {len(self.ids) - 3} more" if len(self.ids) > 3 else "")


def answered(result: Checked) -> Check:
    """The check of an approval whose answer is known already (read for the detail): it keeps its place in line."""

    def check(_ids: list[str], _progress: Callable[[int, int], None] | None) -> Checked:
        return result

    return check


class ApprovalChecks:
    def __init__(self, workspace: Workspace, held: UndoBehindCheck, dialog_parent: QWidget) -> None:
        self.workspace, self._held, self._parent = workspace, held, dialog_parent
        # a bulk approval's check, and its progress dialog (the check gives way to the window's repaints, which are
        # always marked: ui/common/repaint_marks.py)
        self._progress = CheckProgress(dialog_parent, workspace.jobs.pacing.window)
        self._queue: deque[Asked] = deque()  # in the order asked; the first one's check is the one running

    def ask(self, asked: Asked) -> None:
        for old in [a for a in self._queue if a.ids == asked.ids and not a.over]:
            self._drop(old, "")  # the same drafts asked again: the newer approval stands, the older is not made
        self._queue.append(asked)
        self._held.checking(asked, asked.session)
        self._next()

    def pending(self) -> int:
        return sum(not a.over for a in self._queue)

    def _next(self) -> None:
        """Start the first approval's check, unless one is under way (or being decided)."""
        while self._queue and not self._queue[0].started:
            asked = self._queue[0]
            if asked.session is not self.workspace.session:
                self._drop(asked, f"Another store was opened before {asked.names()} was checked; nothing was approved.")
                continue
            self._start(asked)

    def _start(self, asked: Asked) -> None:
        asked.started = True
        if len(asked.ids) > 1:
            asked.progress = self._progress.open(self._parent, len(asked.ids), lambda: self._cancelled(asked))
        emit = every(PROGRESS_EVERY_S, self._progress.changed.emit)
        ids, check = list(asked.ids), asked.check
        self.workspace.jobs.read(
            DECISION_CHECKS,
            lambda: check(ids, emit),
            lambda result: self._answered(asked, result),
            lambda error: self._failed(asked, error),
        )

    def _answered(self, asked: Asked, result: object) -> None:
        if asked.over:
            return
        asked.over = True
        self._progress.close(asked.progress)
        approved = waits = False
        try:
            assert isinstance(result, Checked)
            if asked.session is not self.workspace.session:
                self.workspace.messages.status(
                    f"Another store was opened while {asked.names()} was checked; nothing was approved.", 8000
                )
            else:
                approved, waits = asked.decide(result)
        finally:
            self._finish(asked, approved, waits)

    def _failed(self, asked: Asked, error: Exception) -> None:
        if not asked.over:
            self._drop(asked, f"Contradiction check failed; {asked.names()} was not approved: {error}")

    def _cancelled(self, asked: Asked) -> None:
        if not asked.over:
            self._drop(asked, f"Contradiction check cancelled; {asked.names()} was not approved.")

    def _drop(self, asked: Asked, said: str) -> None:
        """The approval is not made: its check (if running) is cancelled, and the reviewer told why (`said`)."""
        if asked.started and not asked.over:
            self.workspace.jobs.cancel(DECISION_CHECKS)  # its answer will not be shown
        asked.over = True
        self._progress.close(asked.progress)
        if said:
            self.workspace.messages.status(said, 8000)
        self._finish(asked, False, False)

    def _finish(self, asked: Asked, approved: bool, waits: bool) -> None:
        if asked in self._queue:
            self._queue.remove(asked)
        self._held.ended(asked, approved, waits)  # an undo pressed meanwhile runs behind its write, or is refused
        self._next()
