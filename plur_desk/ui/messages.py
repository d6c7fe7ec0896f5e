"""The window's message area: the banner above the panes (notes, refusals) and the status bar's passing messages."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QLabel, QStatusBar

from plur_desk.ui.widgets import shorten_long_words


class Messages(QObject):
    """What the window tells the reviewer. A refusal (error) stays until the reviewer moves to another pane; the
    sticky note (a read-only store, a demo copy) is shown with every message until another store is opened."""

    error_shown = Signal(str)

    def __init__(self, banner: QLabel, status_bar: QStatusBar, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.banner = banner
        self.status_bar = status_bar
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
