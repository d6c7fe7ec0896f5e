"""The window's message area: the banner above the panes (notes, refusals) and the status bar's passing messages."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QLabel, QPushButton, QStatusBar

from plur_desk.ui.common.widgets import shorten_long_words


class Messages(QObject):
    """What the window tells the reviewer. A refusal (error) stays until the reviewer moves to another pane; the
    sticky note (a read-only store, a demo copy) is shown with every message until another store is opened."""

    error_shown = Signal(str)

    def __init__(self, banner: QLabel, status_bar: QStatusBar, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.banner = banner
        banner.setObjectName("banner")
        banner.setWordWrap(True)
        banner.setAccessibleName("Messages")
        banner.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        banner.hide()
        self.status_bar = status_bar
        self.undo_button: QPushButton | None = None
        self.sticky_note = ""
        self._error = ""

    def show(self, text: str) -> None:
        self._error = ""
        text = "\n".join(t for t in (self.sticky_note, text) if t)
        self.banner.setText(shorten_long_words(text))
        self.banner.setVisible(bool(text))

    def error(self, text: str) -> None:
        self.show("✖ " + text)
        self._error = text
        self.status(text, 8000)
        self.error_shown.emit(text)

    def clear_refusal(self) -> None:
        """Take a refusal (error) off the banner; other notes stay."""
        if self._error:
            self.show("")

    def status(self, text: str, msecs: int = 0) -> None:
        self.status_bar.showMessage(text, msecs)

    def offer_undo(self, undo: QAction) -> None:
        """An Undo button beside the status bar's message ("Approved: …"), there while there is something to undo:
        the way back is next to the news, not only in a menu."""
        button = QPushButton("Undo", self.status_bar)
        button.setObjectName("statusUndo")
        button.setFlat(True)
        button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # a click, never a key meant for the queue
        button.setToolTip("Undo your last decision (Ctrl+Z); the undo is itself recorded")
        button.setAccessibleName("Undo last decision")
        button.clicked.connect(undo.trigger)
        button.setVisible(undo.isEnabled())
        undo.changed.connect(lambda: button.setVisible(undo.isEnabled()))
        self.status_bar.addPermanentWidget(button)
        self.undo_button = button
