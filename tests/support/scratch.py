"""A scratch directory in memory (tmpfs) for tests that write many store copies."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

MEMORY = Path("/dev/shm")


@contextmanager
def memory_dir() -> Iterator[Path]:
    """A fresh directory on /dev/shm (tmpfs; the system's temporary directory where there is none), removed
    afterwards. The code under test makes every system call it makes on disk (each fsync, rename, directory
    fsync): these tests kill a process, never the machine, so what they prove does not depend on the disk; only
    the waits for it go, and the files are not left behind for pytest to delete in a later session."""
    path = Path(tempfile.mkdtemp(prefix="plur-desk-test-", dir=MEMORY if MEMORY.is_dir() else None))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
