"""Small hand-written fakes of what a pane asks of its workspace and session, so a pane can be built alone on rows
a test chooses (no store on disk, no runner). Each fake has only what the panes and controllers call: anything
else is an AttributeError, which is how a test learns a pane started asking for more."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from PySide6.QtCore import QObject

from plur_desk.app.history.history_index import HistoryFilter
from plur_desk.app.review.rows import TensionRow, tension_row
from plur_desk.app.review.validity_rows import ValidityRow, WindowBar
from plur_desk.domain.changes import ChangeSet
from plur_desk.domain.engram_view import EngramView
from plur_desk.domain.trust import Trust, TrustState
from plur_desk.infra.clock import FixedClock
from plur_desk.ui.workspace import Workspace

Record = dict[str, object]


def engram_record(engram_id: str, statement: str, **extra: object) -> Record:
    """An engram as PLUR writes one (the fields the panes' rules read; unknown ones kept as they are)."""
    record: Record = {
        "id": engram_id,
        "version": 2,
        "status": "active",
        "type": "behavioral",
        "scope": "project:web",
        "domain": "build",
        "statement": statement,
        "commitment": "decided",
        "created_at": "2026-11-01T10:00:00.000Z",
        "attribution": {"asserted_by": "agent:claude", "model": {"name": "opus"}},
    }
    record.update(extra)
    return record


def tension_record(tension_id: str, a: Record, b: Record, **extra: object) -> Record:
    """A tension record between two engrams, with the statements as the judge saw them."""
    record: Record = {
        "id": tension_id,
        "engram_a": a["id"],
        "engram_b": b["id"],
        "statement_a": a["statement"],
        "statement_b": b["statement"],
        "confidence": 0.9,
        "reason": "the two disagree",
        "detected_at": "2026-12-01T15:00:00.000Z",
        "status": "detected",
        "resolved_by": None,
        "resolved_at": None,
        "category": "factual",
    }
    record.update(extra)
    return record


@dataclass
class PendingRead:
    channel: str
    fn: Callable[[], object]
    on_done: Callable[[object], None]


@dataclass
class FakeJobs:
    """The window's jobs as a pane uses them: reads only. Reads wait until the test calls `deliver()`, and none is dropped by its
    channel here: a late result reaches the pane, so what a test sees is the pane's own guard against it."""

    waiting: list[PendingRead] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)

    def read(
        self,
        channel: str,
        fn: Callable[[], object],
        on_done: Callable[[object], None],
        on_error: Callable[[Exception], None] | None = None,
        *,
        one_at_a_time: bool = False,
    ) -> int:
        self.waiting.append(PendingRead(channel, fn, on_done))
        return len(self.waiting)

    def cancel(self, channel: str) -> None:
        self.cancelled.append(channel)

    def deliver(self, newest_first: bool = False) -> int:
        """Run every waiting read and hand each result to its pane, oldest first (or newest first: an older read
        that took longer); how many were delivered."""
        waiting, self.waiting = self.waiting, []
        for read in reversed(waiting) if newest_first else waiting:
            read.on_done(read.fn())
        return len(waiting)


class FakeTensionsSession:
    """What the Tensions pane (and its controller) ask of a session, over plain records kept in a given order."""

    def __init__(self, engrams: Iterable[Record], tensions: Iterable[Record], now: datetime) -> None:
        self.engrams = {str(e["id"]): e for e in engrams}
        self.records = list(tensions)  # listed in this order, whatever the ids say
        self._now = now
        self.asked: list[tuple[str, ...]] = []  # the statuses of every tensions() call
        self.executed: list[object] = []  # commands handed over, in order

    def now(self) -> datetime:
        return self._now

    def engram(self, engram_id: str) -> Record | None:
        return self.engrams.get(engram_id)

    def tension(self, tension_id: str) -> Record | None:
        return next((t for t in self.records if t["id"] == tension_id), None)

    def tensions(self, statuses: Iterable[str] = ("detected", "confirmed")) -> list[TensionRow]:
        wanted = tuple(statuses)
        self.asked.append(wanted)
        return [
            tension_row(t, self._now, [self.engram(str(t["engram_a"])), self.engram(str(t["engram_b"]))])
            for t in self.records
            if t.get("status", "detected") in wanted
        ]

    def tensions_name_any(self, engram_ids: Iterable[str]) -> bool:
        wanted = set(engram_ids)
        return any(str(t[side]) in wanted for t in self.records for side in ("engram_a", "engram_b"))

    def execute(self, command: object) -> ChangeSet:
        self.executed.append(command)
        return ChangeSet(message=f"executed {type(command).__name__}")


