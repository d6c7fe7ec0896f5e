"""The validity controller: Edit Window (W) and Expire Now (X) on the rows the Validity pane lists."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QWidget

from plur_desk.domain.plur_rules.validity import Window
from plur_desk.ui.validity.validity_pane import ValidityPane
from plur_desk.ui.workspace import Workspace


class ValidityController(QObject):
    """Edit Window (W) and Expire Now (X) on the rows the Validity pane lists, only while it is on screen."""

    def __init__(self, workspace: Workspace, pane: ValidityPane, on_screen: Callable[[QWidget], bool]) -> None:
        super().__init__(workspace)
        self.workspace = workspace
        self.pane = pane
        self._on_screen = on_screen

    def edit_validity(self) -> None:
        session, row = self.workspace.session, self.pane.current_row()
        if session is None or row is None or not self._on_screen(self.pane):
            return
        from PySide6.QtCore import QDate  # the dialog's classes: on first use, not at launch
        from PySide6.QtWidgets import QDialog

        from plur_desk.ui.validity.window_dialog import WindowDialog

        now = self.workspace.clock.now()
        window = Window(row.valid_from or None, row.valid_until or None)
        dialog = WindowDialog(row.id, window, self.pane, QDate(now.year, now.month, now.day))
        if dialog.exec() == QDialog.DialogCode.Accepted:
            start, end = dialog.value("valid_from"), dialog.value("valid_until")
            from plur_desk.domain.commands import SetValidity  # loaded with the first decision, not at launch

            self.workspace.change(lambda: session.execute(SetValidity((row.seen,), start, end)))

    def expire_now(self) -> None:
        session = self.workspace.session
        rows = self.pane.selected_rows() if self._on_screen(self.pane) else []
        if session is not None and rows:
            seen = [r.seen for r in rows]
            from plur_desk.domain.commands import ExpireNow

            self.workspace.change(lambda: session.execute(ExpireNow(tuple(seen))))
