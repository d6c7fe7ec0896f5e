"""A history month file read on demand: the history index keeps where each line starts, not its bytes, and every
read is checked against a keyed digest of each 16 KiB of what was indexed (BLAKE2b, 8 bytes, with a key drawn
per process: no one who can write the file can make other bytes with the same digests, as 4 chosen bytes do for
a CRC-32), so a file that changed under us (rewritten in place, replaced by a git pull, shortened, made into
something that is not a regular file) is never served: the read raises `MonthChanged`, the file is marked
changed, and the history is read again.

Growth is read incrementally: `catch_up` checks the bytes indexed so far, then hands over only the complete lines
appended since. After an append (same file, grown, no read failed since the last check) it checks only the last,
partly filled chunk, which the new bytes extend: a rewrite of earlier chunks that comes with growth is found by
the next read of those chunks, as any rewrite is. Otherwise (the file's stat changed without growth, or a read
failed) it checks every byte indexed (one sequential read of the month).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from plur_desk.store.safe_open import open_regular

CHUNK = 16 << 10  # bytes per digest: reading one line reads and checks the chunk(s) it lies in
READ = 4 << 20  # bytes per read while indexing: the runs of lines handed over at once
DIGEST = 8  # bytes per chunk's digest
_KEY = os.urandom(16)  # known only to this process: digests cannot be aimed at


def _hasher(data: bytes | memoryview = b"") -> hashlib.blake2b:
    return hashlib.blake2b(data, digest_size=DIGEST, key=_KEY)


class MonthChanged(OSError):
    """A month file no longer holds the bytes the history index was built from."""


@dataclass(frozen=True)
class Extent:
    """What was indexed of a month file; replaced whole (never changed in place), so a reader on another thread
    checks its bytes against one consistent size and list of digests."""

    size: int = 0  # bytes indexed: complete lines only
    digests: bytes = b""  # DIGEST bytes for each CHUNK of [0, size); the last one may cover less
    lines: int = 0  # line feeds in [0, size): the number of the last line indexed
    ident: tuple[int, int] = (0, 0)  # st_dev, st_ino
    seen: tuple[int, ...] = ()  # the file's stat when it was last read (see `_seen`)


def _seen(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode)


class _Digests:
    """The digest of each CHUNK of a stream of bytes fed in file order, from offset 0 or from the first byte after
    the full chunks whose digests are `done`."""

    def __init__(self, done: bytes = b"") -> None:
        self.done = bytearray(done)  # the digests of the full chunks
        self.partial = _hasher()
        self.filled = 0

    def feed(self, data: bytes | memoryview) -> None:
        view, at, size = memoryview(data), 0, len(data)
        if self.filled:
            at = min(CHUNK - self.filled, size)
            self.partial.update(view[:at])
            self.filled += at
            if self.filled == CHUNK:
                self.done += self.partial.digest()
                self.partial, self.filled = _hasher(), 0
        done = self.done
        while at + CHUNK <= size:
            done += _hasher(view[at : at + CHUNK]).digest()
            at += CHUNK
        if at < size:
            self.partial, self.filled = _hasher(view[at:]), size - at

    def result(self) -> bytes:
        return bytes(self.done) + self.partial.digest() if self.filled else bytes(self.done)


class MonthFile:
    """One month file of the history: `catch_up` indexes it (all of it the first time, then what was appended),
    `read` returns checked bytes of what was indexed. Written by one thread (the one indexing); read from any."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.month = path.name[:-6] if path.name.endswith(".jsonl") else path.stem
        self.extent = Extent()
        self.failed = 0  # reads that found bytes not the ones indexed (or could not read the file)
        self.cleared = 0  # of those, how many a catch-up since found every indexed byte still there

    @property
    def changed(self) -> bool:
        """A read failed since the last catch-up that checked every indexed byte: the history must be read again
        (or found unchanged; a failure counted meanwhile on another thread stays counted)."""
        return self.failed != self.cleared

    def changed_on_disk(self) -> bool:
        """Whether the file is not as last read (one stat): appended to, rewritten, replaced or gone."""
        if self.changed:
            return True
        try:
            return _seen(os.stat(self.path)) != self.extent.seen
        except OSError:
            return True

    def _changed(self, why: str) -> MonthChanged:
        self.failed += 1
        return MonthChanged(f"history/{self.path.name} changed on disk ({why}); it is read again")

    def read(self, lo: int, hi: int) -> tuple[bytes, int]:
        """The indexed bytes [lo, hi), checked: (data, base) with the span at data[lo - base : hi - base]."""
        extent = self.extent
        if not 0 <= lo <= hi <= extent.size:
            raise self._changed("a line outside what was indexed")
        first = lo // CHUNK
        base, end = first * CHUNK, min(-(-hi // CHUNK) * CHUNK, extent.size)
        try:
            fd, _st = open_regular(self.path)
        except OSError as exc:
            raise self._changed(exc.strerror or str(exc)) from exc
        try:
            data = os.pread(fd, end - base, base)
        finally:
            os.close(fd)
        if len(data) != end - base:
            raise self._changed("shorter than indexed")
        view, digests = memoryview(data), extent.digests
        for n, at in enumerate(range(0, end - base, CHUNK), start=first):
            if _hasher(view[at : at + CHUNK]).digest() != digests[n * DIGEST : (n + 1) * DIGEST]:
                raise self._changed("bytes differ from those indexed")
        return data, base

    def catch_up(self, each: Callable[[int, int, bytes], None]) -> bool:
        """Index what was appended since the last call (the whole file the first time): each run of complete
        lines goes to `each(offset, first_number, data)` (line numbers count every line feed, from 1). Raises
        MonthChanged, before handing anything over, when a byte it checks (see the module) is not the one
        indexed. True when lines were added."""
        old, failed = self.extent, self.failed
        try:
            fd, st = open_regular(self.path)
        except OSError as exc:
            raise self._changed(exc.strerror or str(exc)) from exc
        try:
            ident = (st.st_dev, st.st_ino)
            if old.size and (ident != old.ident or st.st_size < old.size):
                raise self._changed("replaced or shortened")
            appended = failed == self.cleared and st.st_size > old.size
            digests = self._check_tail(fd, old) if appended else self._check_all(fd, old)
            self.cleared = failed  # what was indexed is still there: the reads that failed before found no change
            return self._read_new(fd, st, digests, each)
        finally:
            os.close(fd)

    def _check_all(self, fd: int, old: Extent) -> _Digests:
        digests, pos = _Digests(), 0
        while pos < old.size:
            data = os.pread(fd, min(READ, old.size - pos), pos)
            if not data:
                raise self._changed("shortened")
            digests.feed(data)
            pos += len(data)
        if digests.result() != old.digests:
            raise self._changed("bytes differ from those indexed")
        return digests

    def _check_tail(self, fd: int, old: Extent) -> _Digests:
        """Only the last chunk, when partly filled: the one the appended bytes go on in."""
        tail = old.size // CHUNK * CHUNK
        if tail == old.size:
            return _Digests(old.digests)
        data = os.pread(fd, old.size - tail, tail)
        if _hasher(data).digest() != old.digests[-DIGEST:]:
            raise self._changed("bytes differ from those indexed")
        digests = _Digests(old.digests[:-DIGEST])
        digests.feed(data)
        return digests

    def _read_new(
        self, fd: int, st: os.stat_result, digests: _Digests, each: Callable[[int, int, bytes], None]
    ) -> bool:
        """Complete lines from the indexed size to the size stat gave (a cut-off last line waits); the extent
        grows before each run is handed over, so a reader never finds a line beyond it."""
        old = self.extent
        size, lines, carry, added = old.size, old.lines, b"", False
        pos = size
        while pos < st.st_size:
            data = os.pread(fd, min(READ, st.st_size - pos), pos)
            if not data:
                break
            pos += len(data)
            if carry:
                data = carry + data
            cut = data.rfind(b"\n") + 1
            carry = data[cut:]
            if not cut:
                continue
            block = data[:cut] if cut < len(data) else data
            digests.feed(block)
            count = block.count(b"\n")
            self.extent = Extent(size + cut, digests.result(), lines + count, old.ident, old.seen)
            each(size, lines, block)
            size, lines, added = size + cut, lines + count, True
        self.extent = Extent(size, digests.result(), lines, (st.st_dev, st.st_ino), _seen(st))
        return added
