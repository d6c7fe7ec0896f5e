"""The window's jobs: a read made stale while it waited for a thread is skipped, not run; only the newest is shown;
jobs step aside for the window's bursts; a result of work for a store since closed is dropped."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from plur_desk.ui.common.jobs import LANES, READS, SESSION, THREADS_BELOW, Jobs


def test_a_read_that_went_stale_before_it_started_is_never_run(qtbot):
    pool = Jobs(threads=1)
    release, started = threading.Event(), threading.Event()
    ran: list[str] = []
    shown: list[object] = []

    def blocking() -> str:
        started.set()
        release.wait(10)
        ran.append("first")
        return "first"

    def read(name: str):
        def fn() -> str:
            ran.append(name)
            return name

        return fn

    pool.read("detail", blocking, shown.append)  # holds the only thread
    assert started.wait(10)
    pool.read("detail", read("second"), shown.append)  # stale as soon as the third is asked for
    pool.read("detail", read("third"), shown.append)
    release.set()
    qtbot.waitUntil(lambda: pool.pending() == 0, timeout=10000)
    assert ran == ["first", "third"]
    assert shown == ["third"]
    assert pool.dropped == 2


def test_a_one_at_a_time_channel_runs_one_read_and_then_only_the_newest(qtbot):
    """Holding J: with two threads free, a one-at-a-time channel still runs one read at a time, and the reads
    asked for meanwhile are never run except the newest, which runs as soon as the first is back."""
    pool = Jobs(threads=2)
    release, started = threading.Event(), threading.Event()
    ran: list[str] = []
    shown: list[object] = []
    at_once: list[int] = []
    running = [0]
    lock = threading.Lock()

    def read(name: str, wait: bool = False):
        def fn() -> str:
            with lock:
                running[0] += 1
                at_once.append(running[0])
            if wait:
                started.set()
                release.wait(10)
            ran.append(name)
            with lock:
                running[0] -= 1
            return name

        return fn

    pool.read("detail", read("first", wait=True), shown.append, one_at_a_time=True)
    assert started.wait(10)
    for name in ("second", "third", "fourth"):
        pool.read("detail", read(name), shown.append, one_at_a_time=True)
    other: list[object] = []
    pool.read("search", lambda: ran.append("search") or "search", other.append)  # not held behind it
    qtbot.waitUntil(lambda: other == ["search"], timeout=10000)
    assert ran == ["search"] and pool.pending() == 2  # first (under way) and fourth (waiting)
    release.set()
    qtbot.waitUntil(lambda: pool.pending() == 0, timeout=10000)
    assert ran == ["search", "first", "fourth"]
    assert shown == ["fourth"]
    assert at_once == [1, 1] and pool.dropped == 3  # second and third never ran; first's result was stale


def test_a_draft_s_history_is_read_off_the_gui_thread_and_shown_in_its_detail(qtbot, window, monkeypatch):
    """The detail's History section reads the engram's events from the month files and checks their trust: on
    the read pool, filled into the detail of the draft still shown."""
    from plur_desk.ui.review import review_controller

    session = window.session
    current = window.drafts.current_id()
    with_history = [r.id for r in session.queue.rows() if r.id != current and session.history.timeline(r.id)]
    assert with_history
    read_on: list[threading.Thread] = []
    real = review_controller.timeline_html

    def timeline(session_, engram_id):  # type: ignore[no-untyped-def]
        read_on.append(threading.current_thread())
        return real(session_, engram_id)

    monkeypatch.setattr(review_controller, "timeline_html", timeline)
    window.drafts.select_id(with_history[0])
    assert window.drafts.current_id() == with_history[0]
    qtbot.waitUntil(lambda: "History" in window.drafts.detail.toPlainText(), timeout=10000)
    assert read_on and threading.main_thread() not in read_on
    last = session.history.timeline(with_history[0])[-1]
    shown = (last.get("data") or {}).get("action") or last["event"]  # what the History section names
    assert str(shown) in window.drafts.detail.toPlainText()
    assert window.drafts.displayed_seen() is not None  # a verdict still acts on what is shown


def test_drafts_passed_over_while_j_is_held_are_not_read_and_the_one_stopped_on_is(qtbot, window, monkeypatch):
    """Auto-repeat moves the selection faster than the extras' rest time: nothing is read for the drafts passed
    over (their reads would only compete with the window for the cores), and the draft the reviewer stops on gets
    its extras as soon as the selection rests."""
    from plur_desk.ui.review import review_controller

    qtbot.waitUntil(lambda: window.workspace.jobs.pending("reads") == 0, timeout=20000)
    read_for: list[str] = []
    real = review_controller.timeline_html

    def timeline(session_, engram_id):  # type: ignore[no-untyped-def]
        read_for.append(engram_id)
        return real(session_, engram_id)

    monkeypatch.setattr(review_controller, "timeline_html", timeline)
    assert window.drafts.model.rowCount() >= 5
    window.drafts.select_row(0)
    for _ in range(4):  # four moves with no rest between them
        window.review.select_next()
    stopped_on = window.drafts.current_id()
    assert window.drafts.current_row() == 4 and stopped_on is not None
    qtbot.waitUntil(lambda: window.workspace.jobs.pending("reads") == 0 and read_for != [], timeout=10000)
    assert read_for == [stopped_on]
    assert "History" in window.drafts.detail.toPlainText()


def test_a_job_submitted_while_the_window_is_busy_starts_after_its_burst_in_order(qtbot):
    """A key press marks the window busy; the jobs it starts (the write, the draft's extras) begin once that burst
    is over, in the order they were submitted, and every one runs (infra/window_first.py)."""
    import time

    jobs = Jobs()
    started: list[tuple[str, float]] = []
    jobs.pacing.window.window_busy(0.05)
    burst_ends = jobs.pacing.window._until
    for name in ("write", "extras"):
        jobs.submit(lambda name=name: started.append((name, time.monotonic())), lambda _r: None)
    qtbot.waitUntil(lambda: jobs.pending() == 0, timeout=10000)
    assert [name for name, _ in started] == ["write", "extras"]
    assert all(at >= burst_ends for _, at in started)


def test_a_decision_s_write_starts_at_once_and_a_decision_on_many_drafts_after_the_burst(qtbot):
    """One decision's write goes at once (its time to disk is what the reviewer waits for); a bulk's, ~1 s of mostly
    Python, waits for the key's burst like other jobs, so the repaint of the moved selection does not wait for it."""
    import time

    jobs = Jobs()
    started: dict[str, float] = {}
    for name, many in (("one", False), ("bulk", True)):
        jobs.pacing.window.window_busy(0.08)  # (under MAX_WAIT_S, the longest a job waits)
        burst_ends = jobs.pacing.window._until
        jobs.submit(lambda name=name: started.__setitem__(name, time.monotonic()), decision=True, many=many)
        qtbot.waitUntil(lambda: jobs.pending() == 0, timeout=10000)
        started[name] -= burst_ends
    assert started["one"] < -0.05  # well before the burst's end
    assert started["bulk"] >= 0


def test_an_action_marks_the_window_busy(qtbot):
    import time

    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QWidget

    from plur_desk.ui.actions import ACTIONS, build_actions

    jobs = Jobs()
    owner = QWidget()
    qtbot.addWidget(owner)
    ran: list[str] = []
    handlers = {spec.id: (lambda spec=spec: ran.append(spec.id)) for spec in ACTIONS}
    actions = build_actions(owner, {}, handlers, lambda _name: QIcon(), jobs=jobs)
    before = time.monotonic()
    actions["review.approve"].trigger()
    assert ran == ["review.approve"]
    assert jobs.pacing.window._until > before  # the burst the approval's jobs wait for
    assert jobs.pacing.window._deciding_until > before  # and the run of decisions analytics step aside for


def test_a_checks_progress_reaches_the_window_at_most_every_interval_and_always_at_its_end(monkeypatch):
    """A bulk approval's contradiction check reported every 10 drafts; each report is a call into the window's
    Python and a repaint of the progress bar, taking the interpreter from the check. Passed on at most every
    PROGRESS_EVERY_S, the last one always."""
    from itertools import pairwise

    from plur_desk.ui.tensions import check_progress

    step, every = 1 / 64, 4 / 64  # exact in binary: a report every 1/64 s, passed on every 4th
    clock = [100.0]
    monkeypatch.setattr(check_progress.time, "monotonic", lambda: clock[0])
    seen: list[tuple[int, float]] = []
    emit = check_progress.every(every, lambda n, _total: seen.append((n, clock[0])))
    for n in range(10, 500, 10):
        emit(n, 500)
        clock[0] += step
    emit(500, 500)
    assert seen[0][0] == 10 and seen[-1][0] == 500
    assert all(b[1] - a[1] >= every for a, b in pairwise(seen[:-1]))
    assert [n for n, _ in seen[:-1]] == list(range(10, 500, 40))  # every 4th report of 49, and the end


def test_a_result_of_work_for_a_store_since_closed_never_reaches_the_window(qtbot):
    """The "is this still the same store?" check, in one place: work asked `same_store` for the store open when it
    was submitted is dropped (its result and its failure) once another store is being opened; other work is not."""
    jobs = Jobs()
    release = threading.Event()
    shown: list[object] = []

    def failing() -> None:
        raise ValueError("the closed store's failure")

    jobs.submit(lambda: release.wait(10) and "old store's", shown.append, shown.append, same_store=True)
    jobs.submit(failing, shown.append, shown.append, same_store=True)
    jobs.submit(lambda: "the session's end", shown.append)  # (not tied to a store: always answered)
    jobs.new_store()
    jobs.submit(lambda: "new store's", shown.append, same_store=True)
    release.set()
    qtbot.waitUntil(lambda: jobs.pending() == 0, timeout=10000)
    assert shown == ["the session's end", "new store's"]


def test_a_read_runs_as_its_job_and_a_stoppable_one_stops_at_its_checkpoint_once_a_newer_one_comes(qtbot):
    from plur_desk.infra.jobs import checkpoint, current_job

    jobs = Jobs(threads=2)
    inside = threading.Event()
    steps: list[int] = []
    seen: list[object] = []
    errors: list[Exception] = []

    def long_read() -> str:
        job = current_job()
        seen.append(job is not None and job.pacing is jobs.pacing)  # the window's pacing, through the job context
        inside.set()
        for n in range(200_000):
            steps.append(n)
            checkpoint()  # stops here once cancelled
            release.wait(0.001)
        return "finished"

    release = threading.Event()
    jobs.read("history", long_read, seen.append, errors.append, stoppable=True)
    assert inside.wait(10)
    jobs.read("history", lambda: "newer", seen.append)
    qtbot.waitUntil(lambda: jobs.pending() == 0, timeout=20000)
    assert seen == [True, "newer"] and errors == []  # the stopped read is neither shown nor told as a failure
    assert len(steps) < 200_000


def test_a_job_submitted_behind_lets_the_lanes_later_jobs_go_first(qtbot):
    """The agent changes' detection (a read of the session) waits on the session's lane behind every decision
    submitted after it, until it starts; jobs of the same standing keep their order."""
    pool = Jobs()
    release, started = threading.Event(), threading.Event()
    ran: list[str] = []

    def job(name: str, wait: bool = False):  # type: ignore[no-untyped-def]
        def fn() -> str:
            if wait:
                started.set()
                release.wait(10)
            ran.append(name)
            return name

        return fn

    pool.submit(job("load", wait=True))  # holds the lane's one thread
    assert started.wait(10)
    pool.submit(job("detect"), behind=True)
    pool.submit(job("decision 1"), decision=True)
    pool.submit(job("decision 2"), decision=True)
    release.set()
    qtbot.waitUntil(lambda: pool.pending() == 0, timeout=10000)
    assert ran == ["load", "decision 1", "decision 2", "detect"]


@pytest.mark.skipif(sys.platform != "linux", reason="a thread's own nice value is Linux's")
def test_every_job_but_the_sessions_runs_on_a_thread_below_the_windows(qtbot):
    """A job thread at the window's own nice value kept the core the window's thread had woken on (a 20 ms stall,
    seen with the scheduler's events): every lane's thread runs THREADS_BELOW steps below the window's thread, but
    the session's, which writes under the store's lock (an agent waiting for it must not wait longer for us)."""
    window_nice = os.getpriority(os.PRIO_PROCESS, 0)  # on Linux, the calling thread's own
    pool = Jobs(threads=2)
    seen: dict[str, int] = {}
    for lane in LANES:
        if lane == READS:
            pool.read("detail", lambda: os.getpriority(os.PRIO_PROCESS, 0), lambda n: seen.__setitem__(READS, n))
        else:
            pool.submit(
                lambda: os.getpriority(os.PRIO_PROCESS, 0), lambda n, lane=lane: seen.__setitem__(lane, n), lane=lane
            )
    qtbot.waitUntil(lambda: len(seen) == len(LANES), timeout=10000)
    below = min(19, window_nice + THREADS_BELOW)
    assert THREADS_BELOW > 0
    assert seen == {lane: window_nice if lane == SESSION else below for lane in LANES}
    assert os.getpriority(os.PRIO_PROCESS, 0) == window_nice  # the window's thread is not lowered with them


def test_a_lane_s_threads_stay_once_started(qtbot):
    """Starting a job on a lane whose thread had ended (Qt ends an idle pool thread after 30 s) made a new thread on
    the window's thread (up to 1.3 ms, against 0.22 ms warm): the lanes' threads never expire."""
    jobs = Jobs()
    threads: list[int] = []
    for _ in range(3):
        jobs.submit(lambda: threads.append(threading.get_ident()), lambda _r: None, lane=SESSION)
        qtbot.waitUntil(lambda: jobs.pending() == 0, timeout=10000)
    assert len(set(threads)) == 1
    assert all(pool.expiryTimeout() < 0 for pool in jobs._lanes.values())
