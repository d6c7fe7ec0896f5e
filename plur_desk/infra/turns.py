"""Background computations run their Python one at a time, taking turns.

The window's thread shares one interpreter lock with every background thread. Beside one thread running Python it
waits at most about a switch interval for the lock (a 10 ms timer's p99 gap: 10.3 ms, bench/bench_gil_threads.py);
beside two or more it can lose the lock to the other waiter again and again (27.5 ms p99, and single waits of
100-300 ms while a store opened: the history's indexing, the clusters and the search's intake of vectors all at
once). Threads that only compute gain nothing from running beside each other (the lock lets one run at a time
anyway), so a computation takes its turn (`turn()`), works, and hands the turn on at its steps (`step()`) to the
one that has waited longest. The line is a `Turns`, one per window (`infra/jobs.py` `Pacing`); a computation reaches
it through its job's context, never through a module global. The window's thread and the reviewer's jobs (writes, reads for the screen) never take
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
from collections.abc import Iterator
from contextlib import contextmanager

SLICE_S = 0.02  # a turn is handed on at a step once it was held this long and another computation waits
PATIENCE_S = 2.0  # a computation waits at most this long for its turn, then runs without it


class Turns:
    """The line of computations waiting for their turn, and whose turn it is."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._queue: deque[int] = deque()  # the waiting threads, longest-waiting first
        self._holder: int | None = None  # the thread whose turn it is (set and cleared only by that thread)
        self._since = 0.0  # monotonic time the holder took the turn
        self._mine = threading.local()  # per thread: `open`, how many `turn()` blocks it is inside
        self.handed_on = 0  # turns handed on at a step (for tests and benches)
        self.ran_without = 0  # computations that ran without their turn after waiting PATIENCE_S
        self.longest_wait = 0.0  # the longest wait for a turn that ended with it, s (for benches: how coarse steps are)

    @property
    def idle(self) -> bool:
        """Nobody holds a turn or waits for one."""
        return self._holder is None and not self._queue

    def _open(self) -> int:
        """How many `turn()` blocks this thread is inside."""
        return int(getattr(self._mine, "open", 0))

    def _take(self, me: int, patience: float) -> bool:
        with self._cond:
            self._queue.append(me)
            asked = time.monotonic()
            deadline = asked + patience
            while self._holder is not None or self._queue[0] != me:
                left = deadline - time.monotonic()
                if left <= 0:
                    self._queue.remove(me)
                    self._cond.notify_all()  # the next in line may be free to go now
                    self.ran_without += 1
                    return False
                self._cond.wait(left)
            self._queue.popleft()
            self._holder, self._since = me, time.monotonic()
            self.longest_wait = max(self.longest_wait, self._since - asked)
            return True

    def _take_if_free(self, me: int) -> None:
        """A computation running without its turn (it waited `PATIENCE_S`) takes it back where nobody holds or
        waits."""
        with self._cond:
            if self._holder is None and not self._queue:
                self._holder, self._since = me, time.monotonic()

    def _give(self) -> None:
        with self._cond:
            self._holder = None
            self._cond.notify_all()

    @contextmanager
    def turn(self, patience: float = PATIENCE_S) -> Iterator[None]:
        """Run the block as this thread's turn (inside another `turn()` of the same thread: part of that one). The
        window's thread never takes one and never waits."""
        me = threading.get_ident()
        if threading.current_thread() is threading.main_thread():
            yield
            return
        depth = self._open()
        self._mine.open = depth + 1
        try:
            if depth == 0:
                self._take(me, patience)
            elif self._holder != me:
                self._take_if_free(me)  # (an outer block that lost its turn: never a second wait)
            yield
        finally:
            self._mine.open = depth
            if depth == 0 and self._holder == me:
                self._give()

    def step(self) -> bool:
        """Between the steps of a computation: hand the turn on if it was held `SLICE_S` and another computation
        waits, and wait for it to come back. Returns whether it was handed on. Cheap when nobody waits."""
        me = threading.get_ident()
        if self._holder != me:
            if self._holder is None and not self._queue and self._open() > 0:
                self._take_if_free(me)
            return False
        if not self._queue or time.monotonic() - self._since < SLICE_S:
            return False
        self.handed_on += 1  # (counted while holding it: one thread at a time)
        with self.paused():
            pass
        return True

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Inside a turn, a wait that is not computing (a sleep, a pipe, a write to disk): the turn goes to whoever
        waits meanwhile and is taken again (at the back of the line) after it. A failure inside is not held up by
        that."""
        me = threading.get_ident()
        if self._holder != me:
            yield
            return
        self._give()
        try:
            yield
        except BaseException:
            raise  # the enclosing turn ends without it (nothing to give back)
        self._take(me, PATIENCE_S)
