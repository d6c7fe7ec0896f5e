"""PLUR's lock-file protocol (`<file>.lock`, O_EXCL, token `host:pid:ms:counter`), spoken exactly as Node does.

fcntl/flock locks do not interoperate with PLUR: only this protocol does (TECH-NOTES.md). A dead holder on
this host is taken over at once, an unverifiable one after 60 s of mtime age (10 s when empty), a live one never;
the takeover is PLUR 0.21's, under guard slots (lock_takeover.py). A hold re-touches its lock every 20 s
(lock_heartbeat.py) and is released only if the lock still holds our token.
"""

from __future__ import annotations

import errno
import itertools
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from plur_desk.infra.errors import LockTimeout
from plur_desk.infra.jobs import holding_store_lock
from plur_desk.store.locking import lock_takeover
from plur_desk.store.locking.lock_heartbeat import SYSTEM_CLOCK, Heartbeat, LockClock

STALE_UNKNOWN_SECONDS = 60.0
EMPTY_ABANDONED_SECONDS = 10.0  # a lock file with no token yet: its creator died before writing it
HEARTBEAT_SECONDS = STALE_UNKNOWN_SECONDS / 3  # PLUR 0.21 re-touches a held lock every staleThreshold / 3
_counter = itertools.count(1)
_held: set[str] = set()  # tokens this process holds right now
_STARTED_MS = int(time.time() * 1000)  # tokens of our pid minted before this are a dead predecessor's


@dataclass(frozen=True)
class LockPolicy:
    """How long to wait. Node's engram lock waits up to 180 s; we are interactive and give up sooner."""

    max_wait: float = 20.0
    first_delay: float = 0.005
    max_delay: float = 0.25
    # A person is waiting: a holder that has kept the lock for `stuck_after` seconds already (no routine write takes
    # that long) and still keeps it after we waited `name_holder_after` is named at once (pid, host, for how long)
    # and the wait given up, nothing written. A PLUR write in progress (a 50,000-engram save holds the lock for a
    # second or two) and holders that come and go are waited for up to max_wait: a decision is not refused for
    # landing during an agent's routine write. None (the chain's lock): wait it out, as Node does.
    name_holder_after: float | None = 0.8  # (the answer comes within 1 s)
    stuck_after: float = 5.0


ENGRAMS_POLICY = LockPolicy()
# Node gives up on the tensions lock after ~3.1 s, and on the chain lock after ~8.2 s; we wait like it does.
TENSIONS_POLICY = LockPolicy(max_wait=6.0)
CHAIN_POLICY = LockPolicy(max_wait=8.0, first_delay=0.002, name_holder_after=None)


def make_token() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{int(time.time() * 1000)}:{next(_counter)}"


# The token in a lock file; "" when it cannot be read or is not a regular file (never blocks on a FIFO).
_read = lock_takeover.read_text


def holder_alive(token: str) -> bool | None:
    """True/False when the holder runs on this host; None when that cannot be checked."""
    parts = token.split(":")
    if len(parts) < 2 or parts[0] != socket.gethostname():
        return None
    try:
        pid = int(parts[1])
    except ValueError:
        return None
    if pid <= 0:
        return None
    if pid == os.getpid():
        # Our own pid: alive when we hold it, or when we minted it (another thread of ours is releasing it right
        # now: taking it for dead would "steal" whatever lock replaced it and let two threads in); only a token
        # from before this process started is a dead predecessor's that had this pid.
        if token in _held:
            return True
        try:
            return int(parts[2]) >= _STARTED_MS
        except (IndexError, ValueError):
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError as exc:
        return exc.errno == errno.EPERM
    return True


def describe_holder(token: str, held_for: float | None = None) -> str:
    parts = token.split(":")
    since = f", holding it for {held_for:.0f} s" if held_for is not None and held_for >= 0 else ""
    if len(parts) >= 2 and parts[1].isdigit():
        who = "this computer" if parts[0] == socket.gethostname() else f"host {parts[0]}"
        return f"process {parts[1]} on {who}{since}"
    return f"an unknown process{since}"


