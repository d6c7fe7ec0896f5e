"""The writer ledger: for every agent that writes drafts, what reviewers made of them.

A writer is the `attribution` of the engram (asserted_by, model, runtime, tool); when the engram has left the
store (compacted) the `actor` of its `engram_created` event stands in. Decisions are the human events plur_desk
writes (approve, reject with its reason, edit; undo and redo taken into account), and, for an engram whose
events are not in the log, its `review` record. Built from raw history lines in one pass that parses only the
lines that can matter (a byte test first), then kept up to date from appended lines only.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from operator import itemgetter
from pathlib import Path
from typing import NamedTuple

from plur_desk.app.rows import created_of
from plur_desk.infra.clock import parse_instant

Line = tuple[bytes, str, int]
WINDOW_DAYS = 30
WEEKS = 8
# plur_desk's own decision lines (js_stringify key order); undo, redo and anything else go through json.loads.
_DECISION = re.compile(
    rb'\{"event":"engram_(?:updated|retired)","engram_id":"([^"\\]*)","timestamp":"([^"\\]*)",'
    rb'"data":\{"action":"(approve|reject|edit)"(?:,"reason":("(?:[^"\\]|\\.)*"))?[^\n]*,"actor":\{[^\n]*'
    rb'"kind":"human"[^\n]*\}\}[ \t\r]*\Z'
)
# PLUR's own line shape (JSON.stringify key order); anything else is parsed as JSON instead.
_CREATED_ALL = re.compile(
    rb'\{"event":"engram_created","engram_id":"([^"\\\n]*)","timestamp":"([^"\\\n]*)",[^\n]*"actor":(\{[^\n]*\})\}[ \t\r]*$',
    re.M,
)
_ID_RE = re.compile(r"\b(?:ENG|ABS|META)-[A-Za-z0-9-]+")
_CUT = re.compile(r"[:;(]| - | — |\bof\b")


class WriterKey(NamedTuple):  # a tuple: hashed and compared in C, it keys every count
    asserted_by: str
    model: str = ""
    runtime: str = ""
    tool: str = ""

    @property
    def label(self) -> str:
        return " · ".join(p for p in (self.asserted_by, self.model, self.runtime, self.tool) if p)

    @staticmethod
    def of(attribution: object) -> WriterKey:
        if not isinstance(attribution, dict):
            return WriterKey("(unattributed)")

        def name(key: str) -> str:
            value = attribution.get(key)
            return str(value.get("name", "") or "") if isinstance(value, dict) else ""

        who = attribution.get("asserted_by")
        return WriterKey(str(who) if isinstance(who, str) and who else "(unattributed)", name("model"),
                         name("runtime"), name("tool"))  # fmt: skip


@lru_cache(maxsize=4096)
def reason_kind(reason: str) -> str:
    """'duplicate of ENG-…' and 'Duplicate.' are one reason: ids dropped, lowercased, cut at ':' or ' of '."""
    text = _CUT.split(_ID_RE.sub("", reason).strip().lower())[0]
    return text.strip(" .,!") or "(no reason)"


@dataclass
class _Decision:
    kind: str  # approved | rejected
    at: str
    reason: str = ""
    edited: bool = False


@dataclass(frozen=True)
class WriterStats:
    writer: WriterKey
    created: int
    drafts: int
    approved: int
    approved_after_edit: int
    rejected: int
    rejected_by_reason: tuple[tuple[str, int], ...]
    pending: int
    median_hours_to_decision: float | None
    last30: tuple[int, int, int, float | None]  # drafts written, approved, rejected, median hours
    weekly: tuple[tuple[int, int], ...] = ()  # (approved, rejected) per week, oldest first, the last WEEKS weeks

    @property
    def decided(self) -> int:
        return self.approved + self.rejected

    @property
    def rejection_rate(self) -> float:
        return self.rejected / self.decided if self.decided else 0.0

    def line(self) -> str:
        """The writer's line in a draft's detail."""
        text = f"{self.writer.label}: {self.approved} approved, {self.rejected} rejected, {self.pending} pending"
        if self.rejected and self.rejected_by_reason:
            reason, count = self.rejected_by_reason[0]
            text += f" — {round(100 * count / self.rejected)} % of rejections '{reason}'"
        return text

    def to_json(self) -> dict[str, object]:
        return {
            "writer": {
                "asserted_by": self.writer.asserted_by,
                "model": self.writer.model,
                "runtime": self.writer.runtime,
                "tool": self.writer.tool,
            },
            "created": self.created,
            "drafts": self.drafts,
            "approved": self.approved,
            "approved_after_edit": self.approved_after_edit,
            "rejected": self.rejected,
            "rejected_by_reason": dict(self.rejected_by_reason),
            "pending": self.pending,
            "median_hours_to_decision": self.median_hours_to_decision,
            "last_30_days": dict(
                zip(("drafts", "approved", "rejected", "median_hours_to_decision"), self.last30, strict=True)
            ),
            "weekly": [{"approved": a, "rejected": r} for a, r in self.weekly],
        }


@dataclass
class Ledger:
    """Raw facts from history, kept incrementally; `stats()` joins them with the store's current engrams."""

    created: dict[str, tuple[WriterKey, str]] = field(default_factory=dict)
    decisions: dict[str, list[_Decision]] = field(default_factory=dict)
    edited: set[str] = field(default_factory=set)
    created_count: Counter[WriterKey] = field(default_factory=Counter)
    fed: int = 0
    _source: object = None
    _actors: dict[bytes, WriterKey] = field(default_factory=dict)

    # -- feeding -------------------------------------------------------------------------------------------

    def sync(self, lines: Sequence[Line]) -> int:
        """Feed the lines not seen yet; a replaced list (the log was read again) starts over."""
        if lines is not self._source or len(lines) < self.fed:
            self.created, self.decisions, self.edited, self.fed = {}, {}, set(), 0
            self.created_count = Counter()
            self._source = lines
        start = self.fed
        self.feed([raw for raw, _month, _number in lines[start:]]) if len(lines) > start else None
        return len(lines) - start

    def feed(self, raws: list[bytes]) -> None:
        self.feed_bytes(b"\n".join(raws) + b"\n", len(raws))

    def feed_bytes(self, data: bytes, lines: int) -> None:
        """Whole lines of history. Only two kinds matter: engram_created (who wrote an engram) and the
        human decisions plur_desk writes; both are found with byte searches, not by walking every line."""
        self.fed += lines
        self._created_bytes(data)
        human = []
        pos = data.find(b'"human"')
        while pos >= 0:
            start, end = data.rfind(b"\n", 0, pos) + 1, data.find(b"\n", pos)
            end = len(data) if end < 0 else end
            if b'"engram_created"' not in data[start:end]:
                human.append(data[start:end])
            pos = data.find(b'"human"', end)
        for raw in human:  # in order: an edit before an approval makes it "approved after edit"
            match = _DECISION.match(raw)
            if match is None:
                event = _loads(raw)
                if event is not None:
                    self._human(event)
                continue
            ident, ts = match.group(1).decode("utf-8", "replace"), match.group(2).decode("ascii", "replace")
            action, reason = match.group(3), match.group(4)
            if action == b"edit":
                self.edited.add(ident)
                continue
            text = "" if reason is None else json.loads(reason) if b"\\" in reason else reason[1:-1].decode()
            kind = "approved" if action == b"approve" else "rejected"
            self.decisions.setdefault(ident, []).append(
                _Decision(kind, ts, text, kind == "approved" and ident in self.edited)
            )

    def _created_bytes(self, data: bytes) -> None:
        """One regex pass when every engram_created line has PLUR's own shape; else line by line."""
        found = _CREATED_ALL.findall(data)
        if len(found) != data.count(b'"engram_created"'):
            for raw in data.split(b"\n"):
                event = _loads(raw) if b'"engram_created"' in raw else None
                if event is not None and event.get("event") == "engram_created":
                    actor = json.dumps(event.get("actor"), separators=(",", ":")).encode()
                    self._add_created([str(event.get("engram_id"))], [str(event.get("timestamp"))], [actor])
            return
        if found:
            ids = b"\n".join(map(itemgetter(0), found)).decode("utf-8", "replace").split("\n")
            stamps = b"\n".join(map(itemgetter(1), found)).decode("utf-8", "replace").split("\n")
            self._add_created(ids, stamps, list(map(itemgetter(2), found)))

    def _add_created(self, ids: list[str], stamps: list[str], actors: list[bytes]) -> None:
        known = self._actors
        for actor in set(actors) - known.keys():
            known[actor] = WriterKey.of(_loads(actor))
        keys = list(map(known.__getitem__, actors))
        fresh = dict(zip(reversed(ids), zip(reversed(keys), reversed(stamps), strict=True), strict=True))
        for ident in fresh.keys() & self.created.keys():  # the first engram_created of an id wins
            del fresh[ident]
        self.created.update(fresh)
        self.created_count.update(map(itemgetter(0), fresh.values()))

    def _human(self, event: dict[str, object]) -> None:
        actor = event.get("actor")
        if not isinstance(actor, dict) or actor.get("kind") != "human":
            return
        data = event.get("data")
        if not isinstance(data, dict):
            return
        ident, ts, action = str(event.get("engram_id")), str(event.get("timestamp")), data.get("action")
        history = self.decisions.setdefault(ident, [])
        if action == "approve":
            history.append(_Decision("approved", ts, edited=ident in self.edited))
        elif action == "reject":
            history.append(_Decision("rejected", ts, str(data.get("reason", ""))))
        elif action == "edit":
            self.edited.add(ident)
        elif action in ("undo", "redo"):
            self._replay(ident, ts, str(data.get(action + "s", "")), action, data)

    def _replay(self, ident: str, ts: str, what: str, verb: str, data: dict[str, object]) -> None:
        """Undo and redo carry the review record they moved: that says which decision came or went."""
        history = self.decisions.setdefault(ident, [])
        fields = data.get("fields")
        moved = fields.get("review") if isinstance(fields, dict) else None
        before = moved.get("from") if isinstance(moved, dict) else None
        after = moved.get("to") if isinstance(moved, dict) else None
        gone = before.get("state") if isinstance(before, dict) else None
        came = after if isinstance(after, dict) and after.get("state") in ("approved", "rejected") else None
        if gone in ("approved", "rejected") and history and history[-1].kind == gone:
            history.pop()
        if came is not None:
            history.append(_Decision(str(came["state"]), ts, str(came.get("reason", "")), ident in self.edited))
        if what == "edit":
            (self.edited.discard if verb == "undo" else self.edited.add)(ident)

    # -- results -------------------------------------------------------------------------------------------

    def stats(self, engrams: Iterable[dict[str, object]], now: datetime) -> list[WriterStats]:
        store = {str(e.get("id")): e for e in engrams}
        since, end_of_week = (now - timedelta(days=WINDOW_DAYS)).timestamp(), now.timestamp()
        acc: dict[WriterKey, _Acc] = {}
        own = {i: WriterKey.of(e["attribution"]) for i, e in store.items() if isinstance(e.get("attribution"), dict)}
        counts = Counter(self.created_count)
        for ident, key in own.items():  # the engram's own attribution is more precise than its event's actor
            known = self.created.get(ident)
            if known is not None and known[0] != key:
                counts[known[0]] -= 1
                counts[key] += 1

        def writer_of(ident: str) -> WriterKey:
            known = self.created.get(ident)
            return own.get(ident) or (known[0] if known else WriterKey("(unattributed)"))

        for key, count in counts.items():
            acc.setdefault(key, _Acc()).created = count
        for ident, engram in store.items():
            if engram.get("commitment") == "draft" and engram.get("status") == "active":
                a = _acc(acc, writer_of(ident))
                a.pending += 1
                a.written(_epoch(self._created_at(ident, engram)), since)
        for ident, decision in self._final_decisions(store).items():
            a = _acc(acc, writer_of(ident))
            created = _epoch(self._created_at(ident, store.get(ident)))
            a.written(created, since)
            a.decide(decision, created, since, end_of_week)
        return sorted(
            (a.result(k) for k, a in acc.items() if a.created or a.drafts), key=lambda s: (-s.drafts, s.writer)
        )

    def _created_at(self, ident: str, engram: dict[str, object] | None) -> str:
        known = self.created.get(ident)
        if known:
            return known[1]
        return created_of(engram) if engram else ""

    def _final_decisions(self, store: dict[str, dict[str, object]]) -> dict[str, _Decision]:
        out = {ident: history[-1] for ident, history in self.decisions.items() if history}
        for ident, engram in store.items():
            record = engram.get("review")
            if ident in out or ident in self.decisions or not isinstance(record, dict):
                continue
            if record.get("state") in ("approved", "rejected"):
                out[ident] = _Decision(str(record["state"]), str(record.get("at", "")), str(record.get("reason", "")))
        return out


