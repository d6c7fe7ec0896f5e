"""The tensions controller: the four outcomes of a tension (confirm, dismiss, keep one side, split in time), each
on the tension the pane displays, only while that pane is on screen."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QWidget

from plur_desk.app.review.rows import TensionRow
from plur_desk.domain.engram_view import split_order
from plur_desk.domain.seen import Seen
from plur_desk.ui.tensions.tensions_pane import TensionsPane
from plur_desk.ui.workspace import Workspace


class TensionsController(QObject):
    def __init__(self, workspace: Workspace, pane: TensionsPane, on_screen: Callable[[QWidget], bool]) -> None:
        super().__init__(workspace)
        self.workspace = workspace
        self.pane = pane
        self._on_screen = on_screen
        pane.commit_requested.connect(self.commit_pending)

    def _displayed(self) -> tuple[TensionRow, Seen] | None:
        return self.pane.displayed() if self._on_screen(self.pane) else None

    def confirm_tension(self) -> None:
        session, displayed = self.workspace.session, self._displayed()
        if displayed and session:
            seen = displayed[1]
            from plur_desk.domain.commands import ConfirmTension  # loaded with the first decision, not at launch

            self.workspace.change(lambda: session.execute(ConfirmTension(seen)))

    def dismiss_tension(self) -> None:
        session, displayed = self.workspace.session, self._displayed()
        if not (displayed and session):
            return
        row, seen = displayed
        from plur_desk.ui.common.dialogs import ReasonDialog  # dialogs load on first use, after the first draft

        dialog = ReasonDialog(
            f"Dismiss {row.id}",
            "Why is this not a real conflict? (optional) PLUR will not raise this pair again.",
            [],
            self.pane,
            ok_text="Dismiss",
            required=False,
        )
        if dialog.exec() == ReasonDialog.DialogCode.Accepted:
            reason = dialog.reason
            from plur_desk.domain.commands import DismissTension

            self.workspace.change(lambda: session.execute(DismissTension(seen, reason)))

    def keep_left(self) -> None:
        self._preview(keep_right=False)

    def keep_right(self) -> None:
        self._preview(keep_right=True)

    def _preview(self, keep_right: bool) -> None:
        displayed = self._displayed()
        if displayed is None:
            return
        row, seen = displayed
        a, b = (row.engram_a, row.statement_a), (row.engram_b, row.statement_b)
        (winner, kept), (loser, retired) = (b, a) if keep_right else (a, b)
        self.pane.show_preview(seen, winner, loser, (kept, retired))

    def commit_pending(self) -> None:
        session, pending = self.workspace.session, self.pane.pending
        if pending is None or session is None or not self._on_screen(self.pane):
            return
        seen, winner = pending
        self.pane.cancel_pending()
        from plur_desk.domain.commands import ResolveTension

        self.workspace.change(lambda: session.execute(ResolveTension(seen, winner)))

    def split_tension(self) -> None:
        session, displayed = self.workspace.session, self._displayed()
        if not (displayed and session):
            return
        row, seen = displayed
        a, b = session.view(row.engram_a), session.view(row.engram_b)
        if a is None or b is None:
            self.workspace.messages.error(f"Both engrams of {row.id} must be in the store to split it in time.")
            return
        earlier, later = split_order(a, b)  # the order the split will write
        from PySide6.QtCore import QDate  # the dialog's classes: on first use, not at launch
        from PySide6.QtWidgets import QDialog

        from plur_desk.ui.tensions.split_dialog import SplitDialog

        now = self.workspace.clock.now()
        dialog = SplitDialog(earlier, later, self.pane, QDate(now.year, now.month, now.day))
        if dialog.exec() == QDialog.DialogCode.Accepted:
            at = dialog.iso
            from plur_desk.domain.commands import SplitInTime

            self.workspace.change(lambda: session.execute(SplitInTime(seen, at)))
