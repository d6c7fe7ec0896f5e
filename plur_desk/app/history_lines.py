"""What the history index keeps beside its lines so no query scans a million of them: line positions by engram
id, the positions of rejection, human and plur_desk lines, and the rejection verdicts maintained as lines arrive.

Positions are indexes into one append-only list of lines. They are found with byte patterns, as a superset: a
line is listed under every id that appears as the value of a key that can name an engram (`engram_id`, and in
`data` `engram_b`, `winner`, `loser`, `earlier`, `later`, `ids`); the query then parses those lines and applies
the exact rule. A line the patterns cannot read safely (escaped key names, an `ids` list that is not all
strings) is parsed instead, so nothing that names an engram is missed.
"""

from __future__ import annotations

import bisect
import json
import re
import threading
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import repeat
from typing import TYPE_CHECKING, overload

from plur_desk.app.rows import Verdict
from plur_desk.domain.trust import Trust, TrustState

if TYPE_CHECKING:
    import numpy as np

Line = tuple[bytes, str, int]  # raw JSON, month, 1-based line number (0: appended by us)
ID_FIELDS = ("engram_b", "winner", "loser", "earlier", "later")  # in `data`, besides the top-level engram_id
_STRING = rb'"([^"\\]*(?:\\.[^"\\]*)*)"'  # a JSON string, unrolled (no per-character alternation)
_ID_VALUE = re.compile(rb'"(?:engram_id|engram_b|winner|loser|earlier|later)"\s*:\s*' + _STRING)
_IDS_LIST = re.compile(rb'"ids"\s*:\s*\[((?:\s*"[^"\\]*(?:\\.[^"\\]*)*"\s*,?)*)\s*\]')
_LIST_ITEM = re.compile(_STRING)
# One pass per key, each starting with its literal name (the fast prefix search; an alternation would stop at
# every quote), together a superset of the keys `_names_engram` reads.
_KEY_PASSES = [
    re.compile(rb'"' + key + rb'"\s*:\s*' + _STRING) for key in (b"engram_id", *(k.encode() for k in ID_FIELDS))
]
_FLAGS = {b'"reject"': "rejects", b'"human"': "human", b'"plur-desk"': "ours"}


def _text(value: bytes) -> str:
    if b"\\" not in value:
        return value.decode("utf-8", "replace")
    try:
        decoded = json.loads(b'"' + value + b'"')
    except ValueError:
        return value.decode("utf-8", "replace")
    return decoded if isinstance(decoded, str) else ""


def _parsed_ids(raw: bytes) -> set[str]:
    try:
        event = json.loads(raw)
    except ValueError:
        return set()
    if not isinstance(event, dict):
        return set()
    found = {event.get("engram_id")}
    data = event.get("data")
    if isinstance(data, dict):
        found.update(data.get(k) for k in ID_FIELDS)
        ids = data.get("ids")
        if isinstance(ids, list):
            found.update(i for i in ids if isinstance(i, str))
    return {i for i in found if isinstance(i, str) and i}


BLOCK_BYTES = 4 << 20  # a month file is kept in pieces of about this size: iterating one builds its lines at once
_BLANK = b" \t\n\r\x0b\x0c"  # what bytes.strip() removes: a line of only these is not kept (as before)


class _Block:
    """A run of complete lines of one month file: the bytes read (one object, shared by the file's pieces), the
    offset where each kept line starts, and their line numbers (None: consecutive from `first`)."""

    __slots__ = ("data", "first", "month", "numbers", "starts")

    def __init__(self, data: bytes, month: str, starts: array[int], numbers: array[int] | None, first: int) -> None:
        self.data, self.month, self.starts, self.numbers, self.first = data, month, starts, numbers, first

    def number(self, i: int) -> int:
        return self.numbers[i] if self.numbers is not None else self.first + i

    def line(self, i: int) -> Line:
        start = self.starts[i]
        return (self.data[start : self.data.index(b"\n", start)], self.month, self.number(i))

    def lines(self, lo: int, hi: int) -> Iterator[Line]:
        """Lines lo..hi-1, split in one call (no Python work per line but the tuple)."""
        if lo >= hi:
            return iter(())
        data, starts = self.data, self.starts
        end = data.index(b"\n", starts[hi - 1])
        parts = data[starts[lo] : end].split(b"\n")
        if len(parts) != hi - lo:  # blank lines in between are in the bytes but not lines
            parts = [p for p in parts if p.strip()]
        numbers = self.numbers[lo:hi] if self.numbers is not None else range(self.first + lo, self.first + hi)
        return zip(parts, repeat(self.month), numbers, strict=False)  # parts and numbers: one per line each


