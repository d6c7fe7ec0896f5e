"""Background jobs that start while the window is busy with a key press wait for it, never long, never skipped."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from plur_desk.infra import window_first as wf
from plur_desk.infra.turns import Turns

window_first = wf.WindowFirst(Turns())  # one window's marks (each test starts them quiet)


def _on_a_worker() -> float:
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(window_first.yield_to_window).result()


def _analytics_step() -> float:
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(window_first.yield_to_reviewer).result()


@pytest.fixture(autouse=True)
def _quiet_window(monkeypatch):
    monkeypatch.setattr(window_first, "_until", 0.0)
    monkeypatch.setattr(window_first, "_deciding_until", 0.0)
    monkeypatch.setattr(window_first, "_resumed", threading.local())  # each test's worker starts unpaused
    monkeypatch.setattr(window_first, "_painting_until", 0.0)


def test_a_job_does_not_wait_when_the_window_is_not_busy():
    assert _on_a_worker() == 0.0


def test_a_job_started_in_a_burst_waits_for_its_end():
    window_first.window_busy(0.03)
    waited = _on_a_worker()
    assert 0.0 < waited <= 0.03
    assert _on_a_worker() == 0.0  # the burst is over once waited for


def test_a_job_never_waits_longer_than_the_bound_however_busy_the_window():
    window_first.window_busy(60.0)
    assert _on_a_worker() == wf.MAX_WAIT_S


def test_the_windows_own_thread_never_waits_for_its_own_burst():
    """Long work that yields (the cluster cut) may run on the main thread too (a command-line tool, a test):
    there it must never sleep."""
    window_first.window_busy(60.0)
    assert window_first.yield_to_window() == 0.0
    assert _on_a_worker() == wf.MAX_WAIT_S  # while a worker still steps aside


def test_a_shorter_burst_never_shortens_one_under_way():
    window_first.window_busy(0.05)
    until = window_first._until
    window_first.window_busy(0.001)
    assert window_first._until == until


def test_analytics_do_not_pause_when_the_reviewer_is_not_deciding():
    assert _analytics_step() == 0.0


def test_analytics_pause_while_the_reviewer_decides_and_go_on_after():
    window_first.reviewer_acted(0.05)
    waited = _analytics_step()
    assert waited > 0.0
    assert _analytics_step() == 0.0  # the run of actions is over once waited for
    assert _on_a_worker() == 0.0  # a job's start only waits for a burst, not for a run of actions


def test_analytics_pause_for_a_burst_too():
    window_first.window_busy(0.05)
    assert _analytics_step() > 0.0


def test_analytics_pause_at_most_their_patience_at_a_step(monkeypatch):
    monkeypatch.setattr(wf, "PATIENCE_S", 0.05)
    window_first.reviewer_acted(30.0)
    waited = _analytics_step()
    assert waited == 0.05  # not the reviewer's 60 s: they go on, however busy the reviewer
    assert window_first.yield_to_reviewer() == 0.0  # and never on the main thread


def test_after_a_pause_analytics_work_a_slice_before_the_next_one():
    """Through a long run of decisions a computation still goes on: one pause, then at least SLICE_S of work."""

    def two_steps() -> tuple[float, float]:
        window_first.reviewer_acted(0.05)
        first = window_first.yield_to_reviewer()
        window_first.reviewer_acted(0.05)  # the reviewer acts again at once
        return first, window_first.yield_to_reviewer()

    with ThreadPoolExecutor(1) as pool:
        first, second = pool.submit(two_steps).result()
    assert first > 0.0
    assert second == 0.0


def test_a_mark_left_far_ahead_by_a_moved_clock_is_ignored(monkeypatch):
    monkeypatch.setattr(window_first, "_deciding_until", time.monotonic() + 2 * wf.STALE_S)
    assert _analytics_step() == 0.0
    monkeypatch.setattr(window_first, "_until", time.monotonic() + 1000.0)
    assert _analytics_step() == wf.MAX_WAIT_S  # a burst's part never more than a job would wait


def test_closing_the_window_ends_every_pause():
    window_first.reviewer_acted(30.0)
    window_first.window_busy(30.0)
    window_first.reviewer_left()
    assert _analytics_step() == 0.0
    assert _on_a_worker() == 0.0


def test_a_step_taken_during_a_repaint_waits_for_the_repaint_to_end(monkeypatch):
    """A computation the reviewer waits for gives way to the window's repaint: beside it, every call the repaint
    makes into Python (one per cell drawn) waited a switch interval for the interpreter lock."""
    monkeypatch.setattr(wf, "MAX_WAIT_S", 2.0)  # the mark outlasts a worker started late on a busy machine
    asked = threading.Event()

    def step() -> tuple[bool, float]:
        asked.set()
        waited = window_first.yield_to_repaint()
        return window_first.repainting, waited

    with ThreadPoolExecutor(1) as pool:
        with window_first.repaint():
            stepped = pool.submit(step)
            assert asked.wait(5)
            time.sleep(0.03)  # (time for a step that does not wait to come back)
            assert not stepped.done()  # parked while the window paints
        painting_then, waited = stepped.result(5)
    assert not painting_then and waited > 0.0


def _step_on_a_worker() -> float:
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(window_first.yield_to_repaint).result()


def test_a_step_never_waits_longer_than_the_bound_for_a_repaint(monkeypatch):
    monkeypatch.setattr(wf, "MAX_WAIT_S", 0.3)
    with window_first.repaint():
        began = time.monotonic()
        waited = _step_on_a_worker()
        assert window_first._painting_until > 0.0  # came back while the repaint was still under way
    assert 0.0 < waited <= time.monotonic() - began <= 0.3 + 0.25  # the bound, and not the whole repaint
    assert _step_on_a_worker() == 0.0  # the repaint is over: no wait


def test_a_step_does_not_wait_for_a_burst():
    """A decision waits on the check that gives way: a key press's burst (50 ms) is not waited for inside it."""
    window_first.window_busy(60.0)
    assert _step_on_a_worker() == 0.0
    assert _on_a_worker() == wf.MAX_WAIT_S  # a job's start still waits for the burst


def test_a_repaint_whose_end_is_never_said_stops_holding_steps_by_itself(monkeypatch):
    monkeypatch.setattr(wf, "MAX_WAIT_S", 0.05)
    window_first.repaint_started()
    assert window_first.repainting
    time.sleep(0.06)  # (its bound passes, with no end said)
    assert not window_first.repainting
    assert _step_on_a_worker() == 0.0


def test_closing_the_window_ends_a_repaints_pause():
    window_first.repaint_started()
    window_first.reviewer_left()
    assert not window_first.repainting and _step_on_a_worker() == 0.0


def test_the_windows_own_thread_never_waits_for_its_own_repaint():
    with window_first.repaint():
        assert window_first.yield_to_repaint() == 0.0
