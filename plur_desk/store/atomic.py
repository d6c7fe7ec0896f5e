"""Atomic replacement of a store file, as PLUR does it: temp file, fsync, same mode, rename, fsync the directory."""

from __future__ import annotations

import contextlib
import itertools
import os
from pathlib import Path

from plur_desk.infra.crash import crash_point

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


def atomic_write(target: Path, data: bytes | list[bytes], *, default_mode: int = 0o644, crash_label: str = "") -> None:
    """Replace `target` with `data` (or its parts, one after the other). A crash at any point leaves either the old
    file or the new one. The new file keeps the old one's mode, and its owner when root replaces another user's
    file."""
    tmp = target.with_name(f"{target.name}.{os.getpid()}.{next(_counter)}.tmp")
    try:
        old = target.stat()
        mode, owner = old.st_mode & 0o7777, (old.st_uid, old.st_gid)
    except FileNotFoundError:
        mode, owner = default_mode, None
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            for part in [data] if isinstance(data, bytes) else data:
                view = memoryview(part)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
            os.fsync(fd)
            if owner is not None and os.geteuid() == 0 and owner != (os.getuid(), os.getgid()):
                os.fchown(fd, *owner)
        finally:
            os.close(fd)
        os.chmod(tmp, mode)
        if crash_label:
            crash_point(f"{crash_label}-temp-written")
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    fsync_dir(target.parent)
    if crash_label:
        crash_point(f"{crash_label}-renamed")
