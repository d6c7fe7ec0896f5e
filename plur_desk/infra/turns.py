"""Background computations run their Python one at a time, taking turns.

The window's thread shares one interpreter lock with every background thread. Beside one thread running Python it
waits at most about a switch interval for the lock (a 10 ms timer's p99 gap: 10.3 ms, bench/bench_gil_threads.py);
beside two or more it can lose the lock to the other waiter again and again (27.5 ms p99, and single waits of
100-300 ms while a store opened: the history's indexing, the clusters and the search's intake of vectors all at
once). Threads that only compute gain nothing from running beside each other (the lock lets one run at a time
anyway), so a computation takes its turn (`turn()`), works, and hands the turn on at its steps (`step()`) to the
one that has waited longest. The window's thread and the reviewer's jobs (writes, reads for the screen) never take
a turn: they run as before, beside at most one computation.

A turn is held only while computing: never across a wait for a process, a pipe, a lock another thread holds for
long, or a person. A thread that cannot get the turn within `PATIENCE_S` runs without it (no computation can be
held up for long by another, and no cycle of waits can form): the rule costs the window some ticks then, never
work. Such a thread takes its turn again at its next step where nobody holds one, without waiting.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")

SLICE_S = 0.02  # a turn is handed on at a step once it was held this long and another computation waits
PATIENCE_S = 2.0  # a computation waits at most this long for its turn, then runs without it

_cond = threading.Condition(threading.Lock())
_queue: deque[int] = deque()  # the waiting threads, longest-waiting first
_holder: int | None = None  # the thread whose turn it is (set and cleared only by that thread)
_since = 0.0  # monotonic time the holder took the turn
_mine = threading.local()  # per thread: `open`, how many `turn()` blocks it is inside
handed_on = 0  # turns handed on at a step (for tests and benches)
ran_without = 0  # computations that ran without their turn after waiting PATIENCE_S
longest_wait = 0.0  # the longest wait for a turn that ended with it, seconds (for benches: how coarse the steps are)


def _open() -> int:
    """How many `turn()` blocks this thread is inside."""
    return int(getattr(_mine, "open", 0))


def _take(me: int, patience: float) -> bool:
    global _holder, _since, ran_without, longest_wait
    with _cond:
        _queue.append(me)
        asked = time.monotonic()
        deadline = asked + patience
        while _holder is not None or _queue[0] != me:
            left = deadline - time.monotonic()
            if left <= 0:
                _queue.remove(me)
                _cond.notify_all()  # the next in line may be free to go now
                ran_without += 1
                return False
            _cond.wait(left)
        _queue.popleft()
        _holder, _since = me, time.monotonic()
        longest_wait = max(longest_wait, _since - asked)
        return True


def _take_if_free(me: int) -> None:
    """A computation running without its turn (it waited `PATIENCE_S`) takes it back where nobody holds or waits."""
    global _holder, _since
    with _cond:
        if _holder is None and not _queue:
            _holder, _since = me, time.monotonic()


def _give() -> None:
    global _holder
    with _cond:
        _holder = None
        _cond.notify_all()


@contextmanager
def turn(patience: float = PATIENCE_S) -> Iterator[None]:
    """Run the block as this thread's turn (inside another `turn()` of the same thread: part of that one). The
    window's thread never takes one and never waits."""
    me = threading.get_ident()
    if threading.current_thread() is threading.main_thread():
        yield
        return
    depth = _open()
    _mine.open = depth + 1
    try:
        if depth == 0:
            _take(me, patience)
        elif _holder != me:
            _take_if_free(me)  # (an outer block that lost its turn: never a second wait)
        yield
    finally:
        _mine.open = depth
        if depth == 0 and _holder == me:
            _give()


def step() -> bool:
    """Between the steps of a computation: hand the turn on if it was held `SLICE_S` and another computation waits,
    and wait for it to come back. Returns whether it was handed on. Cheap when nobody waits."""
    global handed_on
    me = threading.get_ident()
    if _holder != me:
        if _holder is None and not _queue and _open() > 0:
            _take_if_free(me)
        return False
    if not _queue or time.monotonic() - _since < SLICE_S:
        return False
    handed_on += 1  # (counted while holding it: one thread at a time)
    with paused():
        pass
    return True


@contextmanager
def paused() -> Iterator[None]:
    """Inside a turn, a wait that is not computing (a sleep, a pipe, a write to disk): the turn goes to whoever waits
    meanwhile and is taken again (at the back of the line) after it. A failure inside is not held up by that."""
    me = threading.get_ident()
    if _holder != me:
        yield
        return
    _give()
    try:
        yield
    except BaseException:
        raise  # the enclosing turn ends without it (nothing to give back)
    _take(me, PATIENCE_S)


def stepping(items: Iterable[T], every: int = 512) -> Iterator[T]:
    """`items`, with a `step()` after every `every` of them: a long comprehension with its steps."""
    for n, item in enumerate(items, start=1):
        yield item
        if n % every == 0:
            step()
