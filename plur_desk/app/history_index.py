"""The history log in memory, built for a million lines: raw lines kept as bytes, parsed only when shown or
matched; filters look at the bytes first and parse only candidates; a refresh reads only appended bytes.

Newest first means the reverse of file order (month files by name, lines in append order), which is the order
PLUR and plur_desk write them in.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import overload

from plur_desk.app.history_lines import LineIndex, LineTable, lines_at
from plur_desk.app.rows import Verdict
from plur_desk.domain.trust import Trust, TrustState
from plur_desk.infra.clock import parse_instant
from plur_desk.store.chain import js_stringify
from plur_desk.store.history import HistoryLog

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


@lru_cache(maxsize=4096)
def parse_line(raw: bytes, month: str, number: int) -> dict[str, object]:
    try:
        event = json.loads(raw)
    except ValueError:
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


@dataclass(frozen=True)
class HistoryFilter:
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


class Events(Sequence[dict[str, object]]):
    """A newest-first view of lines, parsed on access."""

    def __init__(self, lines: Sequence[Line], reverse: bool = True) -> None:
        self._lines = lines
        self._reverse = reverse

    def __len__(self) -> int:
        return len(self._lines)

    @overload
    def __getitem__(self, index: int) -> dict[str, object]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, object]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, object] | list[dict[str, object]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        line = self._lines[len(self._lines) - 1 - index] if self._reverse else self._lines[index]
        return parse_line(*line)

    def __iter__(self) -> Iterator[dict[str, object]]:
        for i in range(len(self)):
            yield self[i]


def _no_check(event: dict[str, object]) -> Trust:
    return Trust(TrustState.UNSIGNED if actor_kind(event) == "human" else TrustState.NOT_HUMAN, "not checked")


class HistoryIndex:
    """The lines and their positions (`LineIndex`) are one state, swapped whole by `load` and `load_newest`;
    between loads both only grow (`refresh`, `add`), so a reader on another thread sees a consistent prefix."""

    def __init__(self, log: HistoryLog, trust: Callable[[dict[str, object]], Trust] | None = None) -> None:
        self.log = log
        self.trust = trust or _no_check
        self._trust_cache: dict[bytes, Trust] = {}  # by the raw line, which fixes the event exactly
        self._trust_generation: object = None
        self._state: tuple[LineTable, LineIndex] = (LineTable(), LineIndex())
        self.generation = 0  # counts loads: positions and lengths compare only within one generation
        self._files: dict[str, tuple[int, int, int]] = {}  # name -> (inode, size read, lines read)
        self._types: set[str] = set()
        self.loaded = False
        self.partial = False  # only the newest months are in (load_newest); the rest is being read

    @property
    def lines(self) -> LineTable:
        return self._state[0]

    # -- loading -------------------------------------------------------------------------------------------

    def _read(
        self, name: str, start: int, first_line: int, lines: LineTable, files: dict[str, tuple[int, int, int]]
    ) -> bytes:
        """Append the complete lines of one month file from byte `start`; returns their bytes."""
        path = self.log.dir / name
        with open(path, "rb") as handle:
            handle.seek(start)
            data = handle.read()
        end = data.rfind(b"\n") + 1  # a cut-off last line is read once it is complete
        if end < len(data):
            data = data[:end]
        lines.add_month(data, name[:-6], first_line)
        self._types.update(m.decode("utf-8", "replace") for m in _EVENT_TYPE.findall(data))
        stat = path.stat()
        files[name] = (stat.st_ino, start + end, first_line + data.count(b"\n"))
        return data

    def _swap(self, months: list[tuple[bytes, LineTable]], files: dict[str, tuple[int, int, int]]) -> None:
        """The new state, indexed here (on the loading thread, once per load) and then put in place at once."""
        lines = LineTable()
        index = LineIndex()
        for block, month in months:
            lines.extend(month)
            index.extend_block(block, lines)
        self._files = files
        self._state = (lines, index)
        self.generation += 1

    def load(self) -> None:
        months: list[tuple[bytes, LineTable]] = []
        files: dict[str, tuple[int, int, int]] = {}
        self._types = set()
        for path in self.log.month_files():
            month = LineTable()
            months.append((self._read(path.name, 0, 0, month, files), month))
        self._swap(months, files)
        self.loaded = True
        self.partial = False

    def load_newest(self, count: int = 200) -> None:
        """Just enough of the newest month files for a first page; `load()` then reads everything."""
        if self.loaded:
            return
        months: list[tuple[bytes, LineTable]] = []
        files: dict[str, tuple[int, int, int]] = {}
        self._types = set()
        for path in reversed(self.log.month_files()):
            month = LineTable()
            months.insert(0, (self._read(path.name, 0, 0, month, files), month))
            if sum(len(m) for _b, m in months) >= count:
                break
        self._swap(months, files)
        self.partial = True

    def refresh(self) -> bool:
        """Pick up what PLUR appended (only the new bytes); a replaced or shrunk file is read again."""
        if not self.loaded:
            return False
        changed = False
        names = {p.name: p for p in self.log.month_files()}
        if set(self._files) - set(names):
            self.load()
            return True
        lines, index = self._state
        for name in sorted(names):
            stat = names[name].stat()
            inode, size, count = self._files.get(name, (stat.st_ino, 0, 0))
            if inode != stat.st_ino or stat.st_size < size:
                self.load()
                return True
            if stat.st_size > size:
                if name in self._files and name != max(self._files):
                    self.load()  # an older month grew: keep file order right by reading again
                    return True
                index.extend(lines)  # (in step already; a no-op unless lines were added another way)
                index.extend_block(self._read(name, size, count, lines, self._files), lines)
                changed = True
        return changed

    def add(self, events: Iterable[dict[str, object]]) -> None:
        """Our own appends, without re-reading the files."""
        lines, index = self._state
        for event in events:
            raw = js_stringify(event).encode("utf-8")
            lines.append_line(raw, str(event.get("timestamp", ""))[:7], 0)
            self._types.add(str(event.get("event")))
        index.extend(lines)
        if self.loaded:
            for path in self.log.month_files():
                stat = path.stat()
                _inode, _size, count = self._files.get(path.name, (stat.st_ino, 0, 0))
                self._files[path.name] = (stat.st_ino, stat.st_size, count)

    # -- queries -------------------------------------------------------------------------------------------

    @property
    def events(self) -> Events:
        return Events(self.lines, reverse=False)

    def newest_first(self, flt: HistoryFilter | None = None) -> Events:
        if flt is None or flt.empty:
            return Events(self.lines)
        text_only = flt.text and flt == HistoryFilter(text=flt.text)
        if flt.trust:
            self.sync_trust()
        matched = []
        for line in self._candidates(flt):
            raw = line[0]
            if not flt.maybe(raw):
                continue
            if flt.trust:
                event = parse_line(*line)
                if flt.matches(event) and self.trust_of(line).state in flt.trust:
                    matched.append(line)
                continue
            if text_only and raw.isascii() and b"\\" not in raw and b"_month" not in raw:
                matched.append(line)  # the byte test was already exact for this line
            elif flt.matches(parse_line(*line)):
                matched.append(line)
        return Events(matched)

    def _candidates(self, flt: HistoryFilter) -> Sequence[Line]:
        """The lines a filter can match: those naming its engram, or the human ones, from the positions kept;
        else every line."""
        lines, index = self._state
        if flt.engram_id:
            return lines_at(lines, index.positions(flt.engram_id))
        if flt.actor_kinds == frozenset({"human"}) or (flt.trust and TrustState.NOT_HUMAN not in flt.trust):
            return lines_at(lines, list(index.human))
        return lines

    def page(self, flt: HistoryFilter, offset: int, limit: int) -> list[dict[str, object]]:
        return self.newest_first(flt)[offset : offset + limit]

    def timeline(self, engram_id: str) -> list[dict[str, object]]:
        """Everything that happened to one engram across all months, oldest first."""
        lines, index = self._state
        events = [parse_line(*lines[p]) for p in index.positions(engram_id)]
        return sorted((e for e in events if _names_engram(e, engram_id)), key=lambda e: str(e.get("timestamp")))

    def sync_trust(self) -> None:
        """Forget cached verdicts when keys.yaml changed (one stat per query, not per line)."""
        refresh = getattr(self.trust, "registry", None)
        if refresh is not None:
            refresh()  # re-reads keys.yaml when it changed, bumping the generation
        generation = getattr(self.trust, "generation", None)
        if generation != self._trust_generation:
            # only a claim of a human is checked against keys.yaml: every other line's answer stays
            self._trust_cache = {k: v for k, v in self._trust_cache.items() if v.state is TrustState.NOT_HUMAN}
            self._trust_generation = generation

    @property
    def trust_generation(self) -> object:
        return self._trust_generation

    def trust_of(self, line: Line, event: dict[str, object] | None = None) -> Trust:
        """The trust of one line's event (`event`: that line already parsed), verified once per line (call
        sync_trust first in a query)."""
        found = self._trust_cache.get(line[0])
        if found is None:
            check = getattr(self.trust, "check", self.trust)  # sync_trust read keys.yaml for this query
            found = self._trust_cache[line[0]] = check(event if event is not None else parse_line(*line))
        return found

    def rejections(self) -> dict[str, Verdict]:
        """content_hash -> the latest rejection (an undo of a reject takes it back); a verdict validly signed by
        a human wins over any claim that is not. Maintained as lines arrive (`RejectionLedger`)."""
        self.sync_trust()
        lines, index = self._state
        return index.rejections.verdicts(lines, index.rejects, parse_line, self.trust_of, self._trust_generation)

    def human_lines(self) -> list[Line]:
        """Every line that mentions a human actor (a byte prefilter; parse to be sure)."""
        lines, index = self._state
        return lines_at(lines, list(index.human))

    def human_decisions(self) -> set[tuple[str, str]]:
        """(engram id, timestamp) of every event plur_desk wrote (byte prefilter on our runtime name)."""
        lines, index = self._state
        found = set()
        for line in lines_at(lines, list(index.ours)):
            event = parse_line(*line)
            found.add((str(event.get("engram_id")), str(event.get("timestamp"))))
        return found

    def types(self) -> list[str]:
        return sorted(self._types)

    def malformed_count(self) -> int:
        """Lines that cannot be a JSON object (a byte-level count; `plur-desk check` gives the exact list)."""
        return self._state[1].malformed
