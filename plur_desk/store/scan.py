"""Searching a whole store file with a regular expression without holding the interpreter lock for all of it.

`re` keeps the lock for the whole of one call: one search over a 65 MB engrams.yaml (50,000 engrams) held it 70-100
ms idle and 250 ms beside the parse workers, and the window's thread could not run meanwhile. Searched in pieces,
other threads run between them, and the answer is the same as one search's."""

from __future__ import annotations

import re

PIECE = 1 << 20  # 1 MiB: about 1.5 ms of searching per piece


def search_in_pieces(
    pattern: re.Pattern[bytes], data: bytes, start: int, end: int, *, reach: int, piece: int = PIECE
) -> re.Match[bytes] | None:
    """`pattern.search(data, start, end)`, one piece at a time. `reach`: how many bytes past a match's first byte the
    pattern may read (its own length and lookahead); each piece's search may read that far past the piece, and a
    match found there is left for the next piece, which sees it with all its context."""
    if reach < 1 or piece < 1:
        raise ValueError("reach and piece must be positive")
    pos = start
    while pos < end:
        stop = min(end, pos + piece)
        found = pattern.search(data, pos, min(end, stop + reach))
        if found is not None and found.start() < stop:
            return found
        pos = stop
    return pattern.search(data, start, end) if start >= end else None
