"""Background work steps aside while the window answers the reviewer.

The window's Python and its background jobs share one interpreter lock. A decision or a move to another draft
starts jobs (the write, the draft's extras, the index's update) at the moment the window has the most to do on its
own thread (the key's handler, the detail, the repaint of the list), and each call of the window's Python then
waits its turn behind them: the window's work after a key press took 2-3 times as long as alone. So the window
says when it starts such a burst (`window_busy`), and a background job that starts within it first waits for the
burst to end (`yield_to_window`, sleeping, which releases the lock), at most `MAX_WAIT_S`. Nothing is skipped or
reordered: a job starts at most that much later, in the order it was submitted.

A repaint is the window's too (`repaint_started` .. `repaint_ended`, marked by the window's models at their first
call into Python and ended at the event loop's next pass: ui/common/repaint_marks.py): a list's repaint calls into
Python for every cell it draws (the model's `index` and `multiData`), and beside a thread running Python each call
waited a switch interval for the lock. A bulk approval's contradiction check (seconds of Python) made one repaint of
the queue 60-150 ms that way (perf: the window's thread in `take_gil` under `Sbk_GetPyOverride` under
`QTableView::paintEvent`, a millisecond at a time), and so did the scale view verifying new signatures. Every
computation gives way at its small steps (`infra/jobs.py` `checkpoint`, `give_way`; each signature verified):
while a repaint is under way it waits for its end, at most `MAX_WAIT_S` a step. A repaint's mark ends by itself
`MAX_WAIT_S` after it was set, should its end never be said.

Analytics nobody waits for (the scale view's clusters and risk, seconds of Python at 50,000 engrams) step
further aside: while the reviewer is deciding (an action within the last `DECIDING_S`), they pause between their
steps (`yield_to_reviewer`), at most `PATIENCE_S` a step, so a run of decisions is not answered beside them.

The marks are a `WindowFirst`'s, one per window beside its `Turns` (`infra/jobs.py` `Pacing`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from plur_desk.infra.turns import Turns

BURST_S = 0.05  # a key press's handler, the detail and the repaint that follows (measured: 15-45 ms)
MAX_WAIT_S = 0.1  # a job never waits longer than this for the window, however often it is busy

DECIDING_S = 1.0  # after an action, the reviewer is taken to be still deciding (the scale view settles as long)
PATIENCE_S = 3.0  # analytics never pause longer than this at one step, however busy the reviewer
SLICE_S = 0.05  # after a pause, analytics work at least this long before the next one
STALE_S = 60.0  # a deciding mark further ahead than this was not set by a real action (a test's patched clock)


class WindowFirst:
    """When the window's current burst ends and how long the reviewer is taken to be deciding."""

    def __init__(self, turns: Turns) -> None:
        self.turns = turns
        self._until = 0.0  # monotonic time the window's current burst ends (a float: written and read whole)
        self._deciding_until = 0.0  # monotonic time the reviewer's run of actions is taken to end
        self._resumed = threading.local()  # per analytics thread: when its last pause ended (`at`)
        self._painting_until = 0.0  # monotonic time a repaint under way is taken to end at the latest (0: none)
        self._repainted = threading.Condition(threading.Lock())  # told when a repaint ends

    def window_busy(self, seconds: float = BURST_S) -> None:
        """On the window's thread, at the start of the work a key press or a new selection brings."""
        self._until = max(self._until, time.monotonic() + seconds)

    def repaint_started(self) -> None:
        """On the window's thread, as a repaint (or a layout) of the window starts: a computation giving way waits
        until `repaint_ended`, or `MAX_WAIT_S` at most."""
        self._painting_until = time.monotonic() + MAX_WAIT_S

    def repaint_ended(self) -> None:
        with self._repainted:
            self._painting_until = 0.0
            self._repainted.notify_all()

    @property
    def repainting(self) -> bool:
        return self._painting_until > time.monotonic()

    @contextmanager
    def repaint(self) -> Iterator[None]:
        """The block is a repaint (`repaint_started` .. `repaint_ended`)."""
        self.repaint_started()
        try:
            yield
        finally:
            self.repaint_ended()

    def yield_to_window(self) -> float:
        """On a background thread, before a job starts (or between the steps of a long one): wait while the window
        is in a burst. Returns the wait (s). On the window's own thread (the main one) never: work done there is
        the window's, and sleeping would stall it."""
        wait = self._until - time.monotonic()
        if wait <= 0 or threading.current_thread() is threading.main_thread():
            return 0.0
        wait = min(wait, MAX_WAIT_S)
        time.sleep(wait)
        return wait

    def yield_to_repaint(self) -> float:
        """On a background thread, between the small steps of a computation the reviewer waits for: wait while the
        window repaints (not for a burst: a decision waits on such a computation), at most `MAX_WAIT_S`. Returns the
        wait (s); never on the main thread. Cheap when the window is not repainting: called every few tens of
        microseconds of work."""
        painting = self._painting_until - time.monotonic()
        if painting <= 0 or threading.current_thread() is threading.main_thread():
            return 0.0
        began = time.monotonic()
        with self._repainted:
            self._repainted.wait_for(lambda: not self.repainting, min(painting, MAX_WAIT_S))
        return time.monotonic() - began

    def reviewer_acted(self, seconds: float = DECIDING_S) -> None:
        """On the window's thread, when the reviewer runs an action (a decision, a move to another row): deciding
        until `seconds` after the latest one (set, not extended)."""
        self._deciding_until = time.monotonic() + seconds

    def reviewer_left(self) -> None:
        """The window is closing: nothing is the reviewer's any more, and its threads are waited for."""
        self._until = self._deciding_until = 0.0
        self.repaint_ended()

    def yield_to_reviewer(self) -> float:
        """For analytics, between their steps on a background thread: wait while the reviewer is deciding or the
        window is in a burst (one sleep of at most `PATIENCE_S`; the burst's part at most `MAX_WAIT_S`). After a
        pause the thread works at least `SLICE_S` before the next one, so a computation goes on, slowly, through a
        long run of decisions. A mark further ahead than it can be set (a clock a test moved) is ignored. Returns
        the wait (s); never waits on the main thread."""
        if threading.current_thread() is threading.main_thread():
            return 0.0
        now = time.monotonic()
        if now - getattr(self._resumed, "at", -SLICE_S) < SLICE_S:
            self.turns.step()
            return 0.0
        burst = min(self._until - now, MAX_WAIT_S)
        deciding = self._deciding_until - now if self._deciding_until - now <= STALE_S else 0.0
        wait = min(max(burst, deciding), PATIENCE_S)
        if wait <= 0:
            self.turns.step()  # another computation's turn, if one waits (infra/turns.py)
            return 0.0
        with self.turns.paused():
            time.sleep(wait)
        self._resumed.at = time.monotonic()
        return wait
