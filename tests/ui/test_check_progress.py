"""A bulk approval's check shows its progress window only when it takes a while: a check of half a second made a
window appear for a moment, and its appearing and going took the main window two long ticks."""

from __future__ import annotations

import time

from PySide6.QtWidgets import QApplication, QWidget

from plur_desk.ui.tensions.check_progress import SHOW_AFTER_MS, progress_dialog


def _run_check(qtbot, seconds: float, total: int = 50) -> bool:
    """Progress values for a check of `total` drafts spread over `seconds`, the event loop running between them as
    it does while a check runs on its thread; whether the progress window was ever on screen."""
    parent = QWidget()
    qtbot.addWidget(parent)
    parent.show()
    dialog = progress_dialog(parent, total, lambda: None)
    shown = False
    dialog.setValue(0)
    began = time.monotonic()
    for n in range(1, total + 1):
        while time.monotonic() - began < seconds * n / total:
            QApplication.processEvents()
            shown = shown or dialog.isVisible()
            time.sleep(0.005)
        dialog.setValue(n)
        shown = shown or dialog.isVisible()
    dialog.close()
    return shown


def test_a_check_of_half_a_second_shows_no_progress_window(qtbot):
    assert SHOW_AFTER_MS >= 800
    assert not _run_check(qtbot, 0.5)


def test_a_check_that_takes_longer_shows_its_progress(qtbot):
    assert _run_check(qtbot, SHOW_AFTER_MS / 1000 * 2)
