"""Where each entry of a list file in PLUR's own layout starts, and on which line: shared between snapshots.

A write replaces a few entries; every entry after a replaced one moves by the same number of bytes and lines.
Copying each later entry to move it made one write cost O(entries) of Python work (0.5 s at 50,000 engrams, on a
worker thread that then starved the GUI thread of the interpreter lock). Here the arrays of the file as it was read
are never changed; a snapshot made by a write adds a short sorted list of shift points ("from entry `first` on, add
this many bytes and lines"), so a write costs O(changed entries + shift points) and a lookup one bisect. After
`COMPACT_AT` points the arrays are rebuilt once, into new arrays (older snapshots keep theirs).
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterable

COMPACT_AT = 64


class Positions:
    """Start offsets and first lines of entries 0..count-1; entry i ends where i+1 starts (the last at `size`)."""

    __slots__ = ("_bytes", "_firsts", "_line_shifts", "_lines", "_starts", "size")

    def __init__(
        self,
        starts: array[int],
        lines: array[int],
        size: int,
        shifts: tuple[list[int], list[int], list[int]] | None = None,
    ) -> None:
        self._starts, self._lines, self.size = starts, lines, size
        # shift point k: entries from _firsts[k] (up to the next point) move by _bytes[k] bytes, _line_shifts[k] lines
        self._firsts, self._bytes, self._line_shifts = shifts if shifts is not None else ([], [], [])

    @classmethod
    def of(cls, starts: Iterable[int], lines: Iterable[int], size: int) -> Positions:
        return cls(array("q", starts), array("q", lines), size)

    def __len__(self) -> int:
        return len(self._starts)

    def _point(self, index: int) -> int:
        return bisect_right(self._firsts, index) - 1 if self._firsts else -1

    def start(self, index: int) -> int:
        k = self._point(index)
        return self._starts[index] + (self._bytes[k] if k >= 0 else 0)

    def end(self, index: int) -> int:
        return self.start(index + 1) if index + 1 < len(self._starts) else self.size

    def span(self, index: int) -> tuple[int, int]:
        return self.start(index), self.end(index)

    def line(self, index: int) -> int:
        k = self._point(index)
        return self._lines[index] + (self._line_shifts[k] if k >= 0 else 0)

    def starts(self) -> array[int]:
        """Every start, in one array (O(entries); for readers that walk the whole file anyway)."""
        return self._applied(self._starts, self._bytes)

    def lines(self) -> array[int]:
        return self._applied(self._lines, self._line_shifts)

    def spans(self) -> list[tuple[int, int]]:
        starts = self.starts()
        ends = starts[1:]
        ends.append(self.size)
        return list(zip(starts, ends, strict=True))

    def _applied(self, base: array[int], shifts: list[int]) -> array[int]:
        if not self._firsts:
            return base
        out = base[: self._firsts[0]]
        bounds = [*self._firsts[1:], len(base)]
        for first, stop, shift in zip(self._firsts, bounds, shifts, strict=True):
            if shift:
                out.extend(value + shift for value in base[first:stop])
            else:
                out.extend(base[first:stop])
        return out

    def moved(self, changes: Iterable[tuple[int, int, int]], size: int) -> Positions:
        """The positions after replacing entries: `changes` holds (index, byte delta, line delta) per replaced
        entry; every entry after it moves. This object is left as it was (another snapshot holds it)."""
        firsts, byte_shifts, line_shifts = list(self._firsts), list(self._bytes), list(self._line_shifts)
        count = len(self._starts)
        for index, delta, line_delta in changes:
            first = index + 1
            if first >= count or (delta == 0 and line_delta == 0):
                continue
            k = bisect_right(firsts, first) - 1
            if k < 0 or firsts[k] != first:  # a new point, carrying the shift in force there
                k += 1
                firsts.insert(k, first)
                byte_shifts.insert(k, byte_shifts[k - 1] if k > 0 else 0)
                line_shifts.insert(k, line_shifts[k - 1] if k > 0 else 0)
            for j in range(k, len(firsts)):
                byte_shifts[j] += delta
                line_shifts[j] += line_delta
        moved = Positions(self._starts, self._lines, size, (firsts, byte_shifts, line_shifts))
        if len(firsts) > COMPACT_AT:
            moved = Positions(moved.starts(), moved.lines(), size)
        return moved
