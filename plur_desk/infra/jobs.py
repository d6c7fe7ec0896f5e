"""The one context of background work: a computation reaches the job it runs in, and through it the window's pacing.

A `Job` is a piece of background work as the computation inside it sees it: whether it was cancelled (a newer
request made its result worthless), where its progress goes, which store it belongs to, and the window's `Pacing`
(the turns computations take, infra/turns.py, and the window's bursts and the reviewer's decisions they step aside
for, infra/window_first.py). The job is found through one `ContextVar`, set by whoever runs the work (`running`;
the window's `Jobs`, ui/common/jobs.py), so a computation deep in app/ or index/ never takes it as a parameter and no
module keeps it in a global. Outside a job (a command, a test) every call here is free: no turn, no pause, never
cancelled.

A computation marks its steps with `checkpoint()`: the progress is reported, a cancelled stoppable job stops there
(`Cancelled`), a repaint of the window under way is waited for (its calls into Python need the interpreter lock:
ui/common/repaint_marks.py), and the turn is handed on to another computation that waits (or, for analytics,
`reviewer=True`: the step also waits while the reviewer is deciding). A step that must not stop (inside a
computation whose state a stop would leave half made) gives way to the repaint alone (`give_way()`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from typing import TypeVar

from plur_desk.infra.turns import PATIENCE_S, Turns
from plur_desk.infra.window_first import WindowFirst
from plur_desk.infra.workers import lower_this_thread

T = TypeVar("T")

Progress = Callable[[int, int], None]  # (done, total)


class Cancelled(Exception):
    """A stoppable job was cancelled: the computation stops at its next checkpoint, and its result is not shown."""


class Pacing:
    """One window's pacing of its background work: the computations' turns, the window's bursts and the reviewer's
    decisions they step aside for, and how far below the window its worker processes run (infra/workers.py)."""

    def __init__(self, workers_below: int = 0, threads_below: int = 0) -> None:
        self.turns = Turns()
        self.window = WindowFirst(self.turns)
        self.workers_below = workers_below
        self.threads_below = threads_below

    def lower_job_thread(self) -> None:
        """On a job's thread as it starts a job: that thread runs `threads_below` nice steps below the window's."""
        if self.threads_below > 0:
            lower_this_thread(self.threads_below)


class Job:
    """One piece of background work. `opened` is the identity of the store it was started for (whatever the
    runner uses for one opening of a store); `stoppable`: its computation may stop early at a checkpoint once
    it is cancelled (a read whose result nobody will see), where other work runs to its end whatever happens."""

    def __init__(
        self,
        pacing: Pacing | None = None,
        *,
        opened: object = None,
        stoppable: bool = False,
        progress: Progress | None = None,
    ) -> None:
        self.pacing, self.opened, self.stoppable, self.progress = pacing, opened, stoppable, progress
        self._cancelled = threading.Event()

    def cancel(self) -> None:
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def checkpoint(self, done: int | None = None, total: int = 0, *, reviewer: bool = False) -> None:
        """Between two steps of the computation (see the module's docstring)."""
        if self.stoppable and self._cancelled.is_set():
            raise Cancelled
        if done is not None and self.progress is not None:
            self.progress(done, total)
        if self.pacing is None or _store_locks.get():
            return
        self.pacing.window.yield_to_repaint()  # a repaint of the window under way goes first (window_first.py)
        if reviewer:
            self.pacing.window.yield_to_reviewer()
        else:
            self.pacing.turns.step()


_current: ContextVar[Job | None] = ContextVar("plur_desk_job", default=None)
_store_locks: ContextVar[int] = ContextVar("plur_desk_store_locks", default=0)


@contextmanager
def holding_store_lock() -> Iterator[None]:
    """The block holds a store file's lock (store/locking/lock.py `locked`): no step inside it waits for the window
    or for another computation (an agent may be waiting for the lock); progress and cancel still count."""
    token = _store_locks.set(_store_locks.get() + 1)
    try:
        yield
    finally:
        _store_locks.reset(token)


def current_job() -> Job | None:
    """The job this code runs in, if any."""
    return _current.get()


@contextmanager
def running(job: Job) -> Iterator[Job]:
    """Run the block as `job`: every `checkpoint()` inside it, on this thread, is the job's."""
    token = _current.set(job)
    try:
        yield job
    finally:
        _current.reset(token)


def checkpoint(done: int | None = None, total: int = 0, *, reviewer: bool = False) -> None:
    """The current job's checkpoint (nothing outside a job)."""
    job = _current.get()
    if job is not None:
        job.checkpoint(done, total, reviewer=reviewer)


def checkpoints(items: Iterable[T], every: int = 512) -> Iterator[T]:
    """`items`, with a `checkpoint()` after every `every` of them: a long comprehension with its steps."""
    for n, item in enumerate(items, start=1):
        yield item
        if n % every == 0:
            checkpoint()


def giving_way(items: Iterable[T], every: int = 256) -> Iterator[T]:
    """`items`, with a `give_way()` after every `every` of them: a long comprehension a repaint need not wait behind,
    in a computation that must not stop or hand its turn on midway (a detection on the session's lane)."""
    for n, item in enumerate(items, start=1):
        yield item
        if n % every == 0:
            give_way()


def give_way() -> None:
    """Between the small steps of a computation (a bulk approval's contradiction check, each signature verified):
    wait while the window repaints (infra/window_first.py `yield_to_repaint`), at most `MAX_WAIT_S` each time. Never
    stops the computation. Free outside a job, on the window's own thread and while a store's lock is held."""
    job = _current.get()
    if job is not None and job.pacing is not None and not _store_locks.get():
        job.pacing.window.yield_to_repaint()


def cancelled() -> bool:
    """Whether the current job was cancelled (asked by a computation that stops in its own way)."""
    job = _current.get()
    return job is not None and job.cancelled


def computing(patience: float = PATIENCE_S) -> AbstractContextManager[None]:
    """The block is a computation: it runs as its turn (infra/turns.py; waiting at most `patience` for it) in a job
    that paces, freely outside one."""
    job = _current.get()
    return nullcontext() if job is None or job.pacing is None else job.pacing.turns.turn(patience)


def waiting() -> AbstractContextManager[None]:
    """Inside a computation, a wait that is not computing (a process, a pipe, a sleep): the turn goes to another
    meanwhile (infra/turns.py `paused`)."""
    job = _current.get()
    return nullcontext() if job is None or job.pacing is None else job.pacing.turns.paused()


def workers_below() -> int:
    """How many nice steps below this process the current job's worker processes run (0 outside a window's job)."""
    job = _current.get()
    return 0 if job is None or job.pacing is None else job.pacing.workers_below
