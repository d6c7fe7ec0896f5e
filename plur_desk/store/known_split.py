"""How an earlier split cut engrams.yaml, kept in the parse cache: reopening the same bytes skips the split.

Splitting a 66 MB file (a regex scan for bad lines, one for entry starts, a line count per entry) and scanning it
for drafts took about a third of a warm launch. The cut holds for a file of the same identity whose bytes have the
same SHA-256: the digest is over the bytes just read, so a change that keeps the size, the inode and the
modification time is still seen, and the file is split afresh. The cut is kept in the cache folder, which any
process of the same user can write, and read by a later process, so the digest is an unkeyed strong one (a CRC-32,
used before, can be kept through a change by fixing up 4 bytes). It is the snapshot's own SHA-256, which the
journal records before the first write anyway (`ListFile.file_hash`): taken here, it is not taken again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from array import array

    from plur_desk.store.list_file import FileIdentity


@dataclass(frozen=True)
class KnownSplit:
    """Where each entry starts, its line, which entries are drafts, in the file of `identity` and `sha256` (hex)."""

    identity: FileIdentity
    sha256: str
    starts: array[int]
    lines: array[int]
    drafts: array[int]

    def matches(self, identity: FileIdentity, sha256: Callable[[], str]) -> bool:
        """Whether this is the cut of a file with `identity` and the SHA-256 `sha256()` (asked only when the
        identity is the same)."""
        return identity == self.identity and sha256() == self.sha256
