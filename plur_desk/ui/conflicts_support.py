"""Contradictions in the window: the finder is built in the background after every change; the draft detail says
"Approving this may contradict …", and approving (or saving an edit) asks once when a candidate is above the
threshold. Until the finder is ready nothing is shown and nothing is asked."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from plur_desk.app.conflict_service import ConflictService, ConflictWarning
from plur_desk.app.conflicts import Vectors
from plur_desk.ui.runner import Runner

if TYPE_CHECKING:
    from plur_desk.ui.main_window import MainWindow

    _Base = MainWindow
else:
    _Base = object


class ConflictsMixin(_Base):
    conflict_service: ConflictService | None = None

    def _init_conflicts(self) -> None:
        self.conflict_runner = Runner(self)  # never queues behind a write, never delays one
        self.conflict_service = None

    def start_conflicts(self) -> None:
        """(Re)build the finder over the session as it is now; the old one answers until the new one is ready."""
        session = self.session
        if session is None:
            return

        def vectors() -> Vectors | None:
            service = self.search_service
            if service is None or not service.vectors.vectors:
                return None
            embedder = service.embedder()
            return Vectors(service.vectors.vectors, embedder.embed if embedder is not None else None)

        self.conflict_runner.submit(
            lambda: ConflictService(session, vectors).rebuild(), self._conflicts_built, self._conflicts_failed
        )

    def _conflicts_built(self, service: object) -> None:
        assert isinstance(service, ConflictService)
        if service.session is self.session:
            self.conflict_service = service
            self._draft_selected()

    def _conflicts_failed(self, error: Exception) -> None:
        self.conflict_service = None
        self.statusBar().showMessage(f"Contradiction check unavailable: {error}", 8000)

    def conflicts_for(self, engram_id: str, statement: str | None = None) -> list[ConflictWarning]:
        service = self.conflict_service
        if service is None or service.session is not self.session:
            return []
        return service.warnings_for(engram_id, statement)

    def confirm_despite_conflicts(self, ids: list[str], statement: str | None = None, verb: str = "Approve") -> bool:
        """Ask once for the whole selection when any draft may contradict an engram; True to go ahead."""
        found = [(i, w) for i in ids for w in self.conflicts_for(i, statement)]
        if not found:
            return True
        lines = [f"• {engram_id} may contradict {w.text()}" for engram_id, w in found[:6]]
        if len(found) > 6:
            lines.append(f"… and {len(found) - 6} more")
        box = QMessageBox(self)
        box.setObjectName("conflictConfirm")
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("Possible contradiction")
        box.setTextFormat(Qt.TextFormat.PlainText)  # agent-written statements are data, never markup
        box.setText(f"{verb} anyway? This may contradict what the store already says:\n\n" + "\n".join(lines))
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.setDefaultButton(QMessageBox.StandardButton.No)
        go = box.button(QMessageBox.StandardButton.Yes)
        go.setText(f"{verb} anyway")
        box.exec()
        self.activateWindow()  # keys go back to the queue, whichever way the question was answered
        self.drafts.focus_queue()
        return box.clickedButton() is go
