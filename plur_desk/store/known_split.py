"""How an earlier split cut engrams.yaml, kept in the parse cache: reopening the same bytes skips the split.

Splitting a 66 MB file (a regex scan for bad lines, one for entry starts, a line count per entry) and scanning it
for drafts took about a third of a warm launch. The cut holds for a file of the same identity whose bytes have the
same CRC-32: the CRC is over the bytes just read, so a change that keeps the size, the inode and the modification
time is still seen, and the file is split afresh.
"""

from __future__ import annotations

import zlib
from array import array
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from plur_desk.store.list_file import FileIdentity


@dataclass(frozen=True)
class KnownSplit:
    """Where each entry starts, its line, which entries are drafts, in the file of `identity` and `crc`."""

    identity: FileIdentity
    crc: int
    starts: array[int]
    lines: array[int]
    drafts: array[int]

    def matches(self, identity: FileIdentity, data: bytes) -> bool:
        return identity == self.identity and len(data) == identity.size and zlib.crc32(data) == self.crc
