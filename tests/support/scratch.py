"""A scratch directory in memory (tmpfs) for tests that write hundreds of store copies."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

MEMORY = Path("/dev/shm")


@contextmanager
def memory_dir(fallback: Path) -> Iterator[Path]:
    """A fresh directory on /dev/shm (tmpfs), removed afterwards; `fallback` (a test's tmp_path) where there is none.
    The code under test makes every system call it makes on disk (each fsync, rename, directory fsync): a crash test
    kills a process, never the machine, so what it proves does not depend on the disk; only the waits for the disk
    go, and the thousands of files are not left behind for pytest to delete in a later session."""
    if not MEMORY.is_dir():
        yield fallback
        return
    path = Path(tempfile.mkdtemp(prefix="plur-desk-test-", dir=MEMORY))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