class LineTable(Sequence[Line]):
    """Every history line as (raw, month, number) without an object per line: the bytes of each month file read
    (in pieces of ~4 MB) and an offset per line (8 bytes; a tuple, a bytes object and an int per line cost ~375).
    A line is built when asked for. Written by one thread (the one reading or appending); readers on any thread
    see a consistent prefix, as with a list: a piece is in place before its lines are counted."""

    def __init__(self) -> None:
        self._blocks: list[_Block] = []
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
                return [self[i] for i in range(lo, hi, step)]
            return list(self._range(lo, hi))
        if index < 0:
            index += count
        if not 0 <= index < count:
            raise IndexError("history line out of range")
        at = bisect.bisect_right(self._firsts, index) - 1
        return self._blocks[at].line(index - self._firsts[at])

    def __iter__(self) -> Iterator[Line]:
        return self._range(0, self._count)

    def _range(self, lo: int, hi: int) -> Iterator[Line]:
        firsts = self._firsts[:]  # pieces are appended before their first position: both lists are in step
        for block, first in zip(self._blocks[: len(firsts)], firsts, strict=True):
            size = len(block.starts)
            if first + size <= lo:
                continue
            if first >= hi:
                break
            yield from block.lines(max(lo - first, 0), min(hi - first, size))

    def add_month(self, data: bytes, month: str, first_number: int) -> None:
        """Complete lines of one month file (each ending in a line feed), the first numbered first_number + 1."""
        import numpy as np  # loaded with the history, not before the first draft is shown

        ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
        if not len(ends):
            return
        starts = np.concatenate((np.zeros(1, dtype=np.int64), ends[:-1] + 1))
        numbers = np.arange(first_number + 1, first_number + 1 + len(ends), dtype=np.int64)
        view = np.frombuffer(data, dtype=np.uint8)
        odd = np.flatnonzero((starts == ends) | np.isin(view[starts], np.frombuffer(_BLANK, dtype=np.uint8)))
        blank = [int(i) for i in odd if not data[starts[i] : ends[i]].strip()]
        if blank:
            keep = np.ones(len(ends), dtype=bool)
            keep[blank] = False
            starts, numbers, ends = starts[keep], numbers[keep], ends[keep]
        piece = 0
        while piece < len(starts):  # every piece refers to the one bytes object of the file (nothing copied)
            last = max(int(np.searchsorted(ends, ends[piece] + BLOCK_BYTES, side="right")), piece + 1)
            run = numbers[piece:last]
            consecutive = int(run[-1] - run[0]) == len(run) - 1
            kept = None if consecutive else array("q", run.tobytes())
            self._append(_Block(data, month, array("q", starts[piece:last].tobytes()), kept, int(run[0])))
            piece = last

    def append_line(self, raw: bytes, month: str, number: int) -> None:
        """One line we appended ourselves (number 0: not read from a file)."""
        self._append(_Block(raw + b"\n", month, array("q", [0]), array("q", [number]), number))

    def extend(self, other: LineTable) -> None:
        for block in other._blocks:
            self._append(block)

    def _append(self, block: _Block) -> None:
        self._blocks.append(block)  # in place before it is counted: a reader never sees a line without its piece
        self._firsts.append(self._count)
        self._count += len(block.starts)


def ids_in(raw: bytes) -> set[str]:
    """Every engram id this line may name (a superset of what `_names_engram` accepts)."""
    if b"\\u" in raw:  # a key or value written with \u escapes: the byte patterns cannot be trusted
        return _parsed_ids(raw)
    found = {_text(m) for m in _ID_VALUE.findall(raw)}
    if b'"ids"' in raw:
        lists = _IDS_LIST.findall(raw)
        if len(lists) != raw.count(b'"ids"'):
            return found | _parsed_ids(raw)
        for items in lists:
            found.update(_text(m) for m in _LIST_ITEM.findall(items))
    found.discard("")
    return found


