"""Computations run their Python one at a time, hand the turn on at their steps, never wait long, never the window."""

from __future__ import annotations

import itertools
import threading
import time

import pytest

from plur_desk.infra.turns import PATIENCE_S, SLICE_S, Turns
from plur_desk.infra.window_first import WindowFirst

turns = Turns()  # the line of computations every test here uses (a window has one)
window_first = WindowFirst(turns)


@pytest.fixture(autouse=True)
def _no_turn_left_over():
    assert turns._holder is None and not turns._queue  # a test that leaves a turn held would hang the next
    yield
    assert turns._holder is None and not turns._queue


def _thread(target) -> threading.Thread:  # type: ignore[no-untyped-def]
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def _wait_until(condition, seconds: float = 5.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


class Holder:
    """A computation on its own thread that holds its turn until told to let go."""

    def __init__(self) -> None:
        self.inside, self.release = threading.Event(), threading.Event()
        self.thread = _thread(self._run)
        assert self.inside.wait(5)

    def _run(self) -> None:
        with turns.turn():
            self.inside.set()
            self.release.wait(10)

    def let_go(self) -> None:
        self.release.set()
        self.thread.join(5)


def test_two_computations_never_run_at_once_and_both_go_on_by_handing_the_turn_on():
    running: list[str] = []  # who is inside a step right now
    order: list[str] = []
    most = [0]

    def compute(name: str) -> None:
        with turns.turn():
            for _ in range(12):
                running.append(name)
                most[0] = max(most[0], len(running))
                time.sleep(SLICE_S / 2)  # a step's work (a sleep: the other thread could run meanwhile)
                order.append(name)
                running.remove(name)
                turns.step()

    handed = turns.handed_on
    threads = [_thread(lambda n=n: compute(n)) for n in ("a", "b")]
    for thread in threads:
        thread.join(10)
    assert most[0] == 1  # never both inside a step
    assert sorted(order) == ["a"] * 12 + ["b"] * 12
    switches = sum(1 for x, y in itertools.pairwise(order) if x != y)
    assert switches >= 4 and turns.handed_on - handed >= 4  # taking turns, not one after the other


def test_the_computation_that_waited_longest_goes_next():
    holder = Holder()
    went: list[str] = []

    def compute(name: str) -> None:
        with turns.turn():
            went.append(name)

    waiters: list[threading.Thread] = []
    for name in ("first", "second", "third"):
        waiters.append(_thread(lambda n=name: compute(n)))
        queued = len(waiters)
        _wait_until(lambda: len(turns._queue) == queued)  # noqa: B023  (waited for here, in this iteration)
    holder.let_go()
    for thread in waiters:
        thread.join(5)
    assert went == ["first", "second", "third"]


def test_a_step_keeps_the_turn_when_nobody_waits_or_before_its_slice():
    done = threading.Event()
    answers: list[bool] = []

    def compute() -> None:
        with turns.turn():
            answers.append(turns.step())  # nobody waits
            time.sleep(SLICE_S * 2)
            answers.append(turns.step())  # still nobody
            done.set()

    _thread(compute).join(5)
    assert done.is_set() and answers == [False, False]


def test_a_computation_held_up_longer_than_its_patience_runs_without_its_turn():
    holder = Holder()  # never steps
    ran = threading.Event()
    before = turns.ran_without

    def compute() -> None:
        with turns.turn(patience=0.05):
            ran.set()

    thread = _thread(compute)
    assert ran.wait(5)  # while the other still holds it
    thread.join(5)
    assert turns.ran_without == before + 1 and turns._holder == holder.thread.ident
    holder.let_go()


def test_the_windows_thread_never_waits_for_a_turn():
    holder = Holder()
    began = time.monotonic()
    with turns.turn(patience=5.0):
        inside = time.monotonic() - began
    assert inside < 1.0 and turns._holder == holder.thread.ident  # it ran at once, and took nothing
    holder.let_go()


def test_a_wait_inside_a_turn_lets_another_computation_run_and_takes_the_turn_back_after():
    other_ran, waiting = threading.Event(), threading.Event()
    seen: list[object] = []

    before = turns.ran_without

    def first() -> None:
        with turns.turn():
            with turns.paused():
                waiting.set()
                seen.append(other_ran.wait(PATIENCE_S / 4))  # it ran meanwhile, not after a waiter's patience
            seen.append(turns._holder == threading.get_ident())

    def second() -> None:
        with turns.turn():
            other_ran.set()

    a = _thread(first)
    assert waiting.wait(5)
    b = _thread(second)
    for thread in (a, b):
        thread.join(5)
    assert seen == [True, True] and turns.ran_without == before


def test_a_turn_inside_a_turn_is_part_of_it_and_an_error_lets_it_go():
    def compute() -> None:
        with turns.turn():
            with turns.turn():  # (a view's refresh inside a job that is a computation already)
                assert turns._mine.open == 2
            assert turns._holder == threading.get_ident()
            raise ValueError("a computation failed")

    errors: list[BaseException] = []

    def run() -> None:
        try:
            compute()
        except ValueError as exc:
            errors.append(exc)

    _thread(run).join(5)
    assert len(errors) == 1 and turns._holder is None  # the next computation is not held up by a failed one


def test_an_analytics_pause_for_the_reviewer_gives_the_turn_up_while_it_sleeps(monkeypatch):
    monkeypatch.setattr(window_first, "_resumed", threading.local())
    other_ran = threading.Event()
    paused = threading.Event()
    waited: list[float] = []

    def analytics() -> None:
        with turns.turn():
            paused.set()
            waited.append(window_first.yield_to_reviewer())  # the reviewer is deciding: it sleeps

    def other() -> None:
        with turns.turn():
            other_ran.set()

    window_first.reviewer_acted(2.0)
    try:
        a = _thread(analytics)
        assert paused.wait(5)
        b = _thread(other)
        assert other_ran.wait(1.5)
        assert not waited  # the other ran while the analytics slept for the reviewer, not after
        for thread in (a, b):
            thread.join(5)
    finally:
        window_first.reviewer_left()
    assert waited and waited[0] > 0


def test_a_computation_that_ran_without_its_turn_takes_it_back_at_its_next_free_step():
    """After waiting its patience out, a computation runs without a turn; once the holder is gone it takes the turn
    again at its next step (and the next computation waits for it instead of running beside it)."""
    holder = Holder()
    again: list[bool] = []
    go_on = threading.Event()
    before = turns.ran_without

    def compute() -> None:
        with turns.turn(patience=0.05):
            assert turns._holder != threading.get_ident()  # ran without it
            go_on.wait(5)
            turns.step()
            again.append(turns._holder == threading.get_ident())

    thread = _thread(compute)
    _wait_until(lambda: turns.ran_without > before and not turns._queue)
    holder.let_go()
    go_on.set()
    thread.join(5)
    assert again == [True] and turns._holder is None
