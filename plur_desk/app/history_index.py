"""The history log in memory: every month's events, per-engram timelines, rejection tombstones, filtered pages."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from plur_desk.app.rows import Verdict
from plur_desk.infra.clock import parse_instant
from plur_desk.store.history import HistoryLog, HistoryRead, MalformedLine, read_file


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


@dataclass(frozen=True)
class HistoryFilter:
    types: frozenset[str] = frozenset()
    actor_kinds: frozenset[str] = frozenset()
    reviewer: str = ""
    engram_id: str = ""
    text: str = ""
    since: datetime | None = None
    until: datetime | None = None

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


def _names_engram(event: dict[str, object], engram_id: str) -> bool:
    if event.get("engram_id") == engram_id:
        return True
    data = event.get("data")
    if isinstance(data, dict):
        if engram_id in (data.get("engram_b"), data.get("winner"), data.get("loser"), data.get("earlier"),
                         data.get("later")):
            return True
        ids = data.get("ids")
        if isinstance(ids, list) and engram_id in ids:
            return True
    return False


class HistoryIndex:
    def __init__(self, log: HistoryLog) -> None:
        self.log = log
        self.events: list[dict[str, object]] = []
        self.malformed: list[MalformedLine] = []
        self._sizes: dict[str, int] = {}
        self.loaded = False

    def load(self) -> None:
        read = HistoryRead()
        sizes = {}
        for path in self.log.month_files():
            sizes[path.name] = path.stat().st_size
            read_file(path, read)
        self.events, self.malformed, self._sizes = read.events, read.malformed, sizes
        self.loaded = True

    def refresh(self) -> bool:
        """Re-read when a month file grew or appeared (PLUR appended); True when something changed."""
        if not self.loaded:
            return False
        current = {p.name: p.stat().st_size for p in self.log.month_files()}
        if current != self._sizes:
            self.load()
            return True
        return False

    def add(self, events: Iterable[dict[str, object]]) -> None:
        """Our own appends, without re-reading the files."""
        added = False
        for event in events:
            copy = dict(event)
            copy["_month"] = str(event.get("timestamp", ""))[:7]
            self.events.append(copy)
            added = True
        if added and self.loaded:
            self._sizes = {p.name: p.stat().st_size for p in self.log.month_files()}

    def newest_first(self, flt: HistoryFilter | None = None) -> list[dict[str, object]]:
        events = self.events if flt is None else [e for e in self.events if flt.matches(e)]
        return sorted(events, key=lambda e: str(e.get("timestamp", "")), reverse=True)

    def page(self, flt: HistoryFilter, offset: int, limit: int) -> list[dict[str, object]]:
        return self.newest_first(flt)[offset:offset + limit]

    def timeline(self, engram_id: str) -> list[dict[str, object]]:
        """Everything that happened to one engram across all months, oldest first."""
        return sorted((e for e in self.events if _names_engram(e, engram_id)), key=lambda e: str(e.get("timestamp")))

    def rejections(self) -> dict[str, Verdict]:
        verdicts: dict[str, Verdict] = {}
        for event in sorted(self.events, key=lambda e: str(e.get("timestamp", ""))):
            data = event.get("data")
            if isinstance(data, dict) and data.get("action") == "undo" and data.get("undos") == "reject":
                undone = event.get("engram_id")
                verdicts = {k: v for k, v in verdicts.items() if v.engram_id != undone}
                continue
            if event.get("event") == "engram_retired" and isinstance(data, dict) and data.get("action") == "reject":
                digest = data.get("content_hash")
                if isinstance(digest, str):
                    verdicts[digest] = Verdict(str(event.get("engram_id")), actor_name(event),
                                               str(event.get("timestamp", "")), str(data.get("reason", "")))
        return verdicts

    def types(self) -> list[str]:
        return sorted({str(e.get("event")) for e in self.events})