class LineIndex:
    """Positions over one list of lines, extended as lines are appended (never rewritten: a reload builds a new
    one). Written by one thread at a time (the one appending lines); read from any: lists only grow."""

    def __init__(self) -> None:
        self.by_id: dict[str, array[int]] = {}  # 4 bytes a position (a list of ints: 40)
        self.rejects: list[int] = []
        self.human: list[int] = []
        self.ours: list[int] = []  # written by plur_desk (runtime name)
        self.count = 0
        self.malformed = 0  # lines that cannot be a JSON object (first byte not "{" or last not "}")
        self.rejections = RejectionLedger()

    def extend(self, lines: Sequence[Line]) -> None:
        """Index lines[count:] (the lines appended since the last call)."""
        by_id = self.by_id
        for position in range(self.count, len(lines)):
            raw = lines[position][0]
            for engram_id in ids_in(raw):
                found = by_id.get(engram_id)
                if found is None:
                    by_id[engram_id] = array("i", (position,))
                else:
                    found.append(position)
            if b'"reject"' in raw:
                self.rejects.append(position)
            if b'"human"' in raw:
                self.human.append(position)
                if b'"plur-desk"' in raw:
                    self.ours.append(position)
            elif b'"plur-desk"' in raw:
                self.ours.append(position)
            self.malformed += _malformed(raw)
        self.count = len(lines)

    def extend_block(self, block: bytes, lines: Sequence[Line]) -> None:
        """Index the lines just appended from `block` (their bytes, each ending in a newline) with compiled
        patterns over the whole block: Python work per match, not per line. Blank lines (not kept as lines) fall
        back to the per-line path."""
        import numpy as np  # loaded with the history, not before the first draft is shown

        first, ends = self.count, np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 10)
        if first + len(ends) != len(lines):
            self.extend(lines)
            return

        def line_at(offsets: list[int]) -> list[int]:
            return [first + int(i) for i in np.searchsorted(ends, np.asarray(offsets, dtype=np.int64))]

        self._count_malformed(block, ends, lines)
        by_id = self.by_id
        for n, pattern in enumerate(_KEY_PASSES):
            matches = [(m.start(), m.group(1)) for m in pattern.finditer(block)]
            _add_named(by_id, zip(line_at([o for o, _v in matches]), (v for _o, v in matches), strict=True), n)
        lists = [(m.start(), m.group(1)) for m in _IDS_LIST.finditer(block)]
        list_lines = line_at([o for o, _v in lists])
        for position, (_o, items) in zip(list_lines, lists, strict=True):
            for item in _LIST_ITEM.findall(items):
                _add(by_id, _text(item), position, 1)
        odd = set(line_at([m.start() for m in re.finditer(rb"\\u", block)]))
        said, read = Counter(line_at([m.start() for m in re.finditer(rb'"ids"', block)])), Counter(list_lines)
        odd.update(p for p, n in said.items() if read[p] < n)
        for position in sorted(odd):  # escaped keys, or a list that is not all strings: parsed (rare)
            for engram_id in _parsed_ids(lines[position][0]):
                _add(by_id, engram_id, position, 1)
        by_id.pop("", None)
        for needle, name in _FLAGS.items():
            getattr(self, name).extend(sorted(set(line_at([m.start() for m in re.finditer(re.escape(needle), block)]))))
        self.count = len(lines)

    def _count_malformed(self, block: bytes, ends: np.ndarray, lines: Sequence[Line]) -> None:
        import numpy as np

        if not len(ends):
            return
        data = np.frombuffer(block, dtype=np.uint8)
        starts = np.concatenate(([0], ends[:-1] + 1))
        odd = (data[starts] != ord("{")) | (data[ends - 1] != ord("}"))  # only these need the exact test
        self.malformed += sum(_malformed(lines[self.count + int(i)][0]) for i in np.flatnonzero(odd))

    def positions(self, engram_id: str) -> list[int]:
        return list(self.by_id.get(engram_id, ()))


def _malformed(raw: bytes) -> int:
    return 0 if raw[:1] == b"{" and raw.rstrip()[-1:] == b"}" else 1


def _add_named(by_id: dict[str, array[int]], found_at: Iterable[tuple[int, bytes]], late: int) -> None:
    """One key's pass: (position, raw id) in file order."""
    for position, raw_id in found_at:
        engram_id = raw_id.decode("utf-8", "replace") if b"\\" not in raw_id else _text(raw_id)
        found = by_id.get(engram_id)
        if found is None:
            by_id[engram_id] = array("i", (position,))
        elif found[-1] < position:
            found.append(position)
        elif late:
            _add(by_id, engram_id, position, late)


