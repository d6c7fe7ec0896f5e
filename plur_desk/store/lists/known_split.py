"""How an earlier split cut engrams.yaml, kept in the parse cache: reopening the same bytes skips the split.

Splitting a 66 MB file (a regex scan for bad lines, one for entry starts, a line count per entry) and scanning it
for drafts took about a third of a warm launch. The cut holds for a file of the same identity whose bytes have the
same SHA-256: the digest is over the bytes just read, so a change that keeps the size, the inode and the
modification time is still seen, and the file is split afresh. The cut is kept in the cache folder, which any
process of the same user can write, and read by a later process, so the digest is an unkeyed strong one (a CRC-32,
used before, can be kept through a change by fixing up 4 bytes). It is the snapshot's own SHA-256, which the
journal records before the first write anyway (`ListFile.file_hash`): taken here, it is not taken again.

The window's launch does not wait for the digest before looking up the drafts (`unchecked`): for a file of the
same identity the cut is taken at once while the digest is computed on a thread of its own (hashing releases the
interpreter lock, once: `ListFile.sha256` asked before the checkpointed hash hashes in one call, where the
checkpoints took the lock back after every MiB behind the thread building the queue, 125 ms instead of 56 ms at
66 MB), and `confirmed` waits for it. Nothing found through such a cut may be shown, written or decided
on before `confirmed()` is true; when it is false, the file is split afresh and everything found through the cut
is dropped (`PlurStore.split_confirmed`, `app.bootstrap.open_session`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from plur_desk.store.atomic import Beside

if TYPE_CHECKING:
    from array import array

    from plur_desk.store.file_identity import FileIdentity


@dataclass(frozen=True)
class KnownSplit:
    """Where each entry starts, its line, which entries are drafts, in the file of `identity` and `sha256` (hex)."""

    identity: FileIdentity
    sha256: str
    starts: array[int]
    lines: array[int]
    drafts: array[int]
    checks: list[Beside[str]] | None = field(default=None, compare=False)  # digests still being computed

    def matches(self, identity: FileIdentity, sha256: Callable[[], str]) -> bool:
        """Whether this is the cut of a file with `identity` and the SHA-256 `sha256()` (asked only when the
        identity is the same). An `unchecked` cut answers on the identity alone and computes the digest beside."""
        if identity != self.identity:
            return False
        if self.checks is not None:
            self.checks.append(Beside(sha256, "plur-desk-split-check"))
            return True
        return sha256() == self.sha256

    def unchecked(self) -> KnownSplit:
        """This cut, taken for a file of the same identity before its digest is known (see the module's doc)."""
        return replace(self, checks=[])

    def confirmed(self) -> bool:
        """Whether every file this cut was taken for has its SHA-256 (waits for the digests being computed)."""
        return all(check.result() == self.sha256 for check in self.checks or ())
