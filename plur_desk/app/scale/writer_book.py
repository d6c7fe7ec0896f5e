"""The writer ledger's numbers kept per engram: after a decision only the engrams it touched are counted again.

`Ledger.stats` computes every writer's numbers from scratch (one pass over the store and the decisions); here each
engram's part in them (its writer, whether it is a pending draft, when it was written, its final decision, an
unverified claim) is kept, and only the parts of engrams whose record object changed (a changed engram is a new
dict: records are never edited in place) or whose history the ledger read anew are taken out and put in again.
The numbers that depend on the clock (the last 30 days, the weekly counts) come from each writer's decisions kept
in time order, so a refresh reads only the recent ones. `tests/unit/app/test_scale_upkeep.py` checks the result
equals `Ledger.stats` after random sequences of changes.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import NamedTuple

from plur_desk.app.review.rows import created_of
from plur_desk.app.scale.writer_stats import (
    WEEKS,
    WINDOW_DAYS,
    Decision,
    WriterKey,
    WriterStats,
    epoch,
    median_of,
    reason_kind,
    stats_of,
)
from plur_desk.app.scale.writers import Ledger
from plur_desk.domain.engram_view import is_draft

Record = dict[str, object]
UNATTRIBUTED = WriterKey("(unattributed)")
WEEK = 604800.0


class Part(NamedTuple):
    """One engram's part in its writer's numbers."""

    writer: WriterKey
    created: bool  # an engram_created event names it (counted in `created`)
    pending: bool  # a draft waiting for review
    start: float | None  # when it was written (seconds), None when unknown
    decision: Decision | None  # the final decision the history proves (or the record, when no keys are known)
    claim: bool  # a human claim no validly signed event backs


def part_of(ledger: Ledger, ident: str, record: Record | None) -> Part | None:
    """What `Ledger.stats` counts for this engram, or None when it counts nothing."""
    known = ledger.created.get(ident)
    history = ledger.decisions.get(ident)
    decision, claim = None, False
    if history:
        decision = history[-1]
    else:
        claim = ident in ledger.unverified
        review = record.get("review") if record is not None else None
        if history is None and isinstance(review, dict) and review.get("state") in ("approved", "rejected"):
            if ledger.trust is None:  # no keys known: the record is all there is
                decision = Decision(str(review["state"]), str(review.get("at", "")), str(review.get("reason", "")))
            else:
                claim = True
    pending = record is not None and is_draft(record)
    if known is None and not pending and decision is None and not claim:
        return None
    attribution = record.get("attribution") if record is not None else None
    writer = WriterKey.of(attribution) if isinstance(attribution, dict) else known[0] if known else UNATTRIBUTED
    written = known[1] if known else created_of(record) if record else ""
    return Part(writer, known is not None, pending, epoch(written) if pending or decision else None, decision, claim)


def _change(values: list, value: object, sign: int) -> None:  # type: ignore[type-arg]
    """Put a value into a sorted list, or take one out."""
    if sign > 0:
        insort(values, value)
    else:
        del values[bisect_left(values, value)]


class Tally:
    """One writer's numbers as sums over its engrams' parts (each part added or taken out again)."""

    __slots__ = ("after_edit", "approved", "created", "decided", "drafts", "hours", "pending", "reasons", "unverified",
                 "written")  # fmt: skip

    def __init__(self) -> None:
        self.created = self.pending = self.unverified = self.drafts = self.approved = self.after_edit = 0
        self.reasons: Counter[str] = Counter()
        self.hours: list[float] = []  # sorted
        self.written: list[float] = []  # when each counted draft was written, sorted (the known ones)
        self.decided: list[tuple[float, bool, float]] = []  # (when, approved, hours or -1), sorted by time

    def apply(self, part: Part, sign: int) -> None:
        self.created += sign * part.created
        self.unverified += sign * part.claim
        if part.pending:
            self.pending += sign
            self._written(part.start, sign)
        decision = part.decision
        if decision is None:
            return
        self._written(part.start, sign)
        approved = decision.kind == "approved"
        if approved:
            self.approved += sign
            self.after_edit += sign * decision.edited
        else:
            kind = reason_kind(decision.reason)
            self.reasons[kind] += sign
            if not self.reasons[kind]:
                del self.reasons[kind]
        end, start = epoch(decision.at), part.start
        hours = (end - start) / 3600 if start is not None and end is not None and end >= start else None
        if hours is not None:
            _change(self.hours, hours, sign)
        if end is not None:
            _change(self.decided, (end, approved, -1.0 if hours is None else hours), sign)

    def _written(self, start: float | None, sign: int) -> None:
        self.drafts += sign
        if start is not None:
            _change(self.written, start, sign)

    def result(self, key: WriterKey, now: datetime) -> WriterStats:
        """The numbers as `Acc.result` gives them; only the decisions of the last weeks are read."""
        since, end_of_week = (now - timedelta(days=WINDOW_DAYS)).timestamp(), now.timestamp()
        weekly = [[0, 0] for _ in range(WEEKS)]
        recent, recent_hours = [0, 0], []
        first = bisect_left(self.decided, (min(since, end_of_week - WEEKS * WEEK),))
        for end, approved, hours in self.decided[first:]:
            week = int((end_of_week - end) // WEEK) if end <= end_of_week else WEEKS
            if week < WEEKS:
                weekly[WEEKS - 1 - week][0 if approved else 1] += 1
            if end >= since:
                recent[0 if approved else 1] += 1
                if hours >= 0:
                    recent_hours.append(hours)
        last30 = (len(self.written) - bisect_left(self.written, since), recent[0], recent[1], median_of(recent_hours))
        return stats_of(key, self, last30, weekly)


class WriterBook:
    """Every writer's numbers for the store's current engrams and the ledger's history, kept by engram."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self._parts: dict[str, Part] = {}
        self._tallies: dict[WriterKey, Tally] = {}

    def update(
        self, records: Mapping[str, Record], changed: Iterable[str], now: datetime
    ) -> dict[WriterKey, WriterStats]:
        """Count again the engrams in `changed` (ids whose record object changed, came or left) and those whose
        history the ledger read since the last update; every engram when the ledger started over."""
        touched = self.ledger.take_touched()
        if touched is None:
            self._parts, self._tallies = {}, {}
            ledger = self.ledger
            ids: Iterable[str] = (
                records.keys() | ledger.created.keys() | ledger.decisions.keys() | ledger.unverified.keys()
            )
        else:
            ids = touched.union(changed)
        for ident in ids:
            self._take(ident, part_of(self.ledger, ident, records.get(ident)))
        return {k: s for k, t in self._tallies.items() if t.created or t.drafts for s in (t.result(k, now),)}

    def _take(self, ident: str, part: Part | None) -> None:
        old = self._parts.get(ident)
        if old == part:
            return
        if old is not None:
            self._tallies[old.writer].apply(old, -1)
            del self._parts[ident]
        if part is not None:
            tally = self._tallies.get(part.writer)
            if tally is None:
                tally = self._tallies[part.writer] = Tally()
            tally.apply(part, 1)
            self._parts[ident] = part
