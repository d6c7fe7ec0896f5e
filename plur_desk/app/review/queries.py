"""What the panes list, kept up to date by id instead of rebuilt: the drafts queue (`DraftQueue`) and the tension
rows (the validity rows are in `validity_rows.py`). Each holds the rows it derived, the record each came from, and
re-derives only what a `ChangeSet` names, what a reload replaced (found by identity: a reload puts new record
objects in place) and what time itself changes (an age that ticks to the next hour or day, a window that opens or
closes).

Rows are frozen; the lists handed out are new lists, so a pane may keep them while the queue moves on.
"""

from __future__ import annotations

import bisect
import heapq
import threading
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from plur_desk.app.review.rows import DraftRow, TensionRow, Verdict, draft_row, tension_row
from plur_desk.domain.engram_view import created_of, is_draft
from plur_desk.domain.plur_rules.rekey import Renames
from plur_desk.domain.plur_rules.validity import Window, closes_at, opens_at
from plur_desk.infra.clock import parse_instant

Record = dict[str, object]
Records = Callable[[], Mapping[str, Record]]
OPEN = ("detected", "confirmed")
SOON = timedelta(days=14)  # Window.state's "expiring soon"
SORTS: dict[str, Callable[[DraftRow], tuple[object, ...]]] = {  # the id last: a total order, so bisect agrees
    "age": lambda r: (r.created, r.id),
    "scope": lambda r: (r.scope, r.created, r.id),
    "domain": lambda r: (r.domain, r.created, r.id),
    "writer": lambda r: (r.writer, r.created, r.id),
    "type": lambda r: (r.type, r.created, r.id),
    "id": lambda r: (r.id,),
    "statement": lambda r: (r.statement.lower(), r.id),
    "flags": lambda r: (-len(r.flags), r.created, r.id),
}


def _rejected(engram: Record) -> bool:
    record = engram.get("review")
    return isinstance(record, dict) and record.get("state") == "rejected"


HOUR, DAY = timedelta(hours=1), timedelta(days=1)
LOG_SPAN = 256  # the queue's steps a reader may be behind and still be told exactly which rows changed


