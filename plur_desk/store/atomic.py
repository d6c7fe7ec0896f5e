"""Atomic replacement of a store file, as PLUR does it: temp file, fsync, same mode, rename, fsync the directory.

A store write stages the new file first (`stage`: the temp file written from its parts and fsynced) and renames
it over the target only once its journal step is saved (`Staged.commit`); `atomic_write` does both at once. The
parts are written one after the other, never joined into one more copy: at 50,000 engrams the join held the
interpreter lock for ~40 ms. When the caller needs the new file's bytes (the snapshot a write leaves), they are
read back from the temp file while it is being fsynced: a read, like the writes, releases the interpreter lock.
A store write lets that fsync and read-back go on while it saves the step's journal record (`sync_later`): both
are done before the rename, which waits for them.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import stat
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Generic, TypeVar

from plur_desk.infra.crash import crash_point

_counter = itertools.count(1)
T = TypeVar("T")
Part = bytes | memoryview


def fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # best effort, as in Node
    finally:
        os.close(fd)


class Beside(Generic[T]):
    """`fn()` run on a thread of its own while the caller goes on; `result()` waits for it (and raises what it
    raised). For work that releases the interpreter lock (hashing, fsync), so two cores share one write."""

    def __init__(self, fn: Callable[[], T], name: str = "plur-desk-write") -> None:
        self._fn = fn
        self._value: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._fn()
        except BaseException as exc:  # handed to the caller by result()
            self._error = exc

    def result(self) -> T:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


class Staged:
    """A temp file beside `target` holding the new contents, with the target's mode (and owner when root replaces
    another user's file), fsynced before `commit()` renames it over the target (its fsync and read-back run on
    threads of their own until `synced()`, which `stage` calls unless `sync_later` and `commit()` calls first);
    `discard()` removes it."""

    def __init__(self, target: Path, tmp: Path, syncing: _Syncing) -> None:
        self.target = target
        self.tmp = tmp
        self._data: bytes | None = None  # the new file's bytes, when staged with read_back
        self._syncing: _Syncing | None = syncing
        self._done = False
        self.replaced = False  # the rename over the target happened (whatever is raised after it)

    @property
    def data(self) -> bytes | None:
        """The new file's bytes, when staged with read_back (waits for the read-back)."""
        self.synced()
        return self._data

    def synced(self) -> None:
        """Wait for the fsync and the read-back still running; OSError when either failed (nothing renamed), on
        this call and every later one."""
        if self._syncing is not None:
            self._data = self._syncing.result()
            self._syncing = None

    def commit(self, crash_label: str = "") -> None:
        try:
            self.synced()  # the temp file is durable before its name is
        except BaseException:
            self.discard()
            raise
        if crash_label:
            crash_point(f"{crash_label}-temp-written")
        old = _hold_old(self.target)
        try:
            os.replace(self.tmp, self.target)
        except BaseException:
            self.discard()
            raise
        finally:
            _close_beside(old)
        self._done = self.replaced = True
        fsync_dir(self.target.parent)
        if crash_label:
            crash_point(f"{crash_label}-renamed")

    def discard(self) -> None:
        syncing, self._syncing = self._syncing, None
        if syncing is not None:
            syncing.close()
        if not self._done:
            self._done = True
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.tmp)


class _Syncing:
    """A written temp file's fsync and read-back, each on a thread of its own (both release the interpreter lock),
    waited for at once or while the writer goes on (a store write saves its step's journal record meanwhile). Owns
    the descriptor."""

    def __init__(self, fd: int, size: int, read_back: bool) -> None:
        self._fd = fd
        self._sync = Beside(lambda: os.fsync(fd))
        self._read = Beside(lambda: _read_all(fd, size), "plur-desk-read-back") if read_back else None

    def result(self) -> bytes | None:
        try:
            self._sync.result()
            return self._read.result() if self._read is not None else None
        finally:
            self.close()

    def close(self) -> None:
        if self._fd < 0:
            return
        for thread in (self._sync, self._read):
            if thread is not None:
                with contextlib.suppress(BaseException):
                    thread.result()
        os.close(self._fd)
        self._fd = -1


