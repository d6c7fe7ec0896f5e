"""Atomic replacement of a store file, as PLUR does it: temp file, fsync, same mode, rename, fsync the directory."""

from __future__ import annotations

import contextlib
import itertools
import os
from pathlib import Path

_counter = itertools.count(1)


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


def atomic_write(target: Path, data: bytes, *, default_mode: int = 0o644) -> None:
    """Replace `target` with `data`. A crash at any point leaves either the old file or the new one."""
    tmp = target.with_name(f"{target.name}.{os.getpid()}.{next(_counter)}.tmp")
    try:
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = default_mode
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    fsync_dir(target.parent)