def _held_for(token: str, lock: Path) -> float | None:
    """Seconds the holder has held the lock. The lock file's mtime says when it was taken, or last re-touched by
    PLUR 0.21's heartbeat (a lower bound then); the token's `Date.now()` (`host:pid:ms:n`) says when it was taken,
    and is used when it is not later than the mtime and not in the future (a token consistent with the file)."""
    try:
        by_mtime = max(0.0, time.time() - lock.stat().st_mtime)
    except OSError:
        by_mtime = None
    parts = token.split(":")
    if len(parts) >= 3 and parts[2].isdigit():
        by_token = time.time() - int(parts[2]) / 1000
        if by_token >= 0 and (by_mtime is None or by_token >= by_mtime - 1):
            return by_token
    return by_mtime


def abandoned(token: str, mtime: float, now: float) -> bool:
    """PLUR 0.21's isAbandoned/abandonedByAge: a dead holder at once; one we cannot probe by its age alone, 10 s
    for an empty lock (its creator died between create and write) and 60 s for one with a token; a live one never.
    """
    alive = holder_alive(token)
    if alive is not None:
        return not alive
    return now - mtime > (EMPTY_ABANDONED_SECONDS if not token.strip() else STALE_UNKNOWN_SECONDS)


def try_acquire(lock: Path, token: str) -> bool:
    """Publish the lock complete: the token goes to a private file that is hard-linked into place, so nobody ever
    sees our lock file empty (a writer killed between create and write would leave one)."""
    return lock_takeover.publish(lock, token)


def _sweep_publish_files(lock: Path) -> None:
    """Remove publish files that dead processes of this host left behind (killed between writing and linking)."""
    for path in lock.parent.glob(f"{lock.name}.publish.*"):
        token = _read(path)
        if token is not None and holder_alive(token) is False:
            with suppress(FileNotFoundError):
                path.unlink()


def current_holder(target: Path) -> str | None:
    """The token in `<target>.lock`, or None when nobody holds it."""
    return _read(target.with_name(target.name + ".lock"))


@contextmanager
def locked(target: Path, policy: LockPolicy = ENGRAMS_POLICY, clock: LockClock = SYSTEM_CLOCK) -> Iterator[str]:
    """Hold `<target>.lock` for the body, re-touching it every 20 s (PLUR 0.21's heartbeat). An abandoned lock is
    taken over under PLUR 0.21's guard slots. Raises LockTimeout if a live holder keeps it past policy.max_wait."""
    lock = target.with_name(target.name + ".lock")
    token = make_token()
    _held.add(token)  # before the lock file exists, so no thread of ours can take it for a dead predecessor's
    try:
        start = time.monotonic()
        delay = policy.first_delay
        seen_holder, seen_since = "", start  # the holder we are waiting for, and since when
        while not try_acquire(lock, token):
            seen = lock_takeover.inspect(lock)
            if seen is None:
                continue  # released (or replaced) between our attempt and the look
            if seen.holder == token:
                break  # where there are no hard links, a takeover put our own lock back mid-acquire (as in PLUR)
            now = clock.time()
            if abandoned(seen.holder, seen.mtime, now) and lock_takeover.take_over(
                lock, make_token(), make_token(), holder_alive, lambda h, m: abandoned(h, m, clock.time()), now
            ):
                continue
            # a live holder, or another taker holding the guard slot (a few system calls, unless it crashed there)
            now_m = time.monotonic()
            if seen.holder != seen_holder:
                seen_holder, seen_since = seen.holder, now_m
            waited = now_m - start
            kept = (
                policy.name_holder_after is not None
                and now_m - seen_since >= policy.name_holder_after
                and (_held_for(seen.holder, lock) or 0.0) >= policy.stuck_after
            )
            if waited >= policy.max_wait or kept:
                raise LockTimeout(lock, describe_holder(seen.holder, _held_for(seen.holder, lock)), waited)
            left = policy.max_wait - waited
            if policy.name_holder_after is not None:
                left = min(left, policy.name_holder_after - (now_m - seen_since))
            time.sleep(min(delay, max(0.0, left)))
            delay = min(delay * 2, policy.max_delay)
        _sweep_publish_files(lock)
        beat = Heartbeat(lock, token, HEARTBEAT_SECONDS, clock)
        try:
            with holding_store_lock():  # nothing inside waits for the window's repaints or another computation
                yield token
        finally:
            beat.stop()  # before the release, as PLUR stops its heartbeat, so we never touch a lock after it
            lock_takeover.release_if_ours(lock, token)
    finally:
        _held.discard(token)
