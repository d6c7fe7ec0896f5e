"""Every history line as (raw, month, number), read from its month file when asked for: what stays in memory is
where each line starts (4 bytes a line) and a digest per 16 KiB of each file (`store/history/month_lines.py`), not the bytes
(~220 MB at a million lines). A read of a file that changed since it was indexed raises `MonthChanged`.
`Events` is a view of lines as parsed events, newest first, for the History pane, timelines and exports."""

from __future__ import annotations

import bisect
import itertools
import json
from array import array
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from itertools import repeat
from typing import overload

from plur_desk.store.history.month_lines import MonthChanged, MonthFile

__all__ = ["MonthChanged"]  # raised by reads; callers catch it from here

Line = tuple[bytes, str, int]  # raw JSON, month, 1-based line number (0: appended by us, not read from a file)
_BLANK = b" \t\n\r\x0b\x0c"  # what bytes.strip() removes: a line of only these is not kept (as before)
RANGE_LINES = 4096  # lines read, split and paired at once while iterating (about 1 ms of the interpreter each)
DENSE = 8  # positions in one piece read as one span when they are at least 1 in DENSE of the lines between


class _Piece:
    """A run of complete lines of one month file: where each starts (relative to `base`), where the run ends, and
    their line numbers (None: consecutive from `first`). The text is read from the file."""

    __slots__ = ("base", "file", "first", "month", "numbers", "starts", "stop")

    def __init__(
        self, file: MonthFile, base: int, starts: array[int], stop: int, numbers: array[int] | None, first: int
    ) -> None:
        self.file, self.month, self.base, self.starts, self.stop = file, file.month, base, starts, stop
        self.numbers, self.first = numbers, first

    def __len__(self) -> int:
        return len(self.starts)

    def lines(self, lo: int, hi: int) -> list[Line]:
        """Lines lo..hi-1, read in one call and split (no Python work per line but the tuple)."""
        if lo >= hi:
            return []
        starts, base = self.starts, self.base
        a, b = base + starts[lo], base + (starts[hi] if hi < len(starts) else self.stop)
        data, at = self.file.read(a, b)
        parts = data[a - at : b - at].split(b"\n")
        parts.pop()  # after the last line feed
        if len(parts) != hi - lo:  # blank lines in between are in the bytes but not lines
            parts = [p for p in parts if p.strip()]
            if len(parts) != hi - lo:
                raise self.file._changed("lines differ from those indexed")
        numbers = self.numbers[lo:hi] if self.numbers is not None else range(self.first + lo, self.first + hi)
        return list(zip(parts, repeat(self.month), numbers, strict=False))  # parts and numbers: one per line

    def raw(self, lo: int, hi: int) -> bytes:
        """Lines lo..hi-1 as the file holds them, each ending in a line feed: one read, no object per line (what
        the writer ledger scans with byte searches)."""
        starts, base = self.starts, self.base
        a, b = base + starts[lo], base + (starts[hi] if hi < len(starts) else self.stop)
        data, at = self.file.read(a, b)
        data = data[a - at : b - at]
        if data.count(b"\n") != hi - lo:  # blank lines in between: only the lines
            return b"".join(line + b"\n" for line, _month, _number in self.lines(lo, hi))
        return data


class _Kept:
    """Lines held in memory: what we appended before the history was read (read from the files afterwards)."""

    __slots__ = ("kept",)

    def __init__(self, line: Line) -> None:
        self.kept = [line]

    def __len__(self) -> int:
        return 1

    def lines(self, lo: int, hi: int) -> list[Line]:
        return self.kept[lo:hi]

    def raw(self, lo: int, hi: int) -> bytes:
        return b"".join(line + b"\n" for line, _month, _number in self.kept[lo:hi])


def piece_of(file: MonthFile, offset: int, first_number: int, data: bytes) -> tuple[_Piece, array[int], array[int]]:
    """The piece for one run of complete lines read at `offset` (numbered from first_number + 1), with the offsets
    in `data` where each kept line starts and ends (blank lines are not lines)."""
    import numpy as np  # loaded with the history, not before the first draft is shown

    view = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(view == 10)
    starts = np.concatenate((np.zeros(1, dtype=np.int64), ends[:-1] + 1))
    numbers = np.arange(first_number + 1, first_number + 1 + len(ends), dtype=np.int64)
    odd = np.flatnonzero((starts == ends) | np.isin(view[starts], np.frombuffer(_BLANK, dtype=np.uint8)))
    blank = [int(i) for i in odd if not data[starts[i] : ends[i]].strip()]
    if blank:
        keep = np.ones(len(ends), dtype=bool)
        keep[blank] = False
        starts, numbers, ends = starts[keep], numbers[keep], ends[keep]
    consecutive = not len(numbers) or int(numbers[-1] - numbers[0]) == len(numbers) - 1
    kept = None if consecutive else array("q", numbers.tobytes())
    first = int(numbers[0]) if len(numbers) else first_number + 1
    piece = _Piece(file, offset, array("I", starts.astype(np.uint32).tobytes()), len(data), kept, first)
    return piece, array("q", starts.tobytes()), array("q", ends.tobytes())


