"""Frozen rows the panes display (display text and sort keys), built from store snapshots; no Qt here."""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Protocol

from plur_desk.domain.engram_view import attribution_of, outside_window, session_of, superseded
from plur_desk.domain.engram_view import created_of as created_of
from plur_desk.domain.lint import text_flags
from plur_desk.domain.review import fingerprint_items
from plur_desk.domain.seen import Seen, seen_tension
from plur_desk.domain.trust import Trust, TrustState
from plur_desk.infra.clock import parse_instant

UNVERIFIED = Trust(TrustState.UNSIGNED, "no signed event found")


@dataclass(frozen=True)
class Verdict:
    """An earlier rejection of the same statement (content_hash): the tombstone PLUR lacks."""

    engram_id: str
    by: str
    at: str
    reason: str
    trust: Trust = UNVERIFIED


@dataclass(frozen=True, slots=True)
class DraftRow:
    """One draft in the queue, as listed (built for every draft at launch)."""

    id: str
    statement: str
    scope: str
    domain: str
    type: str
    created: str  # ISO instant or date
    age_days: float
    writer: str
    model: str
    runtime: str
    flags: tuple[str, ...]
    rejected_before: Verdict | None
    fingerprint: tuple[tuple[str, object], ...]
    session: str = ""  # the agent session that last wrote it (newest sources[].session_id), "" when none

    @property
    def flag_text(self) -> str:
        return ", ".join(self.flags)

    @property
    def seen(self) -> Seen:
        """This row as rendered: what a decision on it expects to find on disk."""
        return Seen("engram", self.id, self.fingerprint)


def aged_only(old: DraftRow, new: DraftRow) -> bool:
    """Whether `new` is `old` derived again only because time passed (its age reads differently): it keeps its
    place in every order of the queue, the risk order and the reviewer's sorts (the age column sorts by creation)."""
    return old.id == new.id and replace(new, age_days=old.age_days) == old


@dataclass(frozen=True)
class TensionRow:
    """One tension in the Tensions pane, as listed."""

    id: str
    status: str
    category: str
    confidence: float
    detected_at: str
    age_days: float
    engram_a: str
    engram_b: str
    statement_a: str
    statement_b: str
    reason: str
    resolved_by: str | None
    seen: Seen  # the record and both engrams as the row was built


def _age(created: str, now: datetime) -> float:
    return age_days(parse_instant(created), now)


class VerdictLookup(Protocol):
    def get(self, digest: str, /) -> Verdict | None: ...


def age_days(moment: datetime | None, now: datetime) -> float:
    return max(0.0, (now - moment).total_seconds() / 86400) if moment else 0.0


def draft_row(
    engram: dict[str, object],
    now: datetime,
    open_tension_ids: Container[str],
    rejected: VerdictLookup,
    born: datetime | None = None,
) -> DraftRow:
    """The queue's row of a draft (built for every draft at launch: plain functions of the record, no view object).
    `born`: its creation moment when the caller has parsed it already."""
    get = engram.get
    engram_id = get("id")
    created = created_of(engram)
    writer, model, runtime = attribution_of(engram)
    statement = str(get("statement", ""))
    flags: list[str] = []
    verdict = rejected.get(str(get("content_hash")))
    if verdict is not None and verdict.engram_id == engram_id:
        verdict = None
    if verdict is not None:
        flags.append("rejected before" if verdict.trust.counts_as_human else "rejection claim NOT VERIFIED")
    if engram_id in open_tension_ids:
        flags.append("in tension")
    if superseded(engram):
        flags.append("superseded")
    outside = outside_window(engram, now)
    if outside is not None:
        flags.append(outside.replace("_", " "))
    flags.extend(text_flags(statement))
    return DraftRow(
        id=str(engram_id),
        statement=statement,
        scope=str(get("scope", "")),
        domain=str(get("domain", "") or ""),
        type=str(get("type", "")),
        created=created,
        age_days=age_days(born if born is not None else parse_instant(created), now),
        writer=writer,
        model=model,
        runtime=runtime,
        flags=tuple(flags),
        rejected_before=verdict,
        fingerprint=fingerprint_items(engram),
        session=session_of(engram),
    )


def tension_row(
    record: dict[str, object],
    now: datetime,
    sides: list[dict[str, object] | None] | None = None,
    ids: tuple[str, str] | None = None,
) -> TensionRow:
    """`ids`: the engrams its sides are now (PLUR 0.21 may have renamed one since it was recorded)."""
    detected = str(record.get("detected_at", ""))
    id_a, id_b = ids or (str(record.get("engram_a")), str(record.get("engram_b")))
    confidence = record.get("confidence")
    return TensionRow(
        id=str(record.get("id")),
        status=str(record.get("status", "detected")),
        category=str(record.get("category", "factual")),
        confidence=float(confidence) if isinstance(confidence, (int, float)) else 0.0,
        detected_at=detected,
        age_days=_age(detected, now),
        engram_a=id_a,
        engram_b=id_b,
        statement_a=str(record.get("statement_a", "")),
        statement_b=str(record.get("statement_b", "")),
        reason=str(record.get("reason", "")),
        resolved_by=record.get("resolved_by") if isinstance(record.get("resolved_by"), str) else None,  # type: ignore[arg-type]
        seen=seen_tension(record, sides or []),
    )


def scope_impact(scope: str) -> str:
    """In which sessions PLUR's inject will start offering an approved engram of this scope."""
    if scope == "global":
        return "every session, in every project (global scope)"
    kind, _, name = scope.partition(":")
    if kind == "project":
        return f"sessions scoped to project {name} (and sessions that include global + project:{name})"
    if kind == "group":
        return f"sessions of group {name}"
    if kind == "user":
        return f"sessions of user {name}"
    if scope == "local":
        return "local sessions on this machine"
    return f"sessions whose scope includes {scope}"
