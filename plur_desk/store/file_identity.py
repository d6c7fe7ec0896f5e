"""What tells that a file is still the one read: its size, modification time and inode together."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class FileIdentity:
    """What stat says of a file: a changed size, mtime or inode means it may have changed."""

    size: int
    mtime_ns: int
    inode: int

    @staticmethod
    def of(stat: os.stat_result) -> FileIdentity:
        return FileIdentity(stat.st_size, stat.st_mtime_ns, stat.st_ino)
