"""The window's repaints come first: a computation the reviewer waits for (a bulk approval's contradiction check,
seconds of Python on a worker thread) gives way while the window repaints. The queue's repaint calls into Python
once or twice per cell it draws (`index`, `multiData`), and beside the check each call waited a switch interval for
the interpreter lock: one repaint of the queue took 60-150 ms (bench/bench_stall.py --trace, perf). So the cells
of the repaints the tests below ask for (those that reach the window as an UpdateRequest) must be drawn inside a
repaint the window has marked (ui/common/repaint_marks.py), and background work must wait while one is marked."""

from __future__ import annotations

import sys

import pytest


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
    """Always: the window marks each repaint as it starts, and its models mark a list painted another way at their
    first call into Python; the mark ends once the event loop runs again."""
    table = window.drafts.table
    first = window.jobs.pacing.window
    for ask in (lambda: table.viewport().update(), lambda: table.viewport().repaint()):
        seen = _marked_at_each_cell(window, qtbot, ask)
        assert seen and all(seen)
        qtbot.waitUntil(lambda: not first.repainting, timeout=1000)  # ended by the loop's next pass


def test_a_window_that_closes_inside_a_repaint_leaves_the_switch_interval_as_it_was(window, qtbot):
    from plur_desk.ui.app import SWITCH_INTERVAL

    window.drafts.model.index(0, 0)  # the window's thread in the model's Python: a repaint is marked
    assert sys.getswitchinterval() < SWITCH_INTERVAL / 2
    window.jobs.reviewer_left()  # what closing the window does
    assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL)
    assert not window.jobs.pacing.window.repainting


def _waits_for_the_repaint(window, qtbot, monkeypatch, work) -> object:  # type: ignore[no-untyped-def]
    """Run `work` on a thread, as a job of the window's, while a repaint is marked (its cap lifted, so only its end
    lets the work on): it must still be waiting while the window's thread is busy, and go on once the event loop
    runs (the repaint is over). Returns what `work` returned."""
    import threading

    from plur_desk.infra import window_first
    from plur_desk.infra.jobs import Job, running

    monkeypatch.setattr(window_first, "MAX_WAIT_S", 3600.0)
    qtbot.wait(50)  # whatever was pending is painted first
    job, out = Job(window.jobs.pacing), []

    def run() -> None:
        with running(job):
            out.append(work())

    window.drafts.model.index(0, 0)  # the window's thread in the model's Python, as at a repaint's first cell
    assert window.jobs.pacing.window.repainting
    thread = threading.Thread(target=run)
    thread.start()
    thread.join(0.3)  # the window's thread is busy (no event loop): the repaint is not over
    assert thread.is_alive() and not out
    qtbot.waitUntil(lambda: not thread.is_alive(), timeout=5000)  # the loop runs: the mark ends, the work goes on
    assert not window.jobs.pacing.window.repainting
    return out[0]


def test_a_job_waits_at_its_checkpoint_while_the_window_repaints(window, qtbot, monkeypatch):
    from plur_desk.infra.jobs import checkpoint

    def steps() -> int:
        for _ in range(3):
            checkpoint()
        return 3

    assert _waits_for_the_repaint(window, qtbot, monkeypatch, steps) == 3


def test_each_signature_verified_in_the_background_waits_while_the_window_repaints(
    window, qtbot, monkeypatch, store_copy
):
    """A view's refresh may verify hundreds of new signatures (the writer ledger after a bulk approval), each a few
    hundred microseconds of Python: each gives way, as a checkpoint would, and the ledger still counts every one."""
    from plur_desk.app.scale.writers import ledger_from_files
    from plur_desk.app.trust.verifier import TrustChecker

    ledger = _waits_for_the_repaint(
        window, qtbot, monkeypatch, lambda: ledger_from_files(store_copy / "history", TrustChecker(store_copy))
    )
    cold = ledger_from_files(store_copy / "history", TrustChecker(store_copy))
    assert (ledger.decisions, ledger.unverified) == (cold.decisions, cold.unverified)
    assert sum(cold.unverified.values()) == 2  # the demo's signed claims: verified (under a key not trusted here)


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


def test_nothing_waits_for_a_repaint_while_it_holds_a_store_lock(window, qtbot, monkeypatch, tmp_path):
    """An agent may be waiting for the lock: a write's steps and verifications inside it never pause for the window
    (the write path waits, if at all, before it takes the lock)."""
    import threading

    from plur_desk.infra import window_first
    from plur_desk.infra.jobs import Job, checkpoint, give_way, running
    from plur_desk.store.locking.lock import locked

    monkeypatch.setattr(window_first, "MAX_WAIT_S", 3600.0)
    qtbot.wait(50)
    done = threading.Event()

    def run() -> None:
        with running(Job(window.jobs.pacing)), locked(tmp_path / "engrams.yaml"):
            checkpoint()
            give_way()
            done.set()

    window.drafts.model.index(0, 0)  # a repaint is marked, and stays so while this thread does not run the loop
    thread = threading.Thread(target=run)
    thread.start()
    assert done.wait(10) and window.jobs.pacing.window.repainting
    thread.join(10)


def test_a_marked_repaint_cuts_the_switch_interval_until_it_ends(window, qtbot):
    """Threads that do not give way (a write, a load) hand the interpreter lock to the repaint's calls sooner while
    it is marked; the window's usual interval is back once it ends, so background threads are not switched every
    0.1 ms between repaints."""
    from plur_desk.ui.app import SWITCH_INTERVAL
    from plur_desk.ui.common.repaint_marks import PAINTING_SWITCH_S

    qtbot.waitUntil(lambda: not window.jobs.pacing.window.repainting, timeout=1000)
    assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL)
    window.drafts.model.index(0, 0)  # the window's thread in the model's Python
    assert sys.getswitchinterval() == pytest.approx(PAINTING_SWITCH_S)
    qtbot.waitUntil(lambda: not window.jobs.pacing.window.repainting, timeout=1000)
    assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL)
