"""Work off the GUI thread, results back as slots: `Runner` runs session work (loading, writes, reloads) one job at
a time; `ReadPool` runs reads for the screen in parallel and drops a result a newer request made stale."""

from __future__ import annotations

import itertools
import traceback
from collections.abc import Callable

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

from plur_desk.infra.window_first import window_busy, yield_to_window


class _Signals(QObject):
    done = Signal(int, object)
    failed = Signal(int, object)
    progress = Signal(int, object)


class _Job(QRunnable):
    def __init__(self, token: int, fn: Callable[[], object], signals: _Signals, steps_aside: bool = True) -> None:
        super().__init__()
        self.token, self.fn, self.signals, self.steps_aside = token, fn, signals, steps_aside

    def run(self) -> None:
        fn, self.fn = self.fn, _done  # the pool's wrapper may outlive the run: it keeps no closure (a session) alive
        if self.steps_aside:
            yield_to_window()  # started during a key press's work: after it (infra/window_first.py)
        try:
            result = fn()
        except Exception as exc:
            exc.__traceback_text__ = traceback.format_exc()  # type: ignore[attr-defined]
            self.signals.failed.emit(self.token, exc)
        else:
            self.signals.done.emit(self.token, result)
        finally:
            del fn  # a failure's traceback (sent to the window) keeps this frame, and with it its locals


def _done() -> object:
    raise RuntimeError("a job runs once")


class Runner(QObject):
    """A serial queue: session reads and writes never overlap, and the window never waits for them."""

    busy_changed = Signal(bool)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._signals = _Signals(self)
        self._signals.done.connect(self._on_done)
        self._signals.failed.connect(self._on_failed)
        self._callbacks: dict[int, tuple[Callable[[object], None] | None, Callable[[Exception], None] | None]] = {}
        self._tokens = itertools.count(1)

    @property
    def pending(self) -> int:
        return len(self._callbacks)

    def submit(
        self,
        fn: Callable[[], object],
        on_done: Callable[[object], None] | None = None,
        on_error: Callable[[Exception], None] | None = None,
        *,
        decision: bool = False,
    ) -> int:
        """`decision`: the reviewer's own write, started at once instead of after the key press's burst (it is
        mostly file I/O, which releases the interpreter lock; the burst's wait was up to 50 ms of every decision's
        time to disk). Other jobs still step aside for the window."""
        token = next(self._tokens)
        self._callbacks[token] = (on_done, on_error)
        if len(self._callbacks) == 1:
            self.busy_changed.emit(True)
        self._pool.start(_Job(token, fn, self._signals, steps_aside=not decision))
        return token

    def wait(self, msecs: int = 30000) -> bool:
        return self._pool.waitForDone(msecs)

    @Slot(int, object)
    def _on_done(self, token: int, result: object) -> None:
        on_done, _ = self._callbacks.pop(token, (None, None))
        if not self._callbacks:
            self.busy_changed.emit(False)
        if on_done is not None:
            window_busy()  # showing a result is the window's work: background jobs step aside meanwhile
            on_done(result)

    @Slot(int, object)
    def _on_failed(self, token: int, error: object) -> None:
        _, on_error = self._callbacks.pop(token, (None, None))
        if not self._callbacks:
            self.busy_changed.emit(False)
        if on_error is not None:
            on_error(error)  # type: ignore[arg-type]


