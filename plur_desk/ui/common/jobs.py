"""The one class that runs the window's background work: `Jobs`, one per workspace (the open store), results back
on the GUI thread as slots.

Work goes to a *lane*: a serial lane runs its jobs one at a time in order (`SESSION`: loading, writes, reloads,
never overlapping; the scale view, the contradictions, the search index and the store's poll each on a lane of their
own, so none waits behind, or blocks, a write). Reads for the screen (`read`) run on the `READS` lane, several at
once, each on a *channel* ("search", "detail", …): a newer read on a channel cancels the older one, whose result is
dropped, never shown (the person typed on, or moved to the next draft, meanwhile).

Every piece of work runs as a `Job` (infra/jobs.py) set as its thread's job context: the computation inside finds
its cancel, its progress and the window's pacing there (`checkpoint()`). A job also carries the store it was started
for: a result asked for `same_store` is dropped here, in one place, once another store was opened (`new_store`).
"""

from __future__ import annotations

import itertools
import traceback
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

from plur_desk.infra.jobs import Cancelled, Job, Pacing, running
from plur_desk.ui.common.repaint_marks import RepaintMarks

SESSION = "session"  # loads, writes and reloads of the session, in order, never overlapping
READS = "reads"  # reads for the screen, several at once, stale results dropped
INDEX = "index"  # the rest of a store parsed (waiting on worker processes), then the search index and its vectors
SCALE = "scale"  # the scale view's ledger, clusters and risk
CONFLICTS = "conflicts"  # the contradictions' index and scans
POLL = "poll"  # the once-a-second look at the store's lock and files
LANES = (SESSION, READS, INDEX, SCALE, CONFLICTS, POLL)
READ_THREADS = 2
WORKERS_BELOW = 10  # the window's parse workers: nice steps below it (infra/workers.py `lower_worker`)
# The threads running its jobs, but the session's: nice steps below the window's thread (`lower_this_thread`). The
# session's lane writes under the store's lock: it keeps the window's priority, so an agent waiting for the lock never
# waits longer because a write of ours ran below a busy machine's other work.
THREADS_BELOW = 5

Done = Callable[[object], None]
Failed = Callable[[Exception], None]


class _Signals(QObject):
    done = Signal(int, object)
    failed = Signal(int, object)


class _Run(QRunnable):
    def __init__(self, token: int, job: Job, fn: Callable[[], object], signals: _Signals, *, read: bool) -> None:
        super().__init__()
        self.token, self.job, self.fn, self.signals, self.read = token, job, fn, signals, read
        self.steps_aside = True
        self.lowered = True  # its thread runs below the window's (not the session's lane: THREADS_BELOW)

    def run(self) -> None:
        fn, self.fn = self.fn, _done  # the pool's wrapper may outlive the run: it keeps no closure (a session) alive
        job = self.job
        if self.lowered and job.pacing is not None:
            job.pacing.lower_job_thread()  # the window's thread first for a core (infra/workers.py)
        if self.steps_aside and job.pacing is not None:
            job.pacing.window.yield_to_window()  # started during a key press's work: after it (window_first.py)
        try:
            with running(job):
                # a read made stale while it waited for a thread (J held down) is not worth doing: skipping it keeps
                # the threads, and the interpreter lock the GUI thread needs, free for the read that will be shown
                result = None if self.read and job.cancelled else fn()
        except Exception as exc:
            exc.__traceback_text__ = traceback.format_exc()  # type: ignore[attr-defined]
            self.signals.failed.emit(self.token, exc)
        else:
            self.signals.done.emit(self.token, result)
        finally:
            del fn  # a failure's traceback (sent to the window) keeps this frame, and with it its locals


def _done() -> object:
    raise RuntimeError("a job runs once")


@dataclass
class _Waiting:
    """A job submitted and not yet answered."""

    lane: str
    channel: str  # "" for work outside a channel
    job: Job
    on_done: Done | None
    on_error: Failed | None
    same_store: bool