def _acc(acc: dict[WriterKey, _Acc], key: WriterKey) -> _Acc:
    found = acc.get(key)
    if found is None:
        found = acc[key] = _Acc()
    return found


@dataclass
class _Acc:
    created: int = 0
    pending: int = 0
    drafts: int = 0
    approved: int = 0
    after_edit: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    hours: list[float] = field(default_factory=list)
    recent: list[int] = field(default_factory=lambda: [0, 0, 0])
    recent_hours: list[float] = field(default_factory=list)
    weekly: list[list[int]] = field(default_factory=lambda: [[0, 0] for _ in range(WEEKS)])

    def written(self, created: float | None, since: float) -> None:
        self.drafts += 1
        if created is not None and created >= since:
            self.recent[0] += 1

    def decide(self, decision: _Decision, start: float | None, since: float, now: float) -> None:
        if decision.kind == "approved":
            self.approved += 1
            self.after_edit += decision.edited
        else:
            self.reasons[reason_kind(decision.reason)] += 1
        end = _epoch(decision.at)
        hours = (end - start) / 3600 if start is not None and end is not None and end >= start else None
        if hours is not None:
            self.hours.append(hours)
        week = int((now - end) // 604800) if end is not None and end <= now else WEEKS
        if week < WEEKS:
            self.weekly[WEEKS - 1 - week][0 if decision.kind == "approved" else 1] += 1
        if end is not None and end >= since:
            self.recent[1 if decision.kind == "approved" else 2] += 1
            if hours is not None:
                self.recent_hours.append(hours)

    def result(self, key: WriterKey) -> WriterStats:
        return WriterStats(
            writer=key,
            created=self.created,
            drafts=self.drafts,
            approved=self.approved,
            approved_after_edit=self.after_edit,
            rejected=sum(self.reasons.values()),
            rejected_by_reason=tuple(self.reasons.most_common()),
            pending=self.pending,
            median_hours_to_decision=_median(self.hours),
            last30=(self.recent[0], self.recent[1], self.recent[2], _median(self.recent_hours)),
            weekly=tuple((a, r) for a, r in self.weekly),
        )


@lru_cache(maxsize=1 << 20)  # a refresh after each decision re-reads the same instants: parse each once
def _epoch(text: str) -> float | None:
    """Seconds since the epoch of an ISO date or instant (PLUR's UTC strings), None when unparseable."""
    try:
        moment = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        parsed = parse_instant(text)
        return parsed.timestamp() if parsed else None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 2) if values else None


def _loads(raw: bytes) -> dict[str, object] | None:
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def ledger_from_files(history_dir: Path) -> Ledger:
    """A cold build straight from the month files (for the terminal view and the benchmark)."""
    ledger = Ledger()
    for path in sorted(history_dir.glob("*.jsonl")):
        data = path.read_bytes()
        data = data[: data.rfind(b"\n") + 1]  # a line still being written is read next time
        ledger.feed_bytes(data, 0)  # `fed` counts lines only for sync() with a loaded history
    return ledger