def _add(by_id: dict[str, array[int]], engram_id: str, position: int, late: int) -> None:
    """Record that line `position` may name `engram_id`; the first pass arrives in order, later ones are merged."""
    found = by_id.get(engram_id)
    if found is None:
        by_id[engram_id] = array("i", (position,))
    elif found[-1] < position:
        found.append(position)
    elif late and found[-1] != position:
        at = bisect.bisect_left(found, position)
        if at == len(found) or found[at] != position:
            found.insert(at, position)


Parse = Callable[[bytes, str, int], dict[str, object]]


class RejectionLedger:
    """content_hash -> the latest rejection, applied in timestamp order as reject lines arrive. Lines arriving in
    order (every append) are applied on top; a line older than the newest applied one, or a change of keys.yaml
    (the trust of every verdict), recomputes from all rejection lines (not from all lines)."""

    def __init__(self) -> None:
        self._verdicts: dict[str, Verdict] = {}
        self._parsed: list[tuple[Line, dict[str, object]]] = []  # every rejection line so far, parsed once
        self._done = 0  # of those, how many are applied
        self._claims: dict[int, Trust] = {}  # applied lines that claim a human (by place in _parsed): their trust
        self._newest = ""
        self._generation: object = _UNSET
        self._lock = threading.Lock()

    def verdicts(
        self,
        lines: Sequence[Line],
        positions: list[int],
        parse: Parse,
        trust_of: Callable[[Line, dict[str, object]], Trust],
        generation: object,
    ) -> dict[str, Verdict]:
        with self._lock:
            count = len(positions)
            fresh = [(lines[p], parse(*lines[p])) for p in positions[len(self._parsed) : count]]
            self._parsed += fresh
            if generation != self._generation and self._trusted_as_before(trust_of):
                self._generation = generation  # keys.yaml changed, but no verdict's trust did
            if generation != self._generation or (
                fresh and self._done and min(_stamp(e) for _l, e in fresh) < self._newest
            ):
                self._verdicts, self._done, self._newest, self._generation = {}, 0, "", generation
                self._claims = {}
            todo = sorted(range(self._done, len(self._parsed)), key=lambda n: _stamp(self._parsed[n][1]))
            for n in todo:
                self._apply(n, trust_of)
            if todo:
                self._newest = max(self._newest, _stamp(self._parsed[todo[-1]][1]))
            self._done = len(self._parsed)
            return dict(self._verdicts)

    def _trusted_as_before(self, trust_of: Callable[[Line, dict[str, object]], Trust]) -> bool:
        """Whether every applied line that claims a human is trusted exactly as when it was applied (the trust of
        any other line does not depend on keys.yaml): then a new keys.yaml changes no verdict."""
        parsed = self._parsed
        return all(trust_of(*parsed[n]) == trust for n, trust in self._claims.items())

    def _apply(self, n: int, trust_of: Callable[[Line, dict[str, object]], Trust]) -> None:
        line, event = self._parsed[n]
        data = event.get("data")
        if isinstance(data, dict) and data.get("action") == "undo" and data.get("undos") == "reject":
            undone = event.get("engram_id")
            self._verdicts = {k: v for k, v in self._verdicts.items() if v.engram_id != undone}
            return
        if event.get("event") == "engram_retired" and isinstance(data, dict) and data.get("action") == "reject":
            digest = data.get("content_hash")
            if not isinstance(digest, str):
                return
            trust = trust_of(line, event)
            if trust.state is not TrustState.NOT_HUMAN:
                self._claims[n] = trust
            actor = event.get("actor")
            by = str(actor.get("asserted_by", "") or "") if isinstance(actor, dict) else ""
            verdict = Verdict(
                str(event.get("engram_id")), by, str(event.get("timestamp", "")), str(data.get("reason", "")), trust
            )
            held = self._verdicts.get(digest)
            if trust.counts_as_human or held is None or not held.trust.counts_as_human:
                self._verdicts[digest] = verdict


_UNSET = object()


def _stamp(event: dict[str, object]) -> str:
    return str(event.get("timestamp", ""))


def lines_at(lines: Sequence[Line], positions: Iterable[int]) -> list[Line]:
    return [lines[p] for p in positions]
