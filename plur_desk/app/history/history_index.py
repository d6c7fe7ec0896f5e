"""The history log, built for a million lines: lines read from their month files when shown or matched (what
stays in memory is where each line starts and the small indexes), parsed only then; filters look at the bytes
first and parse only candidates; a refresh reads only appended bytes, after checking the bytes read before are
still there (a month file rewritten or replaced is read again, never served torn or stale).

Newest first means the reverse of file order (month files by name, lines in append order), which is the order
PLUR and plur_desk write them in.
"""

from __future__ import annotations

import contextlib
import json
import re
from array import array
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from plur_desk.app.history.history_lines import JSON_ESCAPE, LineIndex
from plur_desk.app.history.history_table import (
    DiskState,
    Events,
    LineTable,
    MonthChanged,
    changed_event,
    lines_at,
    parse_line,
    piece_of,
)
from plur_desk.app.review.rows import Verdict
from plur_desk.domain.plur_rules.rekey import Renames
from plur_desk.domain.trust import Trust, TrustState
from plur_desk.infra.clock import parse_instant
from plur_desk.infra.jobs import checkpoint
from plur_desk.infra.memory import gc_paused
from plur_desk.store.history.chain import js_stringify
from plur_desk.store.history.log import HistoryLog
from plur_desk.store.history.month_lines import MonthFile
from plur_desk.store.safe_open import NotRegularFile

Line = tuple[bytes, str, int]  # raw JSON, month ("2026-12"), 1-based line number (0: appended by us)
_EVENT_TYPE = re.compile(rb'"event"\s*:\s*"([^"\\]*)"')


def actor_kind(event: dict[str, object]) -> str:
    """human (plur_desk), agent (a named writer or runtime), unknown (no actor or 'unidentified')."""
    actor = event.get("actor")
    if not isinstance(actor, dict):
        return "unknown"
    if actor.get("kind") == "human":
        return "human"
    who = actor.get("asserted_by")
    if isinstance(who, str) and who and who != "unidentified":
        return "agent"
    if isinstance(actor.get("model"), dict):
        return "agent"
    return "unknown"


def actor_name(event: dict[str, object]) -> str:
    actor = event.get("actor")
    if isinstance(actor, dict):
        return str(actor.get("asserted_by", "") or "")
    return ""


STALE_EVERY = 4096  # lines matched between two questions whether the answer is still wanted


class _Stale(Exception):
    """The filter's answer is no longer wanted."""


@dataclass(frozen=True)
class HistoryFilter:
    """What the History pane shows: event types, actor kinds, reviewer, engram, text, time span and trust."""

    types: frozenset[str] = frozenset()
    actor_kinds: frozenset[str] = frozenset()
    reviewer: str = ""
    engram_id: str = ""
    text: str = ""
    since: datetime | None = None
    until: datetime | None = None
    trust: frozenset[TrustState] = frozenset()  # only human claims in these states

    @property
    def empty(self) -> bool:
        return not (
            self.types
            or self.actor_kinds
            or self.reviewer
            or self.engram_id
            or self.text
            or self.since
            or self.until
            or self.trust
        )

    def maybe(self, raw: bytes) -> bool:
        """A cheap byte-level test: False means the line certainly does not match."""
        if JSON_ESCAPE in raw:
            return True  # JSON escapes (`"h\u0075man"`, `"engram\u005fcreated"`): only the parsed line can say
        if self.engram_id and _plain_bytes(self.engram_id) and self.engram_id.encode() not in raw:
            return False  # an id JSON writes escaped (quotes, non-ASCII) is left to `matches`
        if self.types and not any(t.encode() in raw for t in self.types):
            return False
        if (self.actor_kinds == frozenset({"human"}) or (self.trust and TrustState.NOT_HUMAN not in self.trust)) and (
            b'"human"' not in raw
        ):
            return False
        if self.reviewer and not raw.isascii():
            return True
        if self.reviewer and self.reviewer.lower().encode() not in raw.lower():
            return False
        return not (self.text and raw.isascii() and self.text.lower().encode() not in raw.lower())

    def matches(self, event: dict[str, object]) -> bool:
        if self.types and event.get("event") not in self.types:
            return False
        if self.actor_kinds and actor_kind(event) not in self.actor_kinds:
            return False
        if self.reviewer and self.reviewer.lower() not in actor_name(event).lower():
            return False
        if self.engram_id and not _names_engram(event, self.engram_id):
            return False
        if self.since or self.until:
            moment = parse_instant(str(event.get("timestamp", "")))
            if moment is None or (self.since and moment < self.since) or (self.until and moment > self.until):
                return False
        if self.text:
            blob = json.dumps({k: v for k, v in event.items() if not k.startswith("_")}, ensure_ascii=False)
            if self.text.lower() not in blob.lower():
                return False
        return True


