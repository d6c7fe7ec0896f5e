"""The window's repaints come first: a computation the reviewer waits for (a bulk approval's contradiction check,
seconds of Python on a worker thread) gives way while the window repaints. The queue's repaint calls into Python
once or twice per cell it draws (`index`, `multiData`), and beside the check each call waited a switch interval for
the interpreter lock: one repaint of the queue took 60-150 ms (bench/bench_stall.py --trace, perf). So every cell
must be drawn inside a repaint the window has marked (ui/common/repaint_marks.py), whatever asked for it."""

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
    table = window.drafts.table
    seen = _marked_at_each_cell(window, qtbot, lambda: table.viewport().update())
    assert seen and all(seen)