class LineTable(Sequence[Line]):
    """The lines of the history in file order. Written by one thread (the one reading or appending); readers on
    any thread see a consistent prefix, as with a list: a piece is in place before its lines are counted."""

    def __init__(self) -> None:
        self._pieces: list[_Piece | _Kept] = []
        self._firsts: list[int] = []  # position of each piece's first line
        self._count = 0

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> Line: ...

    @overload
    def __getitem__(self, index: slice) -> list[Line]: ...

    def __getitem__(self, index: int | slice) -> Line | list[Line]:
        count = self._count
        if isinstance(index, slice):
            lo, hi, step = index.indices(count)
            if step != 1:
                return self.take(range(lo, hi, step)) if step > 0 else self.take(range(lo, hi, step)[::-1])[::-1]
            return list(self._range(lo, hi))
        if index < 0:
            index += count
        if not 0 <= index < count:
            raise IndexError("history line out of range")
        at = bisect.bisect_right(self._firsts, index) - 1
        return self._pieces[at].lines(index - self._firsts[at], index - self._firsts[at] + 1)[0]

    def __iter__(self) -> Iterator[Line]:
        return self._range(0, self._count)

    def _range(self, lo: int, hi: int) -> Iterator[Line]:
        """Lines lo..hi-1 in runs of RANGE_LINES: a whole month's lines split and paired in one call held the
        interpreter 20-50 ms on the thread filtering a million lines, and the window waited that long to answer."""
        for piece, start, stop in self._spans(lo, hi):
            for at in range(start, stop, RANGE_LINES):
                yield from piece.lines(at, min(at + RANGE_LINES, stop))

    def raw_runs(self, lo: int, hi: int, most: int) -> Iterator[tuple[bytes, int]]:
        """Lines lo..hi-1 as bytes, each ending in a line feed, in runs of at most `most` lines: (bytes, lines)."""
        for piece, first, last in self._spans(lo, hi):
            for start in range(first, last, most):
                stop = min(start + most, last)
                yield piece.raw(start, stop), stop - start

    def _spans(self, lo: int, hi: int) -> Iterator[tuple[_Piece | _Kept, int, int]]:
        """The pieces holding lines lo..hi-1, each with its own range of them (start, stop)."""
        firsts = self._firsts[:]  # pieces are appended before their first position: both lists are in step
        for piece, first in zip(self._pieces[: len(firsts)], firsts, strict=True):
            size = len(piece)
            if first + size <= lo:
                continue
            if first >= hi:
                break
            yield piece, max(lo - first, 0), min(hi - first, size)

    def take(self, positions: Iterable[int]) -> list[Line]:
        """The lines at these positions (ascending): each piece's lines read in one span when they are dense in
        it, else one read each."""
        out: list[Line] = []
        wanted = list(positions)
        firsts, pieces = self._firsts[:], self._pieces
        i = 0
        while i < len(wanted):
            at = bisect.bisect_right(firsts, wanted[i]) - 1
            if at < 0 or wanted[i] >= self._count:
                raise IndexError("history line out of range")
            first, piece = firsts[at], pieces[at]
            j = bisect.bisect_left(wanted, first + len(piece), i)
            lo, hi = wanted[i] - first, wanted[j - 1] - first + 1
            if (hi - lo) <= DENSE * (j - i):
                run = piece.lines(lo, hi)
                out += [run[p - first - lo] for p in wanted[i:j]]
            else:
                out += [piece.lines(p - first, p - first + 1)[0] for p in wanted[i:j]]
            i = j
        return out

    def pieces(self) -> list[_Piece | _Kept]:
        return self._pieces[: len(self._firsts)]

    def add_piece(self, piece: _Piece | _Kept) -> None:
        self._append(piece)

    def append_line(self, raw: bytes, month: str, number: int) -> None:
        """One line we appended ourselves before the history was read (number 0: not read from a file)."""
        self._append(_Kept((raw, month, number)))

    def _append(self, piece: _Piece | _Kept) -> None:
        self._pieces.append(piece)  # in place before it is counted: a reader never sees a line without its piece
        self._firsts.append(self._count)
        self._count += len(piece)


