"""The window's repaints come first: a computation the reviewer waits for (a bulk approval's contradiction check,
seconds of Python on a worker thread) gives way while the window repaints. The queue's repaint calls into Python
once or twice per cell it draws (`index`, `multiData`), and beside the check each call waited a switch interval for
the interpreter lock: one repaint of the queue took 60-150 ms (bench/bench_stall.py --trace, perf). So the cells
of the repaints the tests below ask for (those that reach the window as an UpdateRequest) must be drawn inside a
repaint the window has marked (ui/common/repaint_marks.py)."""

from __future__ import annotations

import sys


def _marked_at_each_cell(win, qtbot, ask) -> list[bool]:  # type: ignore[no-untyped-def]
    """For each cell of the queue drawn after `ask()` (`multiData`: the delegate's one call per cell it paints),
    whether the window had marked a repaint under way."""
    window = win.jobs.pacing.window
    seen: list[bool] = []

    def profile(frame, event, _arg):  # type: ignore[no-untyped-def]
        if event == "call" and frame.f_code.co_name == "multiData" and "models" in frame.f_code.co_filename:
            seen.append(window.repainting)

    qtbot.wait(50)  # whatever was pending is painted first
    sys.setprofile(profile)
    try:
        ask()
        qtbot.waitUntil(lambda: len(seen) > 0, timeout=5000)
        qtbot.wait(50)
    finally:
        sys.setprofile(None)
    return seen


def test_the_queue_is_drawn_inside_a_repaint_the_background_gives_way_to(window, qtbot):
    """While a computation that gives way runs (a bulk approval's check watches the repaints from its start to its
    end), and only then: the marks cost the interpreter lock at every event to the window."""
    from plur_desk.ui.common.repaint_marks import RepaintMarks

    table = window.drafts.table
    marks = RepaintMarks(window, window.jobs.pacing.window)
    marks.watch()
    seen = _marked_at_each_cell(window, qtbot, lambda: table.viewport().update())
    assert seen and all(seen)
    marks.unwatch()
    seen = _marked_at_each_cell(window, qtbot, lambda: table.viewport().update())
    assert seen and not any(seen)


def test_the_check_gives_way_while_its_progress_dialog_first_shows(qtbot):
    """The value that shows a bulk check's window-modal progress blocks the window it covers: Qt tells each of the
    window's widgets, and each one Python subclasses takes the interpreter lock, behind the check's Python."""
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QWidget

    from plur_desk.infra.turns import Turns
    from plur_desk.infra.window_first import WindowFirst
    from plur_desk.ui.tensions.check_progress import CheckProgress

    window = WindowFirst(Turns())
    parent = QWidget()
    qtbot.addWidget(parent)
    parent.show()
    qtbot.waitExposed(parent)
    blocked: list[bool] = []

    class Watch(QObject):
        def eventFilter(self, _watched, event):  # type: ignore[no-untyped-def]
            if event.type() == QEvent.Type.WindowBlocked:
                blocked.append(window.repainting)
            return False

    watch = Watch(parent)
    parent.installEventFilter(watch)
    progress = CheckProgress(parent, window)
    dialog = progress.open(parent, 10, lambda: None)
    dialog.setMinimumDuration(0)  # shown by its first value
    progress.changed.emit(1, 10)
    qtbot.waitUntil(lambda: dialog.isVisible(), timeout=5000)
    assert blocked and all(blocked)
    assert not window.repainting  # and the mark ends with it
    progress.close(dialog)