def _plain_bytes(text: str) -> bool:
    """True when every JSON writer puts `text` into a line as its own bytes (nothing to escape)."""
    return text.isascii() and text.isprintable() and '"' not in text and "\\" not in text


def _names_engram(event: dict[str, object], engram_id: str) -> bool:
    if event.get("engram_id") == engram_id:
        return True
    data = event.get("data")
    if isinstance(data, dict):
        if engram_id in (
            data.get("engram_b"),
            data.get("winner"),
            data.get("loser"),
            data.get("earlier"),
            data.get("later"),
        ):
            return True
        ids = data.get("ids")
        if isinstance(ids, list) and engram_id in ids:
            return True
    return False


def _no_check(event: dict[str, object]) -> Trust:
    return Trust(TrustState.UNSIGNED if actor_kind(event) == "human" else TrustState.NOT_HUMAN, "not checked")


class HistoryIndex:
    """The lines and their positions (`LineIndex`) are one state, swapped whole by `load` and `load_newest`;
    between loads both only grow (`refresh`, `add`), so a reader on another thread sees a consistent prefix.
    Loads, refreshes and appends run on one thread (the window's serial runner); queries on any."""

    def __init__(self, log: HistoryLog, trust: Callable[[dict[str, object]], Trust] | None = None) -> None:
        self.log = log
        self.trust = trust or _no_check
        # verified once per line, by the raw line (which fixes the event exactly); a human's claim apart, as only
        # its answer depends on keys.yaml: a new keys.yaml (our key registered by the first decision) drops those
        # at once instead of filtering every answer kept (23 ms at 1,000,000 lines, holding the queue's lock)
        self._trust_cache: dict[bytes, Trust] = {}
        self._claim_trust: dict[bytes, Trust] = {}
        self._trust_generation: object = None
        self._state: tuple[LineTable, LineIndex] = (LineTable(), LineIndex())
        self.generation = 0  # counts loads: positions and lengths compare only within one generation
        self._files: dict[str, MonthFile] = {}  # by file name, the month files read (all of them once loaded)
        self._types: set[str] = set()
        self.disk = DiskState()
        self.loaded = False
        self.partial = False  # only the newest months are in (load_newest); the rest is being read
        self._renames: tuple[tuple[object, ...], Renames, int] | None = None  # (stamp, trail, lines read)

    @property
    def lines(self) -> LineTable:
        return self._state[0]

    # -- loading -------------------------------------------------------------------------------------------

    def _index(self, file: MonthFile, lines: LineTable, index: LineIndex) -> bool:
        """Read what is new in one month file into `lines` and `index` (their lines are its last ones)."""

        def each(offset: int, first_number: int, data: bytes) -> None:
            piece, starts, ends = piece_of(file, offset, first_number, data)
            if len(piece):
                lines.add_piece(piece)  # the lines first: a position in the index always names a line
                index.extend_block(data, starts, ends)
            self._types.update(m.decode("utf-8", "replace") for m in _EVENT_TYPE.findall(data))
            checkpoint()  # within a computation's turn, another's, if one waits (infra/turns.py)

        return file.catch_up(each)

    def _read_months(self, paths: list[Path]) -> tuple[LineTable, LineIndex, dict[str, MonthFile]]:
        lines, index, files = LineTable(), LineIndex(), {}
        for path in paths:
            file = MonthFile(path)
            try:
                self._index(file, lines, index)
            except (FileNotFoundError, NotRegularFile):
                continue  # gone, or no longer a regular file, since it was listed: not a month file
            files[path.name] = file
        return lines, index, files

    def _swap(self, lines: LineTable, index: LineIndex, files: dict[str, MonthFile]) -> None:
        """The new state, indexed aside (on the loading thread, once per load), put in place at once."""
        self._files = files
        self._state = (lines, index)
        self.generation += 1
        self.disk.bump()

    def load(self) -> None:
        self._types = set()
        self._swap(*self._read_months(self.log.month_files()))
        self.loaded = True
        self.partial = False
        self.renames()  # read here, on the loading thread, not by the first query (the window's, often)

    def load_newest(self, count: int = 200) -> None:
        """Just enough of the newest month files for a first page; `load()` then reads everything."""
        if self.loaded:
            return
        self._types = set()
        months: list[tuple[LineTable, LineIndex, dict[str, MonthFile]]] = []
        for path in reversed(self.log.month_files()):
            months.insert(0, self._read_months([path]))
            if sum(len(m[0]) for m in months) >= count:
                break
        lines, index, files = LineTable(), LineIndex(), {}
        for month_lines, month_index, month_files in months:  # in file order, positions moved past the months before
            for piece in month_lines.pieces():
                lines.add_piece(piece)
            index.absorb(month_index)
            files.update(month_files)
        self._swap(lines, index, files)
        self.partial = True

    def changed_on_disk(self) -> bool:
        """Whether a month file is not as last read, or one came or went (a stat each; no reading). Views drop
        the rows they kept at once; `refresh` then reads what changed."""
        if not (self.loaded or self.partial):
            return False
        files = dict(self._files)  # the runner may add a month meanwhile: a copy taken at once
        changed = any(file.changed_on_disk() for file in files.values())
        if not changed and self.loaded:
            changed = {p.name for p in self.log.month_files()} != set(files)
        if changed:
            self.disk.bump()
        return changed

    def refresh(self) -> bool:
        """Pick up what PLUR appended (only the new bytes, once the bytes read before are found unchanged); a
        month file replaced, rewritten or shortened, or an older month that grew, is read again whole."""
        if not self.loaded:
            return False
        return self._catch_up()

    def _catch_up(self) -> bool:
        names = {p.name: p for p in self.log.month_files()}
        files = self._files
        if set(files) - set(names):
            return self._read_again()
        lines, index = self._state
        index.extend(lines)  # (in step already; a no-op unless lines were added another way)
        oldest, changed = min(files, default=""), False
        for name in sorted(names):
            file = files.get(name)
            if file is None:
                if name < oldest and not self.loaded:
                    continue  # older than the first page: the full load reads it
                if name < max(files, default=""):
                    return self._read_again()  # a month before the newest appeared: file order needs a new read
                file = MonthFile(names[name])
                files = self._files = {**files, name: file}  # a new dict: a stat on the GUI thread may be iterating
            elif not file.changed_on_disk():
                continue
            newest = name == max(files)
            try:
                if not newest and names[name].stat().st_size > file.extent.size:
                    return self._read_again()  # an older month grew: its lines come before the newest's
                added = self._index(file, lines, index)
            except OSError:  # MonthChanged: rewritten, replaced or shortened; or gone since it was listed
                return self._read_again()
            if added and not newest:
                return self._read_again()
            changed = changed or added
        if changed:
            self.disk.bump()
        return changed

    def _read_again(self) -> bool:
        """Everything read again (once loaded; the first page's state waits for the full load, next in line)."""
        if not self.loaded:
            return False
        self.load()
        return True

    def add(self, events: Iterable[dict[str, object]]) -> None:
        """Our own appends: once the history is read, they are read from the month files they were appended to
        (with anything PLUR appended before them, in file order); before, kept in memory until the load."""
        events = list(events)
        self._types.update(str(event.get("event")) for event in events)
        if self.loaded or self.partial:
            self._catch_up()
            return
        lines, index = self._state
        for event in events:
            raw = js_stringify(event).encode("utf-8")
            lines.append_line(raw, str(event.get("timestamp", ""))[:7], 0)
        index.extend(lines)

    # -- queries -------------------------------------------------------------------------------------------

    @property
    def events(self) -> Events:
        return Events(self.lines, reverse=False, disk=self.disk)

    def newest_first(self, flt: HistoryFilter | None = None, stale: Callable[[], bool] | None = None) -> Events:
        """The lines a filter matches, newest first, as positions (4 bytes a match) read again when shown. A month
        file found changed while matching gives an empty view marked `changed` (the history is read again).
        `stale()`, asked every few thousand lines, says nobody wants the answer any more (a newer filter, or the
        filter reset): the matching stops there and the empty view it gives is never shown."""
        lines, index = self._state
        if flt is None or flt.empty:
            return Events(lines, disk=self.disk)
        text_only = flt.text and flt == HistoryFilter(text=flt.text)
        if flt.trust:
            self.sync_trust()
        try:
            with gc_paused():  # a parsed line is garbage at once: young passes (88 ms seen) only hold the lock
                matched = self._matching(flt, lines, index, bool(text_only), stale)
        except _Stale:
            return Events([], disk=self.disk)
        except MonthChanged:
            self.disk.bump()
            return Events([], disk=self.disk, changed=True)
        return Events(lines, positions=matched, disk=self.disk)

    def _matching(
        self, flt: HistoryFilter, lines: LineTable, index: LineIndex, text_only: bool, stale: Callable[[], bool] | None
    ) -> array[int]:
        matched = array("i")
        for count, (position, line) in enumerate(self._candidates(flt, lines, index)):
            if stale is not None and not count % STALE_EVERY and stale():
                raise _Stale
            raw = line[0]
            if not flt.maybe(raw):
                continue
            if flt.trust:
                event = parse_line(*line)
                if flt.matches(event) and self.trust_of(line).state in flt.trust:
                    matched.append(position)
                continue
            if text_only and raw.isascii() and b"\\" not in raw and b"_month" not in raw:
                matched.append(position)  # the byte test was already exact for this line
            elif flt.matches(parse_line(*line)):
                matched.append(position)
        return matched

    @staticmethod
    def _candidates(flt: HistoryFilter, lines: LineTable, index: LineIndex) -> Iterable[tuple[int, Line]]:
        """The lines a filter can match, with their positions: those naming its engram, or the human ones, from
        the positions kept; else every line."""
        if flt.engram_id:
            positions = index.positions(flt.engram_id)
        elif flt.actor_kinds == frozenset({"human"}) or (flt.trust and TrustState.NOT_HUMAN not in flt.trust):
            positions = list(index.human)
        else:
            return enumerate(lines)
        return zip(positions, lines_at(lines, positions), strict=True)

    def page(self, flt: HistoryFilter, offset: int, limit: int) -> list[dict[str, object]]:
        return self.newest_first(flt)[offset : offset + limit]

    def timeline(self, engram_id: str) -> list[dict[str, object]]:
        """Everything that happened to one engram across all months, oldest first, under the ids PLUR 0.21 gave
        it before renaming it too (one line saying the history changed on disk, when a month file changed since it
        was read: it is read again)."""
        lines, index = self._state
        events = []
        try:
            renames = self.renames()
            for name in renames.names(engram_id):
                found = (parse_line(*line) for line in lines_at(lines, index.positions(name)))
                events += [
                    e for e in found if _names_engram(e, name) and renames.follows(engram_id, name, e.get("timestamp"))
                ]
        except MonthChanged:
            self.disk.bump()
            return [changed_event()]
        return sorted(events, key=lambda e: str(e.get("timestamp")))

    def renames(self) -> Renames:
        """PLUR 0.21's `engram_rekeyed` trail, read once per state of the history (a byte test per line): lines
        appended since the last reading (our own decisions, PLUR's appends) are the only ones read again, so the
        window's thread never pays for a million lines because one was added (a full read is per load, and
        `load` does it on the loading thread)."""
        stamp = self.stamp()
        held = self._renames
        if held is not None and held[0] == stamp:
            return held[1]
        lines, count = self.lines, len(self.lines)
        start, renames = 0, Renames()
        if held is not None and held[0][0] == stamp[0] and held[2] <= count:  # the same load, lines only added
            start, renames = held[2], held[1].copy()
        try:
            for line in lines if start == 0 else lines[start:count]:
                if b"engram_rekeyed" in line[0]:
                    renames.take(parse_line(*line))
        except MonthChanged:
            self.disk.bump()
            return renames
        self._renames = (stamp, renames, count)
        return renames

    def sync_trust(self) -> None:
        """Forget cached verdicts when keys.yaml changed (one stat per query, not per line)."""
        refresh = getattr(self.trust, "registry", None)
        if refresh is not None:
            refresh()  # re-reads keys.yaml when it changed, bumping the generation
        generation = getattr(self.trust, "generation", None)
        if generation != self._trust_generation:
            self._claim_trust = {}  # only a claim of a human is checked against keys.yaml: every other answer stays
            self._trust_generation = generation

    @property
    def trust_generation(self) -> object:
        return self._trust_generation

    def stamp(self) -> tuple[object, ...]:
        """What an answer computed from the history rests on, for a cache to compare: take it before computing the
        answer (after `sync_trust`). A read that fails meanwhile (the answer then leaves out what it could not
        read) moves `disk.version` on, so an answer computed during a failed read is never found current again,
        even when the month then turns out unchanged."""
        return (self.generation, len(self.lines), self._trust_generation, self.disk.version)

    def trust_of(self, line: Line, event: dict[str, object] | None = None) -> Trust:
        """The trust of one line's event (`event`: that line already parsed), verified once per line (call
        sync_trust first in a query)."""
        raw = line[0]
        found = self._trust_cache.get(raw) or self._claim_trust.get(raw)
        if found is None:
            check = getattr(self.trust, "check_line", None)  # sync_trust read keys.yaml; a TrustChecker verifies
            event = event if event is not None else parse_line(*line)  # a line once, whatever the keys are later
            found = check(event, raw) if check is not None else getattr(self.trust, "check", self.trust)(event)
            (self._trust_cache if found.state is TrustState.NOT_HUMAN else self._claim_trust)[raw] = found
        return found

    def rejections(self) -> Mapping[str, Verdict]:
        """content_hash -> the latest rejection (an undo of a reject takes it back); a verdict validly signed by
        a human wins over any claim that is not. Maintained as lines arrive (`RejectionLedger`); when a month
        file changed on disk, the verdicts of the lines read before (the history is read again)."""
        self.sync_trust()
        lines, index = self._state
        try:
            return index.rejections.verdicts(lines, index.rejects, parse_line, self.trust_of, self._trust_generation)
        except MonthChanged:
            self.disk.bump()
            return index.rejections.current()

    def rejections_touched(self, since: Mapping[str, Verdict]) -> set[str] | None:
        """The content hashes whose verdict may differ between `since` (an answer of `rejections`) and the
        latest answer; None when that cannot be said (the history was read again since, or it is too old)."""
        return self._state[1].rejections.touched_since(since)

    def human_lines(self) -> list[Line]:
        """Every line that mentions a human actor (a byte prefilter; parse to be sure)."""
        lines, index = self._state
        return self._readable(lines, list(index.human))

    def human_decisions(self) -> set[tuple[str, str]]:
        """(engram id, timestamp) of every event plur_desk wrote (byte prefilter on our runtime name)."""
        lines, index = self._state
        found = set()
        for line in self._readable(lines, list(index.ours)):
            event = parse_line(*line)
            found.add((str(event.get("engram_id")), str(event.get("timestamp"))))
        return found

    def _readable(self, lines: LineTable, positions: list[int]) -> list[Line]:
        """The lines at `positions`, without those whose month file changed since it was read (until it is read
        again: every cache of what these answer is kept by `generation`, which the new read moves on)."""
        try:
            return lines_at(lines, positions)
        except MonthChanged:
            self.disk.bump()
        out = []
        for position in positions:
            with contextlib.suppress(MonthChanged):
                out.append(lines[position])
        return out

    def types(self) -> list[str]:
        return sorted(self._types)

    def malformed_count(self) -> int:
        """Lines that cannot be a JSON object (a byte-level count; `plur-desk check` gives the exact list)."""
        return self._state[1].malformed