class FakeValidityRows:
    """The session's validity rows (`ReviewSession.validity`): the fake session's rows, each call recorded."""

    def __init__(self, session: FakeValiditySession) -> None:
        self._session = session

    def rows(self, moment: datetime, extra: Iterable[str] = (), search: str = "") -> list[ValidityRow]:
        self._session.asked.append((moment, frozenset(extra), search))
        return list(self._session.rows)


class FakeValiditySession:
    """What the Validity pane (and its controller) ask of a session: rows as given, bars per engram."""

    def __init__(self, rows: list[ValidityRow], bars: dict[str, list[WindowBar]] | None = None) -> None:
        self.rows = rows
        self.bars = bars or {}
        self.asked: list[tuple[datetime, frozenset[str], str]] = []  # (moment, extra ids, search) per call
        self.bars_asked: list[str] = []
        self.executed: list[object] = []
        self.validity = FakeValidityRows(self)

    def window_bars(self, engram_id: str) -> list[WindowBar]:
        self.bars_asked.append(engram_id)
        return self.bars.get(engram_id, [])

    def execute(self, command: object) -> ChangeSet:
        self.executed.append(command)
        return ChangeSet(message=f"executed {type(command).__name__}")


class FakeHistory:
    """The history index as the History pane reads it: the events given (newest first), filtered by engram only;
    a human claim is unsigned (every other event claims no human)."""

    partial = False

    def __init__(self, events: list[Record]) -> None:
        self.lines = events
        self.asked: list[HistoryFilter] = []

    def types(self) -> list[str]:
        return sorted({str(e.get("event")) for e in self.lines})

    def newest_first(self, flt: HistoryFilter) -> list[Record]:
        self.asked.append(flt)
        return [e for e in self.lines if not flt.engram_id or e.get("engram_id") == flt.engram_id]

    def trust(self, event: Record) -> Trust:
        actor = event.get("actor")
        human = isinstance(actor, dict) and actor.get("kind") == "human"
        return Trust(TrustState.UNSIGNED, "carries no signature") if human else Trust(TrustState.NOT_HUMAN)

    def malformed_count(self) -> int:
        return 0


class FakeHistorySession:
    """What the History pane asks of a session: its history, and a view of the engram an event names."""

    def __init__(self, events: list[Record], engrams: Iterable[Record]) -> None:
        self.history = FakeHistory(events)
        self.engrams = {str(e["id"]): e for e in engrams}

    def view(self, engram_id: str) -> EngramView | None:
        engram = self.engrams.get(engram_id)
        return EngramView(engram) if engram is not None else None


class FakeWorkspace(QObject):
    """The workspace as panes and controllers use it: the session, its jobs (reads), the clock, and `change(fn)`,
    which runs the session work at once (the real one runs it on the session's lane) and keeps its ChangeSet.
    A QObject because a controller makes the workspace its parent."""

    def __init__(self, session: object, clock: FixedClock, reads: FakeJobs | None = None) -> None:
        super().__init__()
        self.session: Any = session
        self.clock = clock
        self.jobs = reads if reads is not None else FakeJobs()
        self.applied: list[ChangeSet] = []

    def change(self, fn: Callable[[], ChangeSet]) -> None:
        self.applied.append(fn())

    def as_workspace(self) -> Workspace:
        """This fake where a pane's constructor names the real class (the panes type their collaborator as
        `Workspace`; they use only what this fake has)."""
        return cast(Workspace, self)
