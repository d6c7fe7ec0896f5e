"""A computation reaches its job through the one job context: its checkpoints report progress, stop a cancelled
stoppable job, and hand the turn on in the window's pacing; outside a job (a command, a test) they cost nothing."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from plur_desk.infra import jobs
from plur_desk.infra.jobs import Cancelled, Job, Pacing, checkpoint, checkpoints, computing, current_job, running


def test_outside_a_job_a_checkpoint_is_free_and_nothing_is_cancelled():
    assert current_job() is None
    checkpoint(1, 2)
    checkpoint(reviewer=True)
    assert list(checkpoints(range(5), every=2)) == [0, 1, 2, 3, 4]
    assert not jobs.cancelled() and jobs.workers_below() == 0
    with computing():  # no turn taken: there is no window
        pass


def test_a_checkpoint_reports_the_job_s_progress():
    seen: list[tuple[int, int]] = []
    with running(Job(progress=lambda done, total: seen.append((done, total)))):
        for n in range(1, 4):
            checkpoint(n, 3)
        checkpoint()  # a step without a count reports nothing
    assert seen == [(1, 3), (2, 3), (3, 3)]


def test_a_cancelled_stoppable_job_stops_at_its_next_checkpoint_and_other_work_runs_to_its_end():
    stoppable, other = Job(stoppable=True), Job()
    for job in (stoppable, other):
        job.cancel()
    with running(stoppable), pytest.raises(Cancelled):
        checkpoint()
    with running(other):
        checkpoint()  # (a write or an index's update is never left half done)
        assert jobs.cancelled()


def test_the_job_is_this_thread_s_only_and_ends_with_its_block():
    job = Job()
    with running(job):
        assert current_job() is job
        with ThreadPoolExecutor(1) as pool:
            assert pool.submit(current_job).result() is None  # another thread runs its own job, or none
        inner = Job()
        with running(inner):
            assert current_job() is inner
        assert current_job() is job
    assert current_job() is None


def test_a_job_s_checkpoint_hands_the_turn_on_to_a_computation_that_waits(monkeypatch):
    from plur_desk.infra import turns as turns_module

    monkeypatch.setattr(turns_module, "SLICE_S", 0.0)
    pacing = Pacing()
    inside, other_ran = threading.Event(), threading.Event()

    def compute() -> None:
        with running(Job(pacing)), computing():
            inside.set()
            for _ in range(10_000):  # steps of work until the other computation had its turn (at most ~10 s)
                if other_ran.wait(0.001):
                    break
                checkpoint()

    def other() -> None:
        with running(Job(pacing)), computing():
            other_ran.set()

    a = threading.Thread(target=compute, daemon=True)
    a.start()
    assert inside.wait(5)
    b = threading.Thread(target=other, daemon=True)
    b.start()
    a.join(10)
    b.join(10)
    assert other_ran.is_set() and pacing.turns.handed_on >= 1 and pacing.turns.idle


def test_an_analytics_checkpoint_steps_aside_for_the_reviewer_and_a_plain_one_only_hands_the_turn_on():
    pacing = Pacing()
    waits: list[float] = []
    real = pacing.window.yield_to_reviewer
    pacing.window.yield_to_reviewer = lambda: waits.append(real()) or waits[-1]  # type: ignore[method-assign]

    def step(reviewer: bool) -> None:
        with running(Job(pacing)):
            checkpoint(reviewer=reviewer)

    pacing.window.reviewer_acted(0.05)
    with ThreadPoolExecutor(1) as pool:
        pool.submit(step, False).result()
        assert waits == []
        pool.submit(step, True).result()
    assert len(waits) == 1 and waits[0] > 0  # the reviewer was deciding: it paused for them