class Jobs(QObject):
    """Runs the window's background work; the window never waits for it."""

    busy_changed = Signal(bool)  # whether session work (the `SESSION` lane) is under way

    def __init__(self, parent: QObject | None = None, pacing: Pacing | None = None, threads: int = READ_THREADS):
        super().__init__(parent)
        self.pacing = pacing if pacing is not None else Pacing(workers_below=WORKERS_BELOW, threads_below=THREADS_BELOW)
        self.repaints = RepaintMarks(self.pacing.window, self)  # the window's models mark their repaints with it
        self._lanes: dict[str, QThreadPool] = {}
        for lane in LANES:  # (made before the signals: a pool, deleted first, waits for its jobs to have answered)
            pool = self._lanes[lane] = QThreadPool(self)
            pool.setMaxThreadCount(threads if lane == READS else 1)
            # its threads stay once started: an idle one ended after 30 s, and the next job's start made a thread on
            # the window's thread (20 starts after an expiry: median 0.15 ms as warm, but up to 1.3 ms, against
            # 0.22 ms warm; a decision's result starts up to three jobs in one tick)
            pool.setExpiryTimeout(-1)
        self._signals = _Signals(self)
        self._signals.done.connect(self._on_done)
        self._signals.failed.connect(self._on_failed)
        self._tokens = itertools.count(1)
        self._waiting: dict[int, _Waiting] = {}
        self._latest: dict[str, int] = {}  # channel -> the read whose result may be shown
        self._running: dict[str, int] = {}  # one-at-a-time channel -> the token of its read under way
        self._held: dict[str, _Run] = {}  # one-at-a-time channel -> its newest read, waiting for that one
        self.opened = (
            object()
        )  # the open store's identity (one per opening): what `same_store` results are checked against
        self.dropped = 0  # stale reads thrown away (for tests and the benchmark)

    # -- the window's side of the pacing (infra/window_first.py) --------------------------------------------

    def window_busy(self) -> None:
        """On the GUI thread, at the start of a key press's or a new selection's work: jobs wait for it."""
        self.pacing.window.window_busy()

    def reviewer_acted(self) -> None:
        self.pacing.window.reviewer_acted()

    def reviewer_left(self) -> None:
        self.repaints.end()  # (the switch interval as it was, should the window close inside a repaint)
        self.pacing.window.reviewer_left()

    # -- submitting -----------------------------------------------------------------------------------------

    def new_store(self) -> None:
        """Another store is being opened: results of work asked `same_store` for the one before are dropped."""
        self.opened = object()

    def submit(
        self,
        fn: Callable[[], object],
        on_done: Done | None = None,
        on_error: Failed | None = None,
        *,
        lane: str = SESSION,
        decision: bool = False,
        many: bool = False,
        same_store: bool = False,
        behind: bool = False,
    ) -> int:
        """Run `fn()` on `lane`, after the jobs submitted there before it. `decision`: the reviewer's own write,
        started at once instead of after the key press's burst (it is mostly file I/O, which releases the
        interpreter lock; the burst's wait was up to 50 ms of every decision's time to disk); other jobs step aside
        for the window, and so does a decision on `many` drafts (a bulk's write, ~1 s of mostly Python, began as the
        question closed and the list repainted the moved selection: that repaint, its calls into Python waiting for
        the write, was the bulk's longest tick, 21-27 ms; its store lock is taken after the wait). `same_store`:
        `on_done`/`on_error` are not called once another store was opened. `behind`: a read of the session that may
        come later: until it starts, every job submitted to the lane after it goes first (the agent changes'
        detection, 0.25 s of CPU at 50,000 engrams, had each decision of a run wait for it: key A to durable 340-380
        ms instead of ~120)."""
        token, job = self._enter(lane, "", on_done, on_error, same_store, stoppable=False)
        run = _Run(token, job, fn, self._signals, read=False)
        run.steps_aside = many or not decision
        run.lowered = lane != SESSION
        self._pool(lane).start(run, -1 if behind else 0)
        return token

    def read(
        self,
        channel: str,
        fn: Callable[[], object],
        on_done: Done,
        on_error: Failed | None = None,
        *,
        one_at_a_time: bool = False,
        stoppable: bool = False,
    ) -> int:
        """Read `fn()` on the `READS` lane; `on_done` gets its result on the GUI thread unless a newer read on
        `channel` came meanwhile (or `cancel`). A read cancelled before it started never runs, and one cancelled
        while running stops where it asks `cancelled()`, or (`stoppable`) at its next checkpoint (infra/jobs.py). With
        `one_at_a_time`, a read waits while an older one on the channel runs, and only the newest waiting read runs
        after it: holding J keeps one thread busy with the drafts' extras, not two, and the window's thread shares
        the cores and the interpreter lock with that one only."""
        previous = self._latest.get(channel)
        if previous in self._waiting:
            self._waiting[previous].job.cancel()
        token, job = self._enter(READS, channel, on_done, on_error, False, stoppable=stoppable)
        self._latest[channel] = token
        run = _Run(token, job, fn, self._signals, read=True)
        if not one_at_a_time:
            self._pool(READS).start(run)
        elif channel in self._running:
            passed = self._held.pop(channel, None)
            if passed is not None:  # never run: its result is stale already
                self._waiting.pop(passed.token, None)
                self.dropped += 1
            self._held[channel] = run
        else:
            self._running[channel] = token
            self._pool(READS).start(run)
        return token

    def _enter(
        self, lane: str, channel: str, on_done: Done | None, on_error: Failed | None, same_store: bool, stoppable: bool
    ) -> tuple[int, Job]:
        token = next(self._tokens)
        job = Job(self.pacing, opened=self.opened, stoppable=stoppable)
        self._waiting[token] = _Waiting(lane, channel, job, on_done, on_error, same_store)
        if lane == SESSION and self.pending(SESSION) == 1:
            self.busy_changed.emit(True)
        return token, job

    def _pool(self, lane: str) -> QThreadPool:
        return self._lanes[lane]

    # -- asking -----------------------------------------------------------------------------------------------

    def cancel(self, channel: str) -> None:
        """Whatever is under way on this channel will not be shown."""
        self._latest[channel] = next(self._tokens)
        for waiting in self._waiting.values():
            if waiting.channel == channel:
                waiting.job.cancel()

    def current(self, channel: str, token: int) -> bool:
        return self._latest.get(channel) == token

    def awaited(self, channel: str) -> bool:
        """Whether a read on `channel` is under way whose result will be shown (not cancelled, not stale)."""
        return any(w.channel == channel and self.current(channel, token) for token, w in self._waiting.items())

    def pending(self, lane: str | None = None) -> int:
        """Jobs submitted and not yet answered: on `lane`, or on every lane."""
        return sum(1 for w in self._waiting.values() if lane is None or w.lane == lane)

    def wait(self, msecs: int = 30000, lane: str | None = None) -> bool:
        """Wait until `lane`'s jobs (or every lane's) are done, at most `msecs` each."""
        pools = [p for name, p in self._lanes.items() if lane is None or name == lane]
        return all([pool.waitForDone(msecs) for pool in pools])

    # -- answers, on the GUI thread ---------------------------------------------------------------------------

    def _answered(self, token: int) -> _Waiting | None:
        waiting = self._waiting.pop(token, None)
        if waiting is None:
            return None
        if waiting.lane == SESSION and self.pending(SESSION) == 0:
            self.busy_changed.emit(False)
        if waiting.channel and self._running.get(waiting.channel) == token:
            del self._running[waiting.channel]
            held = self._held.pop(waiting.channel, None)
            if held is not None:
                self._running[waiting.channel] = held.token
                self._pool(READS).start(held)
        return waiting

    def _shown(self, token: int, waiting: _Waiting) -> bool:
        """Whether the answer may reach the window: not a stale read, not the work of a store since closed."""
        if waiting.channel and not self.current(waiting.channel, token):
            return False
        return not (waiting.same_store and waiting.job.opened is not self.opened)

    @Slot(int, object)
    def _on_done(self, token: int, result: object) -> None:
        waiting = self._answered(token)
        if waiting is None or waiting.on_done is None:
            return
        if not self._shown(token, waiting):
            self.dropped += bool(waiting.channel)
            return
        self.window_busy()  # showing a result is the window's work: jobs waiting to start come after its repaint
        waiting.on_done(result)

    @Slot(int, object)
    def _on_failed(self, token: int, error: object) -> None:
        waiting = self._answered(token)
        if waiting is not None and isinstance(error, Cancelled):
            self.dropped += bool(waiting.channel)  # a stale read that stopped where it asked: thrown away as well
            return
        if waiting is None or waiting.on_error is None:
            return
        if self._shown(token, waiting):
            waiting.on_error(error)  # type: ignore[arg-type]
