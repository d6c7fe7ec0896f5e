"""Opening store files without surprises: never a FIFO, socket, device or directory (which would hang or fail
later), never through a symlink that leaves the store when writing."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from plur_desk.infra.errors import Outcome, WriteFailed


class NotRegularFile(OSError):
    """The path exists but is not a regular file; `str()` says what it is."""


class StoreFileRefused(OSError):
    """A store file plur_desk will not read: a link out of the store, or larger than such a file can be."""


def kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def special_file_problem(path: Path) -> str | None:
    """Why `path` cannot be read as a store file (it exists but is not a regular file, or is a dangling link)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            return f"{path.name} is a symbolic link to {os.readlink(path)}, which does not exist"
        return None
    except OSError as exc:
        return f"{path.name} cannot be examined: {exc.strerror}"
    if not stat.S_ISREG(st.st_mode):
        return f"{path.name} is {kind_of(st.st_mode)}, not a regular file; plur_desk never opens it"
    return None


def open_regular(path: Path) -> tuple[int, os.stat_result]:
    """A read-only descriptor on a regular file, and its stat; NotRegularFile for anything else (opened
    non-blocking, so a FIFO without a writer cannot hang us). The caller closes the descriptor."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(f"{path.name} is {kind_of(st.st_mode)}, not a regular file; plur_desk never opens it")
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def read_regular(path: Path) -> tuple[bytes, os.stat_result]:
    """The whole file and its stat. FileNotFoundError when absent; NotRegularFile for anything but a regular file."""
    fd, st = open_regular(path)
    try:
        chunks = []
        remaining = st.st_size
        while True:
            chunk = os.read(fd, max(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks), st
    finally:
        os.close(fd)


def read_store_file(path: Path, root: Path, limit: int) -> bytes:
    """A small store file plur_desk keeps beside PLUR's (keys.yaml, a journal record), read whole and at once:
    FileNotFoundError when absent; NotRegularFile for a FIFO, socket, device or folder (never blocks on one);
    StoreFileRefused for a link that leaves the store or a file over `limit` bytes."""
    if os.path.lexists(path) and not inside(root, path):
        raise StoreFileRefused(
            f"{path.name} is a link out of the store (to {os.path.realpath(path)}); plur_desk never follows it"
        )
    fd, st = open_regular(path)
    try:
        if st.st_size > limit:
            raise StoreFileRefused(f"{path.name} is {st.st_size} bytes, more than such a file can be ({limit})")
        data = os.read(fd, limit + 1)
        while len(data) <= limit:
            more = os.read(fd, limit + 1 - len(data))
            if not more:
                break
            data += more
        if len(data) > limit:
            raise StoreFileRefused(f"{path.name} grew past {limit} bytes while it was read")
        return data
    finally:
        os.close(fd)


def inside(root: Path, path: Path) -> bool:
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def open_for_append(path: Path, root: Path) -> int:
    """An O_APPEND descriptor on a regular file inside the store (created 0644 when absent). WriteFailed otherwise;
    nothing has been written when it raises."""
    if not inside(root, path):
        raise WriteFailed(
            f"{path} leads out of the store (to {os.path.realpath(path)}); plur_desk never writes through a link "
            "that leaves the store",
            outcome=Outcome.NOTHING_WRITTEN,
        )
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        what = special_file_problem(path) or exc.strerror
        raise WriteFailed(f"cannot open {path} to append history: {what}", outcome=Outcome.NOTHING_WRITTEN) from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise WriteFailed(
                f"{path} is {kind_of(st.st_mode)}, not a regular file; history cannot be appended to it",
                outcome=Outcome.NOTHING_WRITTEN,
            )
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd
