"""A history month file read on demand: the history index keeps where each line starts, not its bytes, and every
read is checked against a CRC-32 of each 16 KiB of what was indexed, so a file that changed under us (rewritten in
place, replaced by a git pull, shortened, made into something that is not a regular file) is never served: the
read raises `MonthChanged`, the file is marked changed, and the history is read again.

Growth is read incrementally: `catch_up` first checks that every byte indexed so far is still there (one
sequential read of the month, at several GB/s), then hands over only the complete lines appended since.
"""

from __future__ import annotations

import os
import stat
import zlib
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from plur_desk.store.safe_open import NotRegularFile, kind_of

CHUNK = 16 << 10  # bytes per CRC: reading one line reads and checks the chunk(s) it lies in
READ = 4 << 20  # bytes per read while indexing: the runs of lines handed over at once


class MonthChanged(OSError):
    """A month file no longer holds the bytes the history index was built from."""


@dataclass(frozen=True)
class Extent:
    """What was indexed of a month file; replaced whole (never changed in place), so a reader on another thread
    checks its bytes against one consistent size and CRC list."""

    size: int = 0  # bytes indexed: complete lines only
    crcs: array[int] = field(
        default_factory=lambda: array("I")
    )  # CRC-32 of each CHUNK of [0, size); the last one may cover less
    lines: int = 0  # line feeds in [0, size): the number of the last line indexed
    ident: tuple[int, int] = (0, 0)  # st_dev, st_ino
    seen: tuple[int, ...] = ()  # the file's stat when it was last read (see `_seen`)


def _seen(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode)


def open_regular(path: Path) -> int:
    """A read-only descriptor on a regular file; NotRegularFile for anything else (opened non-blocking, so a FIFO
    without a writer cannot hang us)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(f"{path.name} is {kind_of(mode)}, not a regular file; plur_desk never opens it")
    except BaseException:
        os.close(fd)
        raise
    return fd


class _Crcs:
    """CRC-32 per CHUNK of a stream of bytes fed in file order from offset 0."""

    def __init__(self) -> None:
        self.done = array("I")
        self.partial = 0
        self.filled = 0

    def feed(self, data: bytes) -> None:
        view, at, size = memoryview(data), 0, len(data)
        if self.filled:
            at = min(CHUNK - self.filled, size)
            self.partial = zlib.crc32(view[:at], self.partial)
            self.filled += at
            if self.filled == CHUNK:
                self.done.append(self.partial)
                self.partial = self.filled = 0
        done = self.done
        while at + CHUNK <= size:
            done.append(zlib.crc32(view[at : at + CHUNK]))
            at += CHUNK
        if at < size:
            self.partial, self.filled = zlib.crc32(view[at:]), size - at

    def result(self) -> array[int]:
        out = array("I", self.done)
        if self.filled:
            out.append(self.partial)
        return out


class MonthFile:
    """One month file of the history: `catch_up` indexes it (all of it the first time, then what was appended),
    `read` returns checked bytes of what was indexed. Written by one thread (the one indexing); read from any."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.month = path.name[:-6] if path.name.endswith(".jsonl") else path.stem
        self.extent = Extent()
        self.changed = False  # a read found bytes that are not the ones indexed: the history must be read again

    def changed_on_disk(self) -> bool:
        """Whether the file is not as last read (one stat): appended to, rewritten, replaced or gone."""
        if self.changed:
            return True
        try:
            return _seen(os.stat(self.path)) != self.extent.seen
        except OSError:
            return True

    def _changed(self, why: str) -> MonthChanged:
        self.changed = True
        return MonthChanged(f"history/{self.path.name} changed on disk ({why}); it is read again")

    def read(self, lo: int, hi: int) -> tuple[bytes, int]:
        """The indexed bytes [lo, hi), checked: (data, base) with the span at data[lo - base : hi - base]."""
        extent = self.extent
        if not 0 <= lo <= hi <= extent.size:
            raise self._changed("a line outside what was indexed")
        first = lo // CHUNK
        base, end = first * CHUNK, min(-(-hi // CHUNK) * CHUNK, extent.size)
        try:
            fd = open_regular(self.path)
        except OSError as exc:
            raise self._changed(exc.strerror or str(exc)) from exc
        try:
            data = os.pread(fd, end - base, base)
        finally:
            os.close(fd)
        if len(data) != end - base:
            raise self._changed("shorter than indexed")
        view, crcs = memoryview(data), extent.crcs
        for n, at in enumerate(range(0, end - base, CHUNK), start=first):
            if zlib.crc32(view[at : at + CHUNK]) != crcs[n]:
                raise self._changed("bytes differ from those indexed")
        return data, base

    def catch_up(self, each: Callable[[int, int, bytes], None]) -> bool:
        """Index what was appended since the last call (the whole file the first time): each run of complete
        lines goes to `each(offset, first_number, data)` (line numbers count every line feed, from 1). Raises
        MonthChanged, before handing anything over, when a byte indexed before is not still there. True when
        lines were added."""
        old = self.extent
        try:
            fd = open_regular(self.path)
        except OSError as exc:
            raise self._changed(exc.strerror or str(exc)) from exc
        try:
            st = os.fstat(fd)
            ident = (st.st_dev, st.st_ino)
            if old.size and (ident != old.ident or st.st_size < old.size):
                raise self._changed("replaced or shortened")
            crcs, pos = _Crcs(), 0
            while pos < old.size:
                data = os.pread(fd, min(READ, old.size - pos), pos)
                if not data:
                    raise self._changed("shortened")
                crcs.feed(data)
                pos += len(data)
            if crcs.result() != old.crcs:
                raise self._changed("bytes differ from those indexed")
            return self._read_new(fd, st, crcs, each)
        finally:
            os.close(fd)

    def _read_new(self, fd: int, st: os.stat_result, crcs: _Crcs, each: Callable[[int, int, bytes], None]) -> bool:
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
            crcs.feed(block)
            count = block.count(b"\n")
            self.extent = Extent(size + cut, crcs.result(), lines + count, old.ident, old.seen)
            each(size, lines, block)
            size, lines, added = size + cut, lines + count, True
        self.extent = Extent(size, crcs.result(), lines, (st.st_dev, st.st_ino), _seen(st))
        return added