HOLD_FROM = 1 << 20  # old files at least this large are freed off the writer's path


def _hold_old(target: Path) -> int | None:
    """A descriptor on the file about to be replaced, when it is a large regular file: with it open, the rename
    only unlinks the name, and the old file's blocks are freed when the descriptor is closed, on another thread
    (ext4 freed a 63 MB engrams.yaml inside the rename: 13-24 ms of each decision's wait, 0.0 ms held open)."""
    try:
        info = os.lstat(target)
        if not stat.S_ISREG(info.st_mode) or info.st_size < HOLD_FROM:
            return None
        fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)  # swapped for something else since the lstat: never kept
    return None


def _drop_cached(target: Path) -> None:
    """The kernel's cached pages of a large file about to be replaced are let go, just before the new file's are
    filled: the new file then takes pages the kernel has just freed. Where a virtual machine's freed memory goes back
    to its host after a few seconds (this project's test machines: free page reporting), pages taken from the
    machine's long-free memory are each faulted in from the host: a 63 MB engrams.yaml's write took 150-230 ms of
    CPU instead of ~16 whenever the reviewer had paused (bench/bench_decision.py: p95 211 -> 85 ms). Elsewhere the
    pages freed are those of a file no one will read again. Clean pages only: the file on disk is untouched, and a
    reader that opens it before the rename reads it from the disk."""
    advise = getattr(os, "posix_fadvise", None)  # not on macOS or Windows
    if advise is None:
        return
    fd = _hold_old(target)
    if fd is None:
        return
    try:
        advise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    except OSError:
        pass  # a hint only
    finally:
        os.close(fd)


def _close_beside(fd: int | None) -> None:
    if fd is not None:
        threading.Thread(target=os.close, args=(fd,), name="plur-desk-free-old", daemon=True).start()


def stage(
    target: Path,
    parts: Sequence[Part],
    *,
    default_mode: int = 0o644,
    read_back: bool = False,
    sync_later: bool = False,
) -> Staged:
    """Write `parts` one after the other to a new temp file beside `target` (its mode and owner set) and fsync it.
    With `read_back` the result holds the file's bytes as written, read while the fsync runs. With `sync_later`
    the fsync (and the read-back) go on beside the caller until `Staged.synced()` or `commit()`."""
    tmp = target.with_name(f"{target.name}.{os.getpid()}.{next(_counter)}.tmp")
    _drop_cached(target)
    try:
        old = target.stat()
        mode, owner = old.st_mode & 0o7777, (old.st_uid, old.st_gid)
    except FileNotFoundError:
        mode, owner = default_mode, None
    try:
        fd = os.open(tmp, (os.O_RDWR if read_back else os.O_WRONLY) | os.O_CREAT | os.O_EXCL, mode)
        try:
            size = 0
            for part in parts:
                view = memoryview(part)
                size += len(view)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
            if owner is not None and os.geteuid() == 0 and owner != (os.getuid(), os.getgid()):
                os.fchown(fd, *owner)
            os.fchmod(fd, mode)
            staged = Staged(target, tmp, _Syncing(fd, size, read_back))
            fd = -1  # closed by the fsync's side once it is done
            if not sync_later:
                staged.synced()
        finally:
            if fd >= 0:
                os.close(fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return staged


def _read_all(fd: int, size: int) -> bytes:
    """The first `size` bytes of the file, which has exactly that many (anything else is an error)."""
    chunks = []
    got = 0
    while got < size:
        chunk = os.pread(fd, size - got, got)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    if got != size or os.pread(fd, 1, size):
        raise OSError(f"the temp file holds {got if got != size else 'more than ' + str(size)} bytes, not {size}")
    # one read is the rule; a short read's chunks are all bytes, so this join releases the interpreter lock
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def atomic_write(target: Path, data: bytes | list[bytes], *, default_mode: int = 0o644, crash_label: str = "") -> None:
    """Replace `target` with `data` (or its parts, one after the other). A crash at any point leaves either the old
    file or the new one. The new file keeps the old one's mode, and its owner when root replaces another user's
    file."""
    staged = stage(target, [data] if isinstance(data, bytes) else data, default_mode=default_mode)
    staged.commit(crash_label)
