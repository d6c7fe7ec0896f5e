"""The writer ledger's values: who a writer is, one decision, a writer's record, and how it is summed up."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import NamedTuple, Protocol

from plur_desk.infra.clock import parse_instant

WINDOW_DAYS = 30
WEEKS = 8
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


def writer_key(engram: Mapping[str, object] | None) -> WriterKey:
    """Who wrote an engram, from its attribution ('(unattributed)' when it names nobody, or the engram is gone)."""
    return WriterKey.of(engram.get("attribution") if engram is not None else None)


@lru_cache(maxsize=4096)
def reason_kind(reason: str) -> str:
    """'duplicate of ENG-…' and 'Duplicate.' are one reason: ids dropped, lowercased, cut at ':' or ' of '."""
    text = _CUT.split(_ID_RE.sub("", reason).strip().lower())[0]
    return text.strip(" .,!") or "(no reason)"


@dataclass
class Decision:
    """A reviewer's decision on one writer's engram, as the writer's figures count it."""

    kind: str  # approved | rejected
    at: str
    reason: str = ""
    edited: bool = False


@dataclass(frozen=True)
class WriterStats:
    """One writer's figures: what it wrote and how reviewers decided on it."""

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
    unverified: int = 0  # engrams with a human claim that no validly signed event backs: not counted above

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
        if self.unverified:
            text += f" ({self.unverified} unverified claims not counted)"
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
            "unverified_claims": self.unverified,
            "median_hours_to_decision": self.median_hours_to_decision,
            "last_30_days": dict(
                zip(("drafts", "approved", "rejected", "median_hours_to_decision"), self.last30, strict=True)
            ),
            "weekly": [{"approved": a, "rejected": r} for a, r in self.weekly],
        }


def acc_for(acc: dict[WriterKey, Acc], key: WriterKey) -> Acc:
    found = acc.get(key)
    if found is None:
        found = acc[key] = Acc()
    return found


@dataclass
class Acc:
    """The running counts of one writer while its figures are gathered."""

    created: int = 0
    pending: int = 0
    unverified: int = 0
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

    def decide(self, decision: Decision, start: float | None, since: float, now: float) -> None:
        if decision.kind == "approved":
            self.approved += 1
            self.after_edit += decision.edited
        else:
            self.reasons[reason_kind(decision.reason)] += 1
        end = epoch(decision.at)
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
        last30 = (self.recent[0], self.recent[1], self.recent[2], median_of(self.recent_hours))
        return stats_of(key, self, last30, self.weekly)


class Counts(Protocol):
    """A writer's running totals, as `Acc` (counted from scratch) and `writer_book.Tally` (kept) hold them."""

    created: int
    drafts: int
    approved: int
    after_edit: int
    pending: int
    unverified: int
    reasons: Counter[str]
    hours: list[float]


def stats_of(
    key: WriterKey,
    counts: Counts,
    last30: tuple[int, int, int, float | None],
    weekly: Iterable[Sequence[int]],
) -> WriterStats:
    """The numbers shown for one writer, from its totals and its recent and weekly counts."""
    return WriterStats(
        writer=key,
        created=counts.created,
        drafts=counts.drafts,
        approved=counts.approved,
        approved_after_edit=counts.after_edit,
        rejected=sum(counts.reasons.values()),
        rejected_by_reason=reasons_ranked(counts.reasons),
        pending=counts.pending,
        unverified=counts.unverified,
        median_hours_to_decision=median_of(counts.hours),
        last30=last30,
        weekly=tuple((a, r) for a, r in weekly),
    )


@lru_cache(maxsize=1 << 20)  # a refresh after each decision re-reads the same instants: parse each once
def epoch(text: str) -> float | None:
    """Seconds since the epoch of an ISO date or instant (PLUR's UTC strings), None when unparseable."""
    try:
        moment = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        parsed = parse_instant(text)
        return parsed.timestamp() if parsed else None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def median_of(values: list[float]) -> float | None:
    import statistics  # with fractions and decimal: on first use, not before the first draft

    return round(statistics.median(values), 2) if values else None


def reasons_ranked(reasons: Counter[str]) -> tuple[tuple[str, int], ...]:
    """Most frequent first, ties by name: the same whatever order the rejections were counted in."""
    return tuple(sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])))
