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
import sys
import threading
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING

from plur_desk.app.history.history_table import lines_at
from plur_desk.app.review.rows import Verdict
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
JSON_ESCAPE = b"\\u"  # a line holding one may spell any word in escapes (`"h\u0075man"`): only parsing can say
# Candidate lists whose readers parse each line and judge it (rejections, human claims): a line with a JSON escape
# is always a candidate, so a claim written with escapes (`"h\u0075man"`) is judged and shown, never left out of
# the trust filters and the "rejection claim NOT VERIFIED" flag. `ours` is exact (read without judging).
_ESCAPABLE = frozenset({"rejects", "human"})


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
    except (ValueError, RecursionError):
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


def ids_in(raw: bytes) -> set[str]:
    """Every engram id this line may name (a superset of what `_names_engram` accepts)."""
    if JSON_ESCAPE in raw:  # a key or value written with \u escapes: the byte patterns cannot be trusted
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
            escaped = JSON_ESCAPE in raw
            if escaped or b'"reject"' in raw:
                self.rejects.append(position)
            if escaped or b'"human"' in raw:
                self.human.append(position)
                if b'"plur-desk"' in raw:
                    self.ours.append(position)
            elif b'"plur-desk"' in raw:
                self.ours.append(position)
            self.malformed += _malformed(raw)
        self.count = len(lines)

    def extend_block(self, block: bytes, starts: Sequence[int], ends: Sequence[int]) -> None:
        """Index the lines just read from `block` (kept lines only: line i is block[starts[i]:ends[i]]) with
        compiled patterns over the whole block: Python work per match, not per line."""
        import numpy as np  # loaded with the history, not before the first draft is shown

        first, end_at = self.count, np.asarray(ends, dtype=np.int64)

        def raw_at(position: int) -> bytes:
            return block[starts[position - first] : ends[position - first]]

        def line_at(offsets: list[int]) -> list[int]:
            return [first + int(i) for i in np.searchsorted(end_at, np.asarray(offsets, dtype=np.int64))]

        self._count_malformed(block, np.asarray(starts, dtype=np.int64), end_at)
        by_id = self.by_id
        for n, pattern in enumerate(_KEY_PASSES):
            matches = [(m.start(), m.group(1)) for m in pattern.finditer(block)]
            _add_named(by_id, zip(line_at([o for o, _v in matches]), (v for _o, v in matches), strict=True), n)
        lists = [(m.start(), m.group(1)) for m in _IDS_LIST.finditer(block)]
        list_lines = line_at([o for o, _v in lists])
        for position, (_o, items) in zip(list_lines, lists, strict=True):
            for item in _LIST_ITEM.findall(items):
                _add(by_id, _text(item), position, 1)
        odd = set(line_at([m.start() for m in re.finditer(re.escape(JSON_ESCAPE), block)]))
        said, read = Counter(line_at([m.start() for m in re.finditer(rb'"ids"', block)])), Counter(list_lines)
        odd.update(p for p, n in said.items() if read[p] < n)
        for position in sorted(odd):  # escaped keys, or a list that is not all strings: parsed (rare)
            for engram_id in _parsed_ids(raw_at(position)):
                _add(by_id, engram_id, position, 1)
        by_id.pop("", None)
        for needle, name in _FLAGS.items():
            found = set(line_at([m.start() for m in re.finditer(re.escape(needle), block)]))
            if name in _ESCAPABLE:
                found |= odd  # `"h\u0075man"` is "human" to every JSON reader: never kept out of the candidates
            getattr(self, name).extend(sorted(found))
        self.count = first + len(starts)

    def _count_malformed(self, block: bytes, starts: np.ndarray, ends: np.ndarray) -> None:
        import numpy as np

        if not len(ends):
            return
        data = np.frombuffer(block, dtype=np.uint8)
        odd = (data[starts] != ord("{")) | (data[ends - 1] != ord("}"))  # only these need the exact test
        self.malformed += sum(_malformed(block[starts[i] : ends[i]]) for i in np.flatnonzero(odd))

    def absorb(self, other: LineIndex) -> None:
        """Take in the positions of an index over the lines that follow this one's (a month read on its own)."""
        shift = self.count
        for engram_id, found in other.by_id.items():
            moved = array("i", (p + shift for p in found))
            if engram_id in self.by_id:
                self.by_id[engram_id].extend(moved)
            else:
                self.by_id[engram_id] = moved
        for name in ("rejects", "human", "ours"):
            getattr(self, name).extend(p + shift for p in getattr(other, name))
        self.count += other.count
        self.malformed += other.malformed

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
            by_id[sys.intern(engram_id)] = array("i", (position,))  # the parsed records' ids are interned: one string
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
    """content_hash -> the latest rejection, applied in timestamp order as reject lines arrive; an undo of a reject
    takes the engram's verdicts back, but one that counts as a human's only when the undo counts as one too. Lines
    arriving in order (every append) are applied on top; a line older than the newest applied one, or a change of
    keys.yaml (the trust of every verdict), recomputes from all rejection lines (not from all lines).

    Each answer is a snapshot (the same object while nothing changed; never changed after it is handed out), and
    the ledger says which content hashes any line applied since a recent snapshot touched (`touched_since`): a
    follower compares only those instead of every verdict."""

    MARKS = 4  # recent snapshots `touched_since` can answer for

    def __init__(self) -> None:
        self._verdicts: dict[str, Verdict] = {}
        self._snapshot: Mapping[str, Verdict] = MappingProxyType({})
        self._log: list[str] = []  # content hashes whose verdict a line set or took back, oldest first
        self._marks: list[tuple[Mapping[str, Verdict], int]] = []  # recent snapshots, with the length of _log at each
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
    ) -> Mapping[str, Verdict]:
        with self._lock:
            count = len(positions)
            fresh = [(line, parse(*line)) for line in lines_at(lines, positions[len(self._parsed) : count])]
            self._parsed += fresh
            if generation != self._generation and self._trusted_as_before(trust_of):
                self._generation = generation  # keys.yaml changed, but no verdict's trust did
            if generation != self._generation or (
                fresh and self._done and min(_stamp(e) for _l, e in fresh) < self._newest
            ):
                self._verdicts, self._done, self._newest, self._generation = {}, 0, "", generation
                self._claims, self._log, self._marks = {}, [], []  # no earlier snapshot can be followed across
            logged = len(self._log)
            todo = sorted(range(self._done, len(self._parsed)), key=lambda n: _stamp(self._parsed[n][1]))
            for n in todo:
                self._apply(n, trust_of)
            if todo:
                self._newest = max(self._newest, _stamp(self._parsed[todo[-1]][1]))
            self._done = len(self._parsed)
            if len(self._log) != logged or not self._marks:
                self._take_snapshot()
            return self._snapshot

    def current(self) -> Mapping[str, Verdict]:
        """The verdicts as last computed (no line read)."""
        with self._lock:
            return self._snapshot

    def touched_since(self, snapshot: Mapping[str, Verdict]) -> set[str] | None:
        """The content hashes whose verdict may differ between `snapshot` (one this ledger handed out) and the
        latest; None when it cannot say (an older snapshot, another ledger's, or one before a recomputation)."""
        with self._lock:
            for held, at in self._marks:
                if held is snapshot:
                    return set(self._log[at:])
            return None

    def _take_snapshot(self) -> None:
        self._snapshot = MappingProxyType(dict(self._verdicts))  # read by several threads: nobody may change it
        self._marks.append((self._snapshot, len(self._log)))
        if len(self._marks) > self.MARKS:
            del self._marks[0]
            start = self._marks[0][1]  # what no kept snapshot needs any more
            del self._log[:start]
            self._marks = [(held, at - start) for held, at in self._marks]

    def _trusted_as_before(self, trust_of: Callable[[Line, dict[str, object]], Trust]) -> bool:
        """Whether every applied line that claims a human is trusted exactly as when it was applied (the trust of
        any other line does not depend on keys.yaml): then a new keys.yaml changes no verdict."""
        parsed = self._parsed
        return all(trust_of(*parsed[n]) == trust for n, trust in self._claims.items())

    def _trust(self, n: int, trust_of: Callable[[Line, dict[str, object]], Trust]) -> Trust:
        """The trust of applied line n, kept when it claims a human (keys.yaml may change it)."""
        trust = trust_of(*self._parsed[n])
        if trust.state is not TrustState.NOT_HUMAN:
            self._claims[n] = trust
        return trust

    def _apply(self, n: int, trust_of: Callable[[Line, dict[str, object]], Trust]) -> None:
        event = self._parsed[n][1]
        data = event.get("data")
        if isinstance(data, dict) and data.get("action") == "undo" and data.get("undos") == "reject":
            undone, trust = event.get("engram_id"), self._trust(n, trust_of)
            # a human's signed verdict is taken back only by an undo that counts as a human's too (as it was set)
            gone = [
                k
                for k, v in self._verdicts.items()
                if v.engram_id == undone and not (v.trust.counts_as_human and not trust.counts_as_human)
            ]
            for key in gone:
                del self._verdicts[key]
            self._log += gone
            return
        if event.get("event") == "engram_retired" and isinstance(data, dict) and data.get("action") == "reject":
            digest = data.get("content_hash")
            if not isinstance(digest, str):
                return
            trust = self._trust(n, trust_of)
            actor = event.get("actor")
            by = str(actor.get("asserted_by", "") or "") if isinstance(actor, dict) else ""
            verdict = Verdict(
                str(event.get("engram_id")), by, str(event.get("timestamp", "")), str(data.get("reason", "")), trust
            )
            held = self._verdicts.get(digest)
            if trust.counts_as_human or held is None or not held.trust.counts_as_human:
                self._verdicts[digest] = verdict
                self._log.append(digest)


_UNSET = object()


def _stamp(event: dict[str, object]) -> str:
    return str(event.get("timestamp", ""))
