"""A contradiction check's progress, from the read pool's thread to the window: a signal, and a throttle on it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal, Slot

from plur_desk.infra.window_first import WindowFirst

if TYPE_CHECKING:  # the dialog's class is made by PySide on its first import: with the first bulk check
    from PySide6.QtWidgets import QProgressDialog, QWidget

PROGRESS_EVERY_S = 0.05  # a check's progress reaches the window at most this often (and always at its end)
# The progress shows only for a check that takes this long in all (Qt's estimate from its progress so far, or once it
# has run this long): one of ~0.5 s (500 drafts at 50,000 engrams) showed its window for a moment, and showing it took
# the window 36-44 ms in one tick (every list repaints as the window goes inactive, and the new window's first paint;
# bench_stall --trace), then as much again as it closed. The question that follows the check is the feedback then.
SHOW_AFTER_MS = 1000


def every(seconds: float, emit: Callable[[int, int], object]) -> Callable[[int, int], None]:
    """`emit(n, total)` passed on at most every `seconds`, and always for the last one: a bulk check of 500 drafts
    sent the window 500 signals, each a repaint of the progress bar taking the interpreter from the check."""
    last = [float("-inf")]

    def throttled(n: int, total: int) -> None:
        now = time.monotonic()
        if n >= total or now - last[0] >= seconds:
            last[0] = now
            emit(n, total)

    return throttled


class CheckProgress(QObject):
    """The progress of a bulk approval's check: the dialog shown, and the signal that moves its bar."""

    changed = Signal(int, int)  # drafts checked, of how many (emitted from the read pool's thread)

    def __init__(self, parent: QObject | None = None, window: WindowFirst | None = None) -> None:
        super().__init__(parent)
        self.dialog: QProgressDialog | None = None
        self._window = window  # the window's marks: the check gives way while the dialog first shows
        self.changed.connect(self._progressed)

    def open(self, parent: QWidget, total: int, cancel: Callable[[], object]) -> QProgressDialog:
        """The progress of a new check (close the one before first)."""
        dialog = progress_dialog(parent, total, cancel)
        dialog.canceled.connect(lambda: self.close(dialog))
        self.dialog = dialog
        return dialog

    @Slot(int, int)
    def _progressed(self, n: int, total: int) -> None:
        dialog = self.dialog
        if dialog is None or dialog.maximum() != total:
            return
        if dialog.isVisible() or self._window is None:
            dialog.setValue(n)
            return
        # the value that shows the window-modal dialog blocks the window: Qt tells each of its widgets, and each
        # that Python subclasses (the panes) takes the interpreter lock, behind the check (60-100 ms of one stall)
        with self._window.repaint():
            dialog.setValue(n)

    def close(self, dialog: QProgressDialog | None) -> None:
        if dialog is not None:
            dialog.close()
            if self.dialog is dialog:
                self.dialog = None


def progress_dialog(parent: QWidget | None, total: int, cancel: Callable[[], object]) -> QProgressDialog:
    """The window-modal progress of a check of `total` drafts, shown when the check takes `SHOW_AFTER_MS` or more;
    Cancel and Escape call `cancel`."""
    from PySide6.QtWidgets import QProgressDialog

    dialog = QProgressDialog(f"Checking {total} drafts for contradictions…", "Cancel", 0, total, parent)
    dialog.setObjectName("conflictCheckProgress")
    dialog.setWindowModality(Qt.WindowModality.WindowModal)
    dialog.setMinimumDuration(SHOW_AFTER_MS)
    dialog.setAutoClose(False)
    dialog.setAutoReset(False)
    dialog.canceled.connect(cancel)
    dialog.rejected.connect(cancel)  # Escape
    return dialog