def lines_at(lines: Sequence[Line], positions: Iterable[int]) -> list[Line]:
    """The lines at these positions (ascending), read from their files a span at a time."""
    return lines.take(positions) if isinstance(lines, LineTable) else [lines[p] for p in positions]


@lru_cache(maxsize=4096)
def parse_line(raw: bytes, month: str, number: int) -> dict[str, object]:
    try:
        event = json.loads(raw)
    except (ValueError, RecursionError):  # a line nested deeper than the decoder goes is malformed, never a crash
        event = None
    if not isinstance(event, dict):
        return {
            "event": "(malformed line)",
            "engram_id": "",
            "timestamp": "",
            "_month": month,
            "_line": number,
            "_raw": raw.decode("utf-8", "replace")[:500],
        }
    event["_month"] = month
    event["_line"] = number
    return event


def changed_event(month: str = "") -> dict[str, object]:
    """What a view shows for a line whose month file changed since it was read (until the history is read again)."""
    return {"event": "(history changed on disk: reading it again)", "engram_id": "", "timestamp": "", "_month": month}


class Events(Sequence[dict[str, object]]):
    """A newest-first view of lines (all of them, or those at `positions`), read and parsed on access. Rows read
    are kept for repaints until the history is found changed on disk (`disk.version`); a row whose file changed
    shows `changed_event()`. `changed`: the query itself met a changed file (the view may be incomplete)."""

    def __init__(
        self,
        lines: Sequence[Line],
        reverse: bool = True,
        positions: Sequence[int] | None = None,
        disk: DiskState | None = None,
        changed: bool = False,
    ) -> None:
        self._lines, self._reverse, self._positions = lines, reverse, positions
        self._count = len(lines) if positions is None else len(positions)  # lines appended later: the next view
        self._disk = disk or DiskState()
        self._cache: dict[int, dict[str, object]] = {}
        self._version = self._disk.version
        self.changed = changed

    def __len__(self) -> int:
        return self._count

    def _position(self, index: int) -> int:
        at = len(self) - 1 - index if self._reverse else index
        return at if self._positions is None else self._positions[at]

    @overload
    def __getitem__(self, index: int) -> dict[str, object]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, object]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, object] | list[dict[str, object]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("history event out of range")
        if self._version != self._disk.version:
            self._cache, self._version = {}, self._disk.version
        found = self._cache.get(index)
        if found is None:
            if len(self._cache) > CACHED_ROWS:
                self._cache = {}
            lo, hi = max(index - READ_AROUND, 0), min(index + READ_AROUND + 1, len(self))
            try:
                self._read(lo, hi)
            except MonthChanged:
                self._disk.bump()
                return changed_event()
            found = self._cache[index]
        return found

    def _read(self, lo: int, hi: int) -> None:
        """Rows lo..hi-1 read together (one span of the file where they are near each other)."""
        wanted = sorted(self._position(i) for i in range(lo, hi))
        lines = lines_at(self._lines, wanted)
        by_position = dict(zip(wanted, lines, strict=True))
        for i in range(lo, hi):
            self._cache[i] = parse_line(*by_position[self._position(i)])

    def __iter__(self) -> Iterator[dict[str, object]]:
        """Every row in order, read a batch at a time (an export); a changed file raises MonthChanged."""
        for lo in range(0, len(self), EXPORT_BATCH):
            hi = min(lo + EXPORT_BATCH, len(self))
            wanted = [self._position(i) for i in range(lo, hi)]
            ordered = sorted(wanted)
            by_position = dict(zip(ordered, lines_at(self._lines, ordered), strict=True))
            for position in wanted:
                yield parse_line(*by_position[position])


class DiskState:
    """Counts the times the history was found changed on disk, so views drop the rows they kept. Moved on from
    several threads (the poll, the serial runner, the read pool): `bump` is one atomic step, never a lost update."""

    def __init__(self) -> None:
        self._counter = itertools.count(1)
        self.version = 0

    def bump(self) -> None:
        self.version = next(self._counter)  # next() on a count is atomic: two bumps give two new values


CACHED_ROWS = 4096  # rows a view keeps parsed (a repaint asks every row several times)
READ_AROUND = 32  # rows read on either side of the one asked for (the rows a scroll shows next)
EXPORT_BATCH = 4096