class ReadPool(QObject):
    """Reads for the screen (search, similar engrams, a draft's detail, a timeline) on worker threads, off the
    GUI thread, several at once. Each read has a channel ("search", "detail", …) and a generation number: a newer
    request on the same channel makes the older one stale, and a stale result is dropped, never shown (the person
    typed on, or moved to the next draft, meanwhile). Reads never write: writes stay on the serial Runner."""

    def __init__(self, parent: QObject | None = None, threads: int = 2) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(threads)
        self._signals = _Signals(self)
        self._signals.done.connect(self._on_done)
        self._signals.failed.connect(self._on_failed)
        self._tokens = itertools.count(1)
        self._latest: dict[str, int] = {}  # channel -> the generation whose result may be shown
        self._callbacks: dict[int, tuple[str, Callable[[object], None], Callable[[Exception], None] | None]] = {}
        self._running: dict[str, int] = {}  # one-at-a-time channel -> the token of its read under way
        self._held: dict[str, _Job] = {}  # one-at-a-time channel -> its newest read, waiting for that one
        self.dropped = 0  # stale results thrown away (for tests and the benchmark)

    def submit(
        self,
        channel: str,
        fn: Callable[[], object],
        on_done: Callable[[object], None],
        on_error: Callable[[Exception], None] | None = None,
        *,
        one_at_a_time: bool = False,
    ) -> int:
        """Read `fn()` on a worker; `on_done` gets its result on the GUI thread unless a newer read on `channel`
        came meanwhile. With `one_at_a_time`, a read waits while an older one on the channel runs, and only the
        newest waiting read runs after it: holding J keeps one thread busy with the drafts' extras, not two, and
        the window's thread shares the cores and the interpreter lock with that one only."""
        return self.submit_stoppable(channel, lambda _stale: fn(), on_done, on_error, one_at_a_time=one_at_a_time)

    def submit_stoppable(
        self,
        channel: str,
        fn: Callable[[Callable[[], bool]], object],
        on_done: Callable[[object], None],
        on_error: Callable[[Exception], None] | None = None,
        *,
        one_at_a_time: bool = False,
    ) -> int:
        """As `submit`, for a long read that can stop early: `fn(stale)` may ask `stale()` as it goes, true once a
        newer request on the channel (or `cancel`) means its result will not be shown."""
        token = next(self._tokens)
        self._latest[channel] = token
        self._callbacks[token] = (channel, on_done, on_error)
        latest = self._latest

        def stale() -> bool:
            return latest.get(channel) != token

        def unless_stale() -> object:
            # a read made stale while it waited for a thread (J held down) is not worth doing: skipping it keeps
            # the threads, and the interpreter lock the GUI thread needs, free for the read that will be shown
            return None if stale() else fn(stale)

        job = _Job(token, unless_stale, self._signals)
        if not one_at_a_time:
            self._pool.start(job)
        elif channel in self._running:
            passed = self._held.pop(channel, None)
            if passed is not None:  # never run: its result is stale already
                self._callbacks.pop(passed.token, None)
                self.dropped += 1
            self._held[channel] = job
        else:
            self._running[channel] = token
            self._pool.start(job)
        return token

    def _finished(self, channel: str, token: int) -> None:
        if self._running.get(channel) != token:
            return
        del self._running[channel]
        job = self._held.pop(channel, None)
        if job is not None:
            self._running[channel] = job.token
            self._pool.start(job)

    def cancel(self, channel: str) -> None:
        """Whatever is under way on this channel will not be shown."""
        self._latest[channel] = next(self._tokens)

    def current(self, channel: str, token: int) -> bool:
        return self._latest.get(channel) == token

    def awaited(self, channel: str) -> bool:
        """Whether a read on `channel` is under way whose result will be shown (not cancelled, not stale)."""
        return any(ch == channel and self.current(ch, token) for token, (ch, _d, _e) in self._callbacks.items())

    @property
    def pending(self) -> int:
        return len(self._callbacks)

    def wait(self, msecs: int = 30000) -> bool:
        return self._pool.waitForDone(msecs)

    @Slot(int, object)
    def _on_done(self, token: int, result: object) -> None:
        channel, on_done, _ = self._callbacks.pop(token, ("", None, None))
        self._finished(channel, token)
        if on_done is None:
            return
        if not self.current(channel, token):
            self.dropped += 1
            return
        window_busy()  # the result's repaint comes first, then the jobs waiting to start (infra/window_first.py)
        on_done(result)

    @Slot(int, object)
    def _on_failed(self, token: int, error: object) -> None:
        channel, _, on_error = self._callbacks.pop(token, ("", None, None))
        self._finished(channel, token)
        if on_error is not None and self.current(channel, token):
            on_error(error)  # type: ignore[arg-type]
