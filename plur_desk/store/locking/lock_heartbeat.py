"""The lock heartbeat of PLUR 0.21: while a lock is held, its holder re-touches it every 20 s.

A waiter that cannot probe the holder (another host sharing the store) goes by the lock's age alone and takes it
over past 60 s; the heartbeat keeps a live holder's lock younger than that however long the hold. Transcribed from
PLUR 0.21 `packages/core/src/store/async-lock.ts` (`startHeartbeat`, `touchIfOurs`: interval staleThreshold / 3,
token-checked, stopped on release and on throw) and its CHANGELOG ("A lock held from another machine is no longer
stolen mid-write (P1)"). Ours runs on a thread owned by the hold, so a long blocking step cannot starve it.
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import suppress
from pathlib import Path
from typing import Protocol


class LockClock(Protocol):
    """Wall time for lock ages and the heartbeat's waits; tests pass one they move by hand."""

    def time(self) -> float: ...

    def wait(self, stop: threading.Event, seconds: float) -> bool:
        """Wait `seconds` or until `stop` is set; True when stopped."""
        ...


class SystemLockClock:
    def time(self) -> float:
        return time.time()

    def wait(self, stop: threading.Event, seconds: float) -> bool:
        return stop.wait(seconds)


SYSTEM_CLOCK = SystemLockClock()


def touch_if_ours(lock: Path, token: str, moment: float) -> bool:
    """Set the lock's mtime to `moment` iff it still holds `token`; the same open file is read and touched, so a
    lock that replaced ours between the two is never refreshed by us. Never raises."""
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        if os.read(fd, 4096).decode("utf-8", errors="replace").strip() != token:
            return False
        os.utime(fd, (moment, moment))
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


class Heartbeat:
    """Re-touches one held lock every `interval` seconds until `stop()`; start it right after acquiring."""

    def __init__(self, lock: Path, token: str, interval: float, clock: LockClock = SYSTEM_CLOCK) -> None:
        self._lock = lock
        self._token = token
        self._interval = interval
        self._clock = clock
        self._stop = threading.Event()
        self.beats = 0  # touches made; read by tests waiting for one
        self._thread = threading.Thread(target=self._run, name=f"heartbeat {lock.name}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._clock.wait(self._stop, self._interval):
            if touch_if_ours(self._lock, self._token, self._clock.time()):
                self.beats += 1

    def stop(self) -> None:
        self._stop.set()
        with suppress(RuntimeError):
            self._thread.join()
