"""The writer ledger: for every agent that writes drafts, what reviewers made of them.

A writer is the `attribution` of the engram (asserted_by, model, runtime, tool); when the engram has left the
store (compacted) the `actor` of its `engram_created` event stands in. Decisions are the human events plur_desk
writes (approve, reject with its reason, edit; undo and redo taken into account). With a trust checker (the
session's), only validly signed events are decisions; unsigned or forged human claims, and `review` records no
such event backs, are counted apart as unverified. Built from raw history lines in one pass that parses only the
lines that can matter (byte searches first), then kept up to date from appended lines only.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from operator import itemgetter
from pathlib import Path

from plur_desk.app.history.history_lines import JSON_ESCAPE
from plur_desk.app.history.history_table import LineTable
from plur_desk.app.review.rows import created_of
from plur_desk.app.scale.writer_stats import (
    WINDOW_DAYS,
    Acc,
    Decision,
    WriterKey,
    WriterStats,
    acc_for,
    epoch,
)
from plur_desk.domain.engram_view import is_draft
from plur_desk.domain.trust import Trust

Line = tuple[bytes, str, int]
# Lines fed at once: each feed is a few long calls (join, a regex over the joined bytes) that hold the interpreter
# lock throughout; over a million lines at once that is ~0.4 s in which the window's thread cannot run.
FEED_CHUNK = 20_000
# plur_desk's own decision lines (js_stringify key order); undo, redo and anything else go through json.loads.
_DECISION = re.compile(
    rb'\{"event":"engram_(?:updated|retired)","engram_id":"([^"\\]*)","timestamp":"([^"\\]*)",'
    rb'"data":\{"action":"(approve|reject|edit)"(?:,"reason":("(?:[^"\\]|\\.)*"))?[^\n]*,"actor":\{[^\n]*'
    rb'"kind":"human"[^\n]*\}[ \t\r]*\Z'  # the actor, then perhaps signature, signer, prev, hash
)
# PLUR's own line shape (JSON.stringify key order); anything else is parsed as JSON instead.
_CREATED_ALL = re.compile(
    rb'\{"event":"engram_created","engram_id":"([^"\\\n]*)","timestamp":"([^"\\\n]*)",[^\n]*"actor":(\{[^\n]*\})\}[ \t\r]*$',
    re.M,
)


@dataclass
class Ledger:
    """Raw facts from history, kept incrementally; `stats()` joins them with the store's current engrams."""

    created: dict[str, tuple[WriterKey, str]] = field(default_factory=dict)
    decisions: dict[str, list[Decision]] = field(default_factory=dict)
    edited: set[str] = field(default_factory=set)
    created_count: Counter[WriterKey] = field(default_factory=Counter)
    fed: int = 0
    trust: Callable[[dict[str, object]], Trust] | None = None  # None: every human claim counts (no keys known)
    unverified: dict[str, int] = field(default_factory=dict)  # engram id -> human claims that do not verify
    _source: object = None
    _generation: object = None
    _actors: dict[bytes, WriterKey] = field(default_factory=dict)
    _claims: list[bytes] = field(default_factory=list)  # every line that claims a human, in order
    _touched: set[str] | None = None  # ids whose facts changed since `take_touched`; None: every id (started over)

    # -- feeding -------------------------------------------------------------------------------------------

    def sync(self, lines: Sequence[Line]) -> int:
        """Feed the lines not seen yet; a replaced list (the log was read again) starts over."""
        generation = self._trust_generation()
        if lines is not self._source or len(lines) < self.fed:
            self.created, self.decisions, self.edited, self.fed = {}, {}, set(), 0
            self.created_count, self.unverified, self._claims = Counter(), {}, []
            self._source, self._generation, self._touched = lines, generation, None
        elif generation != self._generation:  # keys.yaml changed: only the human claims are judged again
            if self._touched is not None:  # the ids they named, before and after
                self._touched.update(self.decisions.keys() | self.unverified.keys())
            self.decisions, self.edited, self.unverified, self._generation = {}, set(), {}, generation
            self._decide(self._claims)
        start, end = self.fed, len(lines)
        if isinstance(lines, LineTable):  # the month files' bytes as they are: no object per line
            for data, count in lines.raw_runs(start, end, FEED_CHUNK):
                self.feed_bytes(data, count)
                del data  # before the next run is read (the loop keeps it until then): one run held, not two
        else:
            for at in range(start, end, FEED_CHUNK):
                self.feed([raw for raw, _month, _number in lines[at : at + FEED_CHUNK]])
        return end - start

    def take_touched(self) -> set[str] | None:
        """The engram ids whose creation, decisions or claims were read since the last call (None: all of them,
        the ledger started over); the ledger counts from here on."""
        touched, self._touched = self._touched, set()
        return touched

    def _touch(self, ident: str) -> None:
        if self._touched is not None:
            self._touched.add(ident)

    def _trust_generation(self) -> object:
        """keys.yaml changed: every verdict must be taken again (one stat, through the checker)."""
        registry = getattr(self.trust, "registry", None)
        if registry is not None:
            registry()
        return getattr(self.trust, "generation", None)

    def _verified(self, raw: bytes, event: dict[str, object] | None = None) -> bool:
        """Whether a human claim is a human decision: validly signed (when keys are known at all)."""
        if self.trust is None:
            return True
        if b'"signature"' not in raw:
            return False  # unsigned: no need to parse or verify
        event = event if event is not None else _loads(raw)
        if event is None:
            return False
        check_line = getattr(self.trust, "check_line", None)  # a TrustChecker: each line is verified once
        return (check_line(event, raw) if check_line is not None else self.trust(event)).counts_as_human

    def feed(self, raws: list[bytes]) -> None:
        self.feed_bytes(b"\n".join(raws) + b"\n", len(raws))

    def feed_bytes(self, data: bytes, lines: int) -> None:
        """Whole lines of history. Only two kinds matter: engram_created (who wrote an engram) and the
        human decisions plur_desk writes; both are found with byte searches, not by walking every line."""
        self.fed += lines
        self._created_bytes(data)
        human = []
        pos = _human_or_escaped(data, 0)
        while pos >= 0:
            start, end = data.rfind(b"\n", 0, pos) + 1, data.find(b"\n", pos)
            end = len(data) if end < 0 else end
            if b'"engram_created"' not in data[start:end]:
                human.append(data[start:end])
            pos = _human_or_escaped(data, end)
        self._claims += human
        self._decide(human)

    def _decide(self, human: list[bytes]) -> None:
        for raw in human:  # in order: an edit before an approval makes it "approved after edit"
            match = _DECISION.match(raw)
            if match is None:
                event = _loads(raw)
                if event is not None:
                    self._human(event, self._verified(raw, event))
                continue
            ident, ts = match.group(1).decode("utf-8", "replace"), match.group(2).decode("ascii", "replace")
            self._touch(ident)
            if not self._verified(raw):
                self.unverified[ident] = self.unverified.get(ident, 0) + 1
                continue
            action, reason = match.group(3), match.group(4)
            if action == b"edit":
                self.edited.add(ident)
                continue
            text = "" if reason is None else json.loads(reason) if b"\\" in reason else reason[1:-1].decode()
            kind = "approved" if action == b"approve" else "rejected"
            self.decisions.setdefault(ident, []).append(
                Decision(kind, ts, text, kind == "approved" and ident in self.edited)
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
            # interned: the parsed records hold these ids and timestamps as interned strings (one object for both)
            ids = list(map(sys.intern, b"\n".join(map(itemgetter(0), found)).decode("utf-8", "replace").split("\n")))
            stamps = list(map(sys.intern, b"\n".join(map(itemgetter(1), found)).decode("utf-8", "replace").split("\n")))
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
        if self._touched is not None:
            self._touched.update(fresh)
        self.created_count.update(map(itemgetter(0), fresh.values()))

    def _human(self, event: dict[str, object], verified: bool) -> None:
        actor = event.get("actor")
        if not isinstance(actor, dict) or actor.get("kind") != "human":
            return
        data = event.get("data")
        if not isinstance(data, dict):
            return
        ident, ts, action = str(event.get("engram_id")), str(event.get("timestamp")), data.get("action")
        self._touch(ident)
        if not verified:  # a claim, not a decision: shown as such, never counted
            if action in ("approve", "reject"):
                self.unverified[ident] = self.unverified.get(ident, 0) + 1
            return
        history = self.decisions.setdefault(ident, [])
        if action == "approve":
            history.append(Decision("approved", ts, edited=ident in self.edited))
        elif action == "reject":
            history.append(Decision("rejected", ts, str(data.get("reason", ""))))
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
            history.append(Decision(str(came["state"]), ts, str(came.get("reason", "")), ident in self.edited))
        if what == "edit":
            (self.edited.discard if verb == "undo" else self.edited.add)(ident)

    # -- results -------------------------------------------------------------------------------------------

    def stats(self, engrams: Iterable[dict[str, object]], now: datetime) -> list[WriterStats]:
        store = {str(e.get("id")): e for e in engrams}
        since, end_of_week = (now - timedelta(days=WINDOW_DAYS)).timestamp(), now.timestamp()
        acc: dict[WriterKey, Acc] = {}
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
            acc.setdefault(key, Acc()).created = count
        for ident, engram in store.items():
            if is_draft(engram):
                a = acc_for(acc, writer_of(ident))
                a.pending += 1
                a.written(epoch(self._created_at(ident, engram)), since)
        decided, claims = self._final_decisions(store)
        for ident in claims:
            acc_for(acc, writer_of(ident)).unverified += 1
        for ident, decision in decided.items():
            a = acc_for(acc, writer_of(ident))
            created = epoch(self._created_at(ident, store.get(ident)))
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

    def _final_decisions(self, store: dict[str, dict[str, object]]) -> tuple[dict[str, Decision], set[str]]:
        """Decisions the history proves, and the engrams that only claim one (a `review` record no verified
        event backs, or human claims that do not verify): those are shown as unverified, never counted."""
        out = {ident: history[-1] for ident, history in self.decisions.items() if history}
        claims = {ident for ident in self.unverified if ident not in out}
        for ident, engram in store.items():
            record = engram.get("review")
            if ident in out or ident in self.decisions or not isinstance(record, dict):
                continue
            if record.get("state") in ("approved", "rejected"):
                if self.trust is None:  # no keys known: the record is all there is
                    out[ident] = Decision(
                        str(record["state"]), str(record.get("at", "")), str(record.get("reason", ""))
                    )
                else:
                    claims.add(ident)
        return out, claims


def _human_or_escaped(data: bytes, at: int) -> int:
    """Where the next line that may claim a human starts to show it: `"human"`, or any JSON escape (`"h\\u0075man"`
    is "human" to every JSON reader; such a line is parsed and judged, never skipped). -1 when none is left."""
    human, escape = data.find(b'"human"', at), data.find(JSON_ESCAPE, at)
    return escape if human < 0 else human if escape < 0 else min(human, escape)


def _loads(raw: bytes) -> dict[str, object] | None:
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def ledger_from_files(history_dir: Path, trust: Callable[[dict[str, object]], Trust] | None = None) -> Ledger:
    """A cold build straight from the month files (for the benchmark)."""
    ledger = Ledger(trust=trust)
    for path in sorted(history_dir.glob("*.jsonl")):
        data = path.read_bytes()
        data = data[: data.rfind(b"\n") + 1]  # a line still being written is read next time
        ledger.feed_bytes(data, 0)  # `fed` counts lines only for sync() with a loaded history
    return ledger