def next_change(engram: Record, born: datetime | None, now: datetime) -> datetime | None:
    """When this engram's row next reads differently by time alone: its age (from `born`, its creation moment)
    reaching the next hour (under a day) or day, or its validity window opening, closing or entering its last 14
    days."""
    moments: list[datetime] = []
    if isinstance(engram.get("temporal"), dict):  # else no window (Window.of): nothing opens or closes
        window = Window.of(engram)
        start, end = opens_at(window.valid_from), closes_at(window.valid_until)
        moments = [m for m in (start, end, end - SOON if end else None) if m is not None and m > now]
    if born is not None and born <= now:
        age = now - born
        step = HOUR if age < DAY else DAY
        moments.append(born + step * (age // step + 1))
    return min(moments, default=None)


@dataclass(frozen=True)
class QueueChanges:
    """What changed in the drafts queue between two of its generations, by id."""

    generation: int  # the queue's generation now
    gone: frozenset[str]  # rows that left the queue (decided, no longer drafts, removed from the store)
    derived: frozenset[str]  # rows that are new or were derived again (new objects, maybe with other values)


class _Verdicts:
    """The rejections a row is checked against: history's, then review records no history event covers."""

    def __init__(self, history: Mapping[str, Verdict], records: Mapping[str, Verdict]) -> None:
        self.history, self.records = history, records

    def get(self, digest: str) -> Verdict | None:
        return self.history.get(digest) or self.records.get(digest)


RecordVerdict = Callable[[Record], tuple[Verdict | None, object]]  # the verdict, the history stamp it rests on


class DraftQueue:
    """The drafts waiting for review, as rows in the chosen order, updated by id.

    A draft is checked against the history's rejections of its content, else against the rejected review records
    with the same content_hash. A record's verdict (its trust is that of the history event backing it) is asked
    only for a draft that needs it and kept by the history stamp it rests on: asked again when the history moves
    on (read again, appended to, keys.yaml changed), and never kept as current when it was a fallback (the history
    not read yet, or a month found changed while read)."""

    def __init__(
        self,
        engrams: Records,
        tensions: Records,
        now: Callable[[], datetime],
        history_verdicts: Callable[[], tuple[object, Mapping[str, Verdict]]],
        record_verdict: RecordVerdict,
        verdicts_touched: Callable[[Mapping[str, Verdict]], set[str] | None] = lambda _since: None,
    ) -> None:
        self._engrams, self._tensions, self._now = engrams, tensions, now
        self._history_verdicts, self._record_verdict = history_verdicts, record_verdict
        self._verdicts_touched = verdicts_touched  # the content hashes whose verdict may differ since an answer
        self._built = False
        self._lock = threading.Lock()
        self._generation = 0  # moves on with every step that changed a row (a new row object, one added or gone)
        self._log: deque[tuple[int, frozenset[str]]] = deque(maxlen=LOG_SPAN)  # each step's ids; none before a build
        self._pending_engrams: set[str] = set()
        self._pending_tensions: set[str] = set()
        self._pending_all = False

    def _reset(self) -> None:
        self._rows: dict[str, DraftRow] = {}
        self._from: dict[str, Record] = {}  # id -> the record object each row (or verdict) was derived from
        self._sides: dict[str, tuple[str, str]] = {}  # open tension id -> its two engram ids
        self._tension_from: dict[str, Record] = {}
        self._in_tension: Counter[str] = Counter()
        self._records: dict[str, dict[str, Record]] = {}  # content_hash -> engram id -> its rejected record
        self._trusted: dict[str, tuple[object, Verdict | None]] = {}  # engram id -> (stamp, its record's verdict)
        self._unsettled: set[str] = set()  # drafts whose row rests on a fallback verdict of a record
        self._revised = False  # such a row changed since the rows were last handed out
        self._by_digest: dict[str, set[str]] = {}  # content_hash -> drafts with it
        self._digest: dict[str, str] = {}
        self._due: list[tuple[datetime, str]] = []
        self._due_of: dict[str, datetime] = {}
        self._history: tuple[object, Mapping[str, Verdict]] = (None, {})
        self._sort, self._descending = "age", False
        self._touched: set[str] = set()  # ids whose row `_derive` replaced or removed in the step under way
        self._keys: list[tuple[object, ...]] = []
        self._order: list[DraftRow] = []

    # -- keeping up ----------------------------------------------------------------------------------------

    def note(
        self, engram_ids: Iterable[str] = (), tension_ids: Iterable[str] = (), *, everything: bool = False
    ) -> None:
        """Say what changed (from a ChangeSet, on whichever thread wrote it); the rows are re-derived by the next
        reader. `everything`: the records were replaced wholesale (a reload): compared by identity, then value."""
        with self._lock:
            self._pending_engrams.update(engram_ids)
            self._pending_tensions.update(tension_ids)
            self._pending_all = self._pending_all or everything

    def prime(self) -> None:
        """Derive now what changed (called by the thread that replaced the records, so the window's next read
        finds the work done)."""
        with self._lock:
            self._sync()

    def rows(self, sort: str = "age", descending: bool = False) -> list[DraftRow]:
        with self._lock:
            self._sync()
            if sort not in SORTS:
                sort = "age"
            if (sort, descending) != (self._sort, self._descending):
                self._sort, self._descending = sort, descending
                self._resort()
            self._revised = False
            return list(self._order)

    def rows_at(self) -> tuple[int, list[DraftRow]]:
        """The rows in the queue's order (age) and the generation they are: what `changed_since` counts from."""
        with self._lock:
            self._sync()
            if (self._sort, self._descending) != ("age", False):
                self._sort, self._descending = "age", False
                self._resort()
            self._revised = False
            return self._generation, list(self._order)

    def rows_of(self, ids: Iterable[str]) -> dict[str, DraftRow]:
        """The rows these ids have now (ids not in the queue are left out)."""
        with self._lock:
            self._sync()
            rows = self._rows
            return {i: row for i in ids if (row := rows.get(i)) is not None}

    def changed_since(self, generation: int) -> QueueChanges | None:
        """Which rows changed since `generation` (rows that left; rows new or derived again, each a new object),
        with the generation now; None when the queue cannot say (rebuilt since, or more steps ago than it keeps).
        Derives what changed first, as a read of the rows does."""
        with self._lock:
            self._sync()
            if generation == self._generation:
                return QueueChanges(generation, frozenset(), frozenset())
            if not self._log or self._log[0][0] > generation + 1 or generation > self._generation:
                return None
            ids = frozenset().union(*(ids for step, ids in self._log if step > generation))
            derived = frozenset(filter(self._rows.__contains__, ids))
            return QueueChanges(self._generation, ids - derived, derived)

    def revised(self) -> bool:
        """Whether a row that rested on a fallback verdict changed, once the history was read, since the rows were
        last handed out (the window then shows the queue again). Derives what changed first."""
        with self._lock:
            if self._built and self._unsettled:
                self._sync()
            revised, self._revised = self._revised, False
            return revised

    def __len__(self) -> int:
        with self._lock:
            self._sync()
            return len(self._rows)

    def _sync(self) -> None:
        if not self._built:
            self._pending_engrams, self._pending_tensions, self._pending_all = set(), set(), False
            self._build()
            self._generation += 1
            self._log.clear()  # rows of an earlier build are not counted from
            return
        self._touched = set()
        self._derive_pending()
        if self._touched:
            self._generation += 1
            self._log.append((self._generation, frozenset(self._touched)))

    def _derive_pending(self) -> None:
        now = self._now()
        dirty, named_tensions, everything = self._pending_engrams, self._pending_tensions, self._pending_all
        self._pending_engrams, self._pending_tensions, self._pending_all = set(), set(), False
        dirty |= self._tensions_changed(named_tensions, everything)
        if everything:
            engrams = self._engrams()
            for engram_id, value in engrams.items():
                held = self._from.get(engram_id)
                if held is value:
                    continue
                if (held is not None and held == value) or not (
                    engram_id in self._rows or is_draft(value) or _rejected(value) or (held and _rejected(held))
                ):
                    self._from[engram_id] = value  # read again, or nothing a row shows: no row to derive
                else:
                    dirty.add(engram_id)
            dirty |= {i for i in self._from if i not in engrams}
        dirty |= self._verdicts_changed()
        while self._due and self._due[0][0] <= now:
            moment, engram_id = heapq.heappop(self._due)
            if self._due_of.get(engram_id) == moment:
                dirty.add(engram_id)
        for _round in range(2):  # a rejected record changes the flag of the drafts with the same content
            digests: set[str] = set()
            for engram_id in dirty:
                digests |= self._derive(engram_id, now)
            dirty = {i for d in digests for i in self._by_digest.get(d, ())}

    def _build(self) -> None:
        self._reset()
        self._built = True
        now = self._now()
        for tension_id, record in self._tensions().items():
            self._tension(tension_id, record)
        self._history = self._history_verdicts()
        engrams = self._engrams()
        for engram_id, engram in list(engrams.items()):  # rejected records first: drafts are checked against them
            digest = engram.get("content_hash")
            if isinstance(digest, str) and _rejected(engram):
                self._records.setdefault(digest, {})[engram_id] = engram
        for engram_id in list(engrams):
            self._derive(engram_id, now, place=False)
        self._resort()

    def _tension(self, tension_id: str, record: Record | None) -> set[str]:
        """Track one tension record; returns the engram ids whose 'in tension' flag may have changed."""
        touched: set[str] = set()
        old = self._sides.pop(tension_id, None)
        if old is not None:
            self._in_tension.subtract(old)
            for engram_id in old:
                if self._in_tension[engram_id] <= 0:
                    del self._in_tension[engram_id]  # `in` must say no once no open tension names it
            touched.update(old)
        self._tension_from.pop(tension_id, None)
        if record is not None:
            self._tension_from[tension_id] = record
            if record.get("status", "detected") in OPEN:
                sides = (str(record.get("engram_a")), str(record.get("engram_b")))
                self._sides[tension_id] = sides
                self._in_tension.update(sides)
                touched.update(sides)
        return touched

    def _tensions_changed(self, named: set[str], everything: bool) -> set[str]:
        tensions = self._tensions()
        if everything:
            named |= {i for i, v in tensions.items() if self._tension_from.get(i) is not v}
            named |= {i for i in self._tension_from if i not in tensions}
        touched: set[str] = set()
        for tension_id in named:
            touched |= self._tension(tension_id, tensions.get(tension_id))
        return touched

    def _verdicts_changed(self) -> set[str]:
        stamp, verdicts = self._history_verdicts()
        old_stamp, old = self._history
        if stamp == old_stamp:
            return set()
        self._history = (stamp, verdicts)
        moved = set() if verdicts is old else self._verdicts_touched(old)
        if moved is None:  # a verdict kept across appends is the same object: compare by identity first, by
            # value only what differs (equal after a recount)
            moved = {d for d, v in verdicts.items() if old.get(d) is not v} | {d for d in old if d not in verdicts}
        digests = {d for d in moved if verdicts.get(d) != old.get(d)} | self._records_changed()
        return {i for d in digests for i in self._by_digest.get(d, ())}

    def _records_changed(self) -> set[str]:
        """The content hashes of drafts checked against a rejected record whose verdict, asked again now that the
        history moved on, reads differently (a draft shown with a fallback that reads the same is settled)."""
        changed = set()
        for digest in self._records.keys() & self._by_digest.keys():  # (walks the smaller of the two)
            if self._history[1].get(digest):
                continue  # the history's own verdict is the one shown
            held = self._trusted.get(min(self._records[digest]))
            records, settled = self._held_verdict(digest)
            if held is None or records.get(digest) != held[1]:
                changed.add(digest)
            elif settled:
                self._unsettled -= self._by_digest[digest]
        return changed

    def _held_verdict(self, digest: object) -> tuple[dict[str, Verdict], bool]:
        """The rejected record a draft with this content is checked against when the history holds no verdict for
        it (the first by id), and whether its verdict is settled (not a fallback)."""
        if not isinstance(digest, str) or self._history[1].get(digest):
            return {}, True
        held = self._records.get(digest)
        if not held:
            return {}, True
        engram_id = min(held)
        current = self._history[0]
        stamp, verdict = self._trusted.get(engram_id, (None, None))
        if stamp is None or stamp != current:
            verdict, stamp = self._record_verdict(held[engram_id])
            self._trusted[engram_id] = (stamp if stamp == current else None, verdict)
        return ({digest: verdict} if verdict is not None else {}), stamp == current

    def _derive(self, engram_id: str, now: datetime, place: bool = True) -> set[str]:
        """Re-derive one engram's row (and its rejected record); returns the content hashes whose record verdict
        changed, so the drafts with the same content are re-derived too. A row derived again is a new object,
        one that leaves is gone: either is a changed row for `changed_since`."""
        held = engram_id in self._rows
        changed = self._derive_row(engram_id, now, place)
        if held or engram_id in self._rows:
            self._touched.add(engram_id)
        return changed

    def _derive_row(self, engram_id: str, now: datetime, place: bool) -> set[str]:
        engram = self._engrams().get(engram_id)
        if place:
            self._unplace(engram_id)
        shown = self._rows.get(engram_id) if engram_id in self._unsettled else None
        changed = self._forget(engram_id)
        if engram is None:
            return changed
        self._from[engram_id] = engram
        digest = engram.get("content_hash")
        if isinstance(digest, str) and _rejected(engram):
            self._records.setdefault(digest, {})[engram_id] = engram
            changed.add(digest)
        if not is_draft(engram):
            return changed
        records, settled = self._held_verdict(digest)
        born = parse_instant(created_of(engram))  # parsed once for the row's age and its next change
        row = draft_row(engram, now, self._in_tension, _Verdicts(self._history[1], records), born)
        self._rows[engram_id] = row
        if not settled:
            self._unsettled.add(engram_id)
        self._revised = self._revised or (shown is not None and shown != row)
        if isinstance(digest, str):
            self._digest[engram_id] = digest
            self._by_digest.setdefault(digest, set()).add(engram_id)
        due = next_change(engram, born, now)
        if due is not None:
            self._due_of[engram_id] = due
            heapq.heappush(self._due, (due, engram_id))
        if place:
            key = SORTS[self._sort](row)
            at = bisect.bisect_right(self._keys, key) if not self._descending else self._desc_at(key)
            self._keys.insert(at, key)
            self._order.insert(at, row)
        return changed

    def _forget(self, engram_id: str) -> set[str]:
        self._rows.pop(engram_id, None)
        self._unsettled.discard(engram_id)
        self._trusted.pop(engram_id, None)
        record = self._from.pop(engram_id, None)
        self._due_of.pop(engram_id, None)
        digest = self._digest.pop(engram_id, None)
        if digest is not None:
            self._by_digest.get(digest, set()).discard(engram_id)
        held_digest = record.get("content_hash") if record is not None else None
        held = self._records.get(held_digest) if isinstance(held_digest, str) else None
        if held is not None and held.pop(engram_id, None) is not None:
            if not held:
                del self._records[held_digest]  # type: ignore[arg-type]
            return {held_digest}  # type: ignore[arg-type]
        return set()

    def _unplace(self, engram_id: str) -> None:
        row = self._rows.get(engram_id)
        if row is None:
            return
        key = SORTS[self._sort](row)
        at = bisect.bisect_left(self._keys, key) if not self._descending else self._desc_at(key, left=True)
        if at < len(self._order) and self._order[at].id == engram_id:
            del self._keys[at]
            del self._order[at]
        else:  # not where its key says (cannot happen with a total order; kept correct regardless)
            at = next(n for n, r in enumerate(self._order) if r.id == engram_id)
            del self._keys[at]
            del self._order[at]

    def _desc_at(self, key: tuple[object, ...], left: bool = False) -> int:
        """Where `key` goes in keys sorted largest first."""
        lo, hi = 0, len(self._keys)
        while lo < hi:
            mid = (lo + hi) // 2
            if self._keys[mid] > key or (not left and self._keys[mid] == key):
                lo = mid + 1
            else:
                hi = mid
        return lo

    def _resort(self) -> None:
        key = SORTS[self._sort]
        self._order = sorted(self._rows.values(), key=key, reverse=self._descending)
        self._keys = [key(r) for r in self._order]


class TensionRows:
    """Tension rows by id; a row is re-derived when its record or either of its engrams is replaced."""

    def __init__(
        self, engrams: Records, tensions: Records, now: Callable[[], datetime], renames: Callable[[], Renames]
    ) -> None:
        self._engrams, self._tensions, self._now, self._renames = engrams, tensions, now, renames
        self._rows: dict[str, tuple[TensionRow, tuple[object, ...], datetime]] = {}

    def rows(self, statuses: Iterable[str] = OPEN) -> list[TensionRow]:
        wanted, now = set(statuses), self._now()
        engrams, tensions, renames = self._engrams(), self._tensions(), self._renames()
        for gone in [i for i in self._rows if i not in tensions]:
            del self._rows[gone]
        out = []
        for tension_id, record in tensions.items():
            if record.get("status", "detected") not in wanted:
                continue
            ids = (
                renames.side(str(record.get("engram_a")), engrams),
                renames.side(str(record.get("engram_b")), engrams),
            )
            sides = [engrams.get(i) for i in ids]
            made = (record, *sides, *ids)
            held = self._rows.get(tension_id)
            if held is None or held[2] <= now or any(a is not b for a, b in zip(held[1], made, strict=True)):
                row = tension_row(record, now, sides, ids)
                due = next_change({}, parse_instant(row.detected_at), now) or datetime.max.replace(tzinfo=now.tzinfo)
                held = self._rows[tension_id] = (row, made, due)  # again when its age reads differently
            out.append(held[0])
        out.sort(key=lambda r: r.detected_at)
        return out
