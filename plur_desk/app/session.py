"""ReviewSession: the one Qt-free entry point for everything a pane shows or changes on one open store.

Each action takes what the reviewer saw (a `Seen` per record, as rendered) and refuses when the disk differs; it
writes the store and its history events in one locked step, records an undoable Operation, and returns a
ChangeSet naming what changed.
Undo and redo are themselves audited forward changes that refuse when the record moved on since.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime

from plur_desk.app.history_index import HistoryIndex
from plur_desk.app.journaled import ChangeSet as ChangeSet  # re-exported: panes import it from here
from plur_desk.app.journaled import JournaledSession
from plur_desk.app.queries import DraftQueue, TensionRows, ValidityRow, ValidityRows
from plur_desk.app.reviewer import READER, check_reviewer
from plur_desk.app.rows import DraftRow, TensionRow, Verdict
from plur_desk.app.session_clusters import ClusterDecisionsMixin
from plur_desk.app.session_signing import SigningMixin
from plur_desk.app.signing import ReviewerKeys
from plur_desk.app.trust import TrustChecker
from plur_desk.app.vault import KeyVault
from plur_desk.domain import review
from plur_desk.domain.review import Operation, Patch, Reviewer, engram_fingerprint, tension_fingerprint
from plur_desk.domain.seen import Seen, seen_engram, seen_tension
from plur_desk.infra.clock import Clock, SystemClock
from plur_desk.infra.errors import ActionRefused, ChangedSinceError, PartialWrite, ReadOnlyStore
from plur_desk.infra.paths import data_dir
from plur_desk.store.journal import JournalRecord, Step
from plur_desk.store.plur_store import Edit, PlurStore, WriteResult


class ReviewSession(JournaledSession, SigningMixin, ClusterDecisionsMixin):
    def __init__(
        self, store: PlurStore, reviewer: Reviewer, clock: Clock | None = None, keys: ReviewerKeys | None = None
    ) -> None:
        self.store = store
        self.reading_only = reviewer.name == READER  # a read-only command's session: every decision is refused
        if not self.reading_only:
            reviewer = Reviewer(check_reviewer(reviewer.name))  # every event names a person, never "" or an agent
        self.reviewer = reviewer
        self.clock = clock or SystemClock()
        self.keys = keys or ReviewerKeys(store.root, reviewer, KeyVault(data_dir()))
        store.history.resign = self.keys.sign  # a chained append re-signs once `prev` is set
        self.trust = TrustChecker(store.root)
        self.history = HistoryIndex(store.history, self.trust)
        self.made_changes = False
        self._undo: list[Operation] = []
        self._redo: list[Operation] = []
        self._engrams: dict[str, dict[str, object]] = {}
        self._tensions: dict[str, dict[str, object]] = {}
        self.recovery_note = ""  # one line for the reviewer when opening finished interrupted actions
        self.queue = DraftQueue(
            lambda: self._engrams, lambda: self._tensions, self.now, self._history_verdicts, self._record_verdict
        )
        self._tension_rows = TensionRows(lambda: self._engrams, lambda: self._tensions, self.now)
        self._validity_rows = ValidityRows(lambda: self._engrams)
        self.reindex()

    # -- snapshot ------------------------------------------------------------------------------------------

    def load_history(self) -> None:
        self.history.load()
        self.queue.prime()  # the rejection verdicts of the whole history, counted here on the loading thread

    def load_history_first_page(self) -> None:
        self.history.load_newest()

    def reload_if_changed(self) -> ChangeSet:
        """Re-read files PLUR changed; report which ids differ from what the session showed."""
        change = ChangeSet(reloaded=True)
        old_engrams, old_tensions = self._engrams, self._tensions
        if self.store.engrams_changed_on_disk() or self.store.tensions_changed_on_disk():
            self.store.load()
            self.reindex()
            change.engrams = _differing(old_engrams, self._engrams)
            change.tensions = _differing(old_tensions, self._tensions)
        if self.history.refresh():
            change.events = 1
        return change

    @property
    def read_only_reasons(self) -> list[str]:
        return self.store.read_only_reasons()

    def engram(self, engram_id: str) -> dict[str, object] | None:
        return self._engrams.get(engram_id)

    def tension(self, tension_id: str) -> dict[str, object] | None:
        return self._tensions.get(tension_id)

    def all_engrams(self) -> Iterable[dict[str, object]]:
        return self._engrams.values()

    def all_tensions(self) -> Iterable[dict[str, object]]:
        return self._tensions.values()

    def invalid_entries(self) -> list[tuple[str, int, str]]:
        out = []
        for snapshot in (self.store.engrams, self.store.tensions):
            for entry in snapshot.entries:
                if not entry.valid:
                    reason = entry.syntax_error or "; ".join(entry.problems)
                    out.append(
                        (f"{snapshot.path.name}:{entry.line}", entry.line, f"{entry.key or '(no id)'}: {reason}")
                    )
        return out

    def unlogged_reviews(self) -> list[str]:
        """Engrams whose review record has no history event: a crash between the file write and the history
        append (the file is replaced first, as PLUR does). Reported, never silently repaired."""
        logged = self.history.human_decisions()
        missing = []
        for engram in self._engrams.values():
            record = engram.get("review")
            if isinstance(record, dict) and (str(engram.get("id")), str(record.get("at"))) not in logged:
                missing.append(str(engram.get("id")))
        return sorted(missing)

    # -- queries -------------------------------------------------------------------------------------------

    def open_tension_ids(self) -> set[str]:
        ids: set[str] = set()
        for record in self._tensions.values():
            if record.get("status", "detected") in ("detected", "confirmed"):
                ids.add(str(record.get("engram_a")))
                ids.add(str(record.get("engram_b")))
        return ids

    def drafts(self, sort: str = "age", descending: bool = False) -> list[DraftRow]:
        """The queue, kept by id (`DraftQueue`): only what changed since the last call is derived again."""
        return self.queue.rows(sort, descending)

    def _history_verdicts(self) -> tuple[object, dict[str, Verdict]]:
        verdicts = self.history.rejections()
        return (self.history.generation, len(self.history.lines), self.history.trust_generation), verdicts

    def _record_verdict(self, engram: dict[str, object]) -> Verdict | None:
        record = engram.get("review")
        if not isinstance(record, dict):
            return None
        by, at, reason = (str(record.get(k, "")) for k in ("by", "at", "reason"))
        return Verdict(str(engram.get("id")), by, at, reason, self.review_trust(engram))

    def tensions(
        self, statuses: Iterable[str] = ("detected", "confirmed"), engram_id: str | None = None
    ) -> list[TensionRow]:
        """Rows of the tensions with these statuses (only those naming `engram_id`, when given), each kept until its
        record or one of its two engrams is replaced (`TensionRows`)."""
        rows = self._tension_rows.rows(statuses)
        return rows if engram_id is None else [r for r in rows if engram_id in (r.engram_a, r.engram_b)]

    def validity_rows(self, moment: datetime, extra: Iterable[str] = (), search: str = "") -> list[ValidityRow]:
        """Engrams with a validity window (and `extra` ones brought in by hand) as of `moment`."""
        return self._validity_rows.rows(moment, extra, search)

    def counts(self) -> dict[str, int]:
        drafts = len(self.queue)
        open_t = sum(1 for t in self._tensions.values() if t.get("status", "detected") in ("detected", "confirmed"))
        return {"drafts": drafts, "open_tensions": open_t, "engrams": len(self._engrams)}

    # -- actions -------------------------------------------------------------------------------------------

    def _lookup(self, engram_id: str) -> dict[str, object] | None:
        """An engram for an action (on the session's queue): while the load is still parsing, one not parsed yet is
        parsed now, so an action during the load sees what it would see after it."""
        found = self._engrams.get(engram_id)
        snapshot = self.store.engrams
        if found is None and not snapshot.all_parsed:
            entries = snapshot.by_key().get(engram_id, [])
            snapshot.parse_entries(entries)
            if len(entries) == 1 and entries[0].valid and isinstance(entries[0].value, dict):
                found = self._engrams[engram_id] = entries[0].value
        return found

    def _check_writable(self) -> None:
        if self.reading_only:
            raise ReadOnlyStore("this session was opened for reading only; it has no reviewer and decides nothing")
        reasons = [r for r in self.store.read_only_reasons()]
        if reasons:
            raise ReadOnlyStore("the store is open read-only: " + "; ".join(reasons))

    def _check_known(self, engram_id: str) -> None:
        """Refuse, with the reason, an id the session cannot act on (quarantined, duplicated, gone)."""
        self._check_writable()
        if self._lookup(engram_id) is not None:  # parsed now if the load has not reached it yet
            return
        entries = [e for e in self.store.engrams.entries if e.key == engram_id]
        if len(entries) > 1:
            lines = ", ".join(str(e.line) for e in entries)
            raise ActionRefused(
                f"{engram_id} appears {len(entries)} times in engrams.yaml (lines {lines}); fix that first"
            )
        if entries:
            reason = entries[0].syntax_error or "; ".join(entries[0].problems) or "listed more than once"
            raise ActionRefused(
                f"{engram_id} at line {entries[0].line} is an entry PLUR quarantines ({reason}); fix it by hand first"
            )
        raise ActionRefused(f"{engram_id} is not in the store")

    def _seen(self, engram_id: str) -> dict[str, object]:
        """The session's snapshot of one engram's fingerprint (for steps that are not a reviewer's verdict)."""
        self._check_known(engram_id)
        return engram_fingerprint(self._engrams[engram_id])

    def seen(self, ids: Iterable[str]) -> list[Seen]:
        """The session's current snapshot of these engrams, for a caller that decides on exactly that (a script,
        a test). The window never uses it: it hands over the fingerprints of the rows it rendered."""
        out = []
        for engram_id in ids:
            self._check_known(engram_id)
            out.append(seen_engram(self._engrams[engram_id]))
        return out

    def seen_tension(self, tension_id: str) -> Seen:
        """A tension and both its engrams as the session holds them now (see `seen`)."""
        self._check_writable()
        record = self._tensions.get(tension_id)
        if record is None:
            raise ActionRefused(f"{tension_id} is not in tensions.yaml, or PLUR quarantines it (see plur-desk check)")
        return seen_tension(record, [self._engrams.get(str(record.get(k))) for k in ("engram_a", "engram_b")])

    def _side_as_shown(self, seen: Seen, engram_id: str) -> dict[str, object]:
        """An engram as the reviewer saw it beside the tension; refused early when the session already knows it
        changed (the write checks the disk again inside the lock)."""
        side = seen.side(engram_id)
        if side is None:
            raise ActionRefused(f"{engram_id} was not shown with {seen.id}; look at both sides before deciding")
        self._check_known(engram_id)
        now = engram_fingerprint(self._engrams[engram_id])
        moved = [k for k, v in side.fingerprint if now.get(k) != v]
        if moved:
            raise ChangedSinceError(engram_id, moved)
        return side.expected()

    def _engram_action(
        self,
        action: str,
        label: str,
        seen: Sequence[Seen],
        fn: Callable[[dict[str, object]], tuple[dict[str, object], list[dict[str, object]]]],
    ) -> ChangeSet:
        """The only drift check: each edit expects the record exactly as the reviewer saw it (`seen`)."""
        self._check_writable()
        if not seen:
            raise ActionRefused("nothing selected")
        unique = {s.id: s for s in seen}
        for item in unique.values():
            if item.kind != "engram":
                raise ActionRefused(f"{item.id} is not an engram")
            self._check_known(item.id)
        edits = self._signed([Edit(i, fn, item.expected()) for i, item in unique.items()])
        record = self.store.journal.begin(action, label)
        result = self._step(lambda: self.store.write_engrams(edits, engram_fingerprint, record, 0))
        record.finish()
        op = Operation(
            action, label, [Patch.between("engrams", k, result.before[k], result.after[k]) for k in result.changed]
        )
        return self._done(op, result)

    def approve(self, seen: Sequence[Seen], level: str = "decided", note: str = "") -> ChangeSet:
        now = self.now()
        label = f"approve {_names(seen)} as {level}"
        return self._engram_action("approve", label, seen, lambda e: review.approve(e, level, note, self.reviewer, now))

    def reject(self, seen: Sequence[Seen], reason: str) -> ChangeSet:
        now = self.now()
        return self._engram_action(
            "reject", f"reject {_names(seen)}", seen, lambda e: review.reject(e, reason, self.reviewer, now)
        )

    def edit_statement(self, seen: Seen, statement: str) -> ChangeSet:
        now = self.now()
        return self._engram_action(
            "edit", f"edit {seen.id}", [seen], lambda e: review.edit_statement(e, statement, self.reviewer, now)
        )

    def set_validity(
        self, seen: Sequence[Seen], valid_from: str | None, valid_until: str | None, action: str = "set_validity"
    ) -> ChangeSet:
        now = self.now()
        return self._engram_action(
            action,
            f"set validity of {_names(seen)}",
            seen,
            lambda e: review.set_validity(e, valid_from, valid_until, self.reviewer, now, action),
        )

    def expire_now(self, seen: Sequence[Seen]) -> ChangeSet:
        now = self.now()
        return self._engram_action(
            "expire_now", f"expire {_names(seen)} now", seen, lambda e: review.expire_now(e, self.reviewer, now)
        )

    # -- tensions ------------------------------------------------------------------------------------------

    def _tension_write(
        self,
        seen: Seen,
        fn: Callable[[dict[str, object]], dict[str, object]],
        action: str,
        record: JournalRecord,
        **extra: object,
    ) -> WriteResult:
        self._check_writable()
        journal, tension_id = record, seen.id
        if seen.kind != "tension" or self._tensions.get(tension_id) is None:
            raise ActionRefused(f"{tension_id} is not in tensions.yaml, or PLUR quarantines it (see plur-desk check)")
        now = self.now()

        def apply(value: dict[str, object]) -> tuple[dict[str, object], list[dict[str, object]]]:
            before = value.get("status", "detected")
            event = review.tension_event(action, value, self.reviewer, now, **extra)
            new = fn(value)
            if new.get("status", "detected") == before and action != "settle_two_winners":
                raise ActionRefused(f"{tension_id} is already {before}; nothing to change")  # from: x, to: x
            event["data"]["to"] = new.get("status")  # type: ignore[index]
            return new, [event]

        (edit,) = self._signed([Edit(tension_id, apply, seen.expected())])
        try:
            return self._step(lambda: self.store.write_tensions([edit], tension_fingerprint, journal, 0))
        except PartialWrite as exc:
            rest = [p.key for later in journal.steps[1:] for p in later.changes]
            if rest:
                exc.args = (f"{exc} The rest of this action (engrams.yaml: {', '.join(rest)}) is kept there too.",)
            raise
        except Exception:
            journal.finish()  # the first file never changed: nothing of this action happened
            raise

    def confirm_tension(self, seen: Seen) -> ChangeSet:
        tension_id = seen.id
        record = self.store.journal.begin("confirm_tension", f"confirm {tension_id}")
        result = self._tension_write(seen, review.confirm_tension, "confirm", record)
        record.finish()
        op = Operation(
            "confirm_tension",
            f"confirm {tension_id}",
            [Patch.between("tensions", tension_id, result.before[tension_id], result.after[tension_id])],
        )
        return self._done(op, result)

    def dismiss_tension(self, seen: Seen, reason: str = "") -> ChangeSet:
        tension_id = seen.id
        record = self.store.journal.begin("dismiss_tension", f"dismiss {tension_id}")
        result = self._tension_write(seen, review.dismiss_tension, "dismiss", record, reason=reason or None)
        record.finish()
        op = Operation(
            "dismiss_tension",
            f"dismiss {tension_id}",
            [Patch.between("tensions", tension_id, result.before[tension_id], result.after[tension_id])],
        )
        return self._done(op, result)

    def resolve_tension(self, seen: Seen, winner: str) -> ChangeSet:
        """PLUR's order: the record under the tensions lock, then the loser retired under the engrams lock,
        the record rolled back if the second step fails. The two locks are never held together."""
        tension_id = seen.id
        record = self._tensions.get(tension_id)
        if record is None:
            raise ActionRefused(f"{tension_id} is not in tensions.yaml")
        pair = (record.get("engram_a"), record.get("engram_b"))
        if winner not in pair:
            raise ActionRefused(f"{winner} is not one of the two engrams of {tension_id}")
        loser = str(pair[1] if winner == pair[0] else pair[0])
        winner_engram = self._lookup(winner)
        if winner_engram is not None and winner_engram.get("status") == "retired":
            raise ActionRefused(f"{winner} is already retired; it cannot win {tension_id}")
        if self._lookup(loser) is None:
            raise ActionRefused(f"{loser} is not in the store; resolve {tension_id} by hand or dismiss it")
        if winner_engram is None:
            raise ActionRefused(f"{winner} is not in the store (or PLUR quarantines it); it cannot win {tension_id}")
        shown_loser = self._side_as_shown(seen, loser)
        self._side_as_shown(seen, winner)
        now = self.now()
        label = f"resolve {tension_id} for {winner}"
        (retire,) = self._signed(
            [Edit(loser, lambda e: review.retire_loser(e, tension_id, winner, self.reviewer, now), shown_loser)]
        )
        return self._tension_then_engrams(
            "resolve_tension",
            "resolve",
            label,
            seen,
            lambda r: review.resolve_tension(r, winner, now),
            [retire],
            winner=winner,
            loser=loser,
        )

    def split_in_time(self, seen: Seen, at: str) -> ChangeSet:
        """Both were true at different times: the earlier engram ends the day before `at`, the later one starts
        on `at`, and the tension is dismissed with that reason. Nothing is retired."""
        review.check_bound(at, "split date")
        if len(at) != 10:
            raise ActionRefused("split in time takes a date (YYYY-MM-DD)")
        tension_id = seen.id
        record = self._tensions.get(tension_id)
        if record is None:
            raise ActionRefused(f"{tension_id} is not in tensions.yaml")
        a, b = str(record.get("engram_a")), str(record.get("engram_b"))
        ea, eb = self._lookup(a), self._lookup(b)
        if ea is None or eb is None:
            raise ActionRefused(f"both engrams of {tension_id} must be in the store to split it in time")
        shown = {a: self._side_as_shown(seen, a), b: self._side_as_shown(seen, b)}
        from plur_desk.app.rows import created_of

        earlier, later = (a, b) if (created_of(ea), a) <= (created_of(eb), b) else (b, a)
        now = self.now()

        def window(engram_id: str, start: str | None, end: str | None) -> Edit:
            def fn(e: dict[str, object]) -> tuple[dict[str, object], list[dict[str, object]]]:
                from plur_desk.domain.validity import Window

                current = Window.of(e)
                return review.set_validity(
                    e,
                    start if start is not None else current.valid_from,
                    end if end is not None else current.valid_until,
                    self.reviewer,
                    now,
                    "split_in_time",
                )

            return Edit(engram_id, fn, shown[engram_id])

        label = f"split {tension_id} at {at}"
        windows = self._signed([window(earlier, None, review.day_before(at)), window(later, at, None)])
        return self._tension_then_engrams(
            "split_in_time",
            "split_in_time",
            label,
            seen,
            review.dismiss_tension,
            windows,
            reason=f"both true at different times: {earlier} until {review.day_before(at)}, {later} from {at}",
            earlier=earlier,
            later=later,
            at=at,
        )

    def _tension_then_engrams(
        self,
        action: str,
        event: str,
        label: str,
        seen: Seen,
        record_fn: Callable[[dict[str, object]], dict[str, object]],
        edits: list[Edit],
        **event_fields: object,
    ) -> ChangeSet:
        """A two-file action in PLUR's order, under one journal record: the engram edits are checked first (refused
        before tensions.yaml is touched), the tension record is written with the engrams step journaled as planned,
        then the engrams; a refused second step sets the record back. The two locks are never held together."""
        self.store.precheck_engrams(edits, engram_fingerprint)
        journal = self.store.journal.begin(action, label)
        journal.steps = [Step("tensions", [], [], planned=True), self._plan("engrams", edits)]
        first = self._tension_write(seen, record_fn, event, journal, **event_fields)
        record_patch = Patch.between("tensions", seen.id, first.before[seen.id], first.after[seen.id])
        second = self._second_step(journal, record_patch, event, edits)
        journal.finish()
        patches = [record_patch] + [
            Patch.between("engrams", k, second.before[k], second.after[k]) for k in second.changed
        ]
        return self._done(Operation(action, label, patches), first, second)


def _names(seen: Sequence[Seen]) -> str:
    ids = list(dict.fromkeys(s.id for s in seen))
    return ids[0] if len(ids) == 1 else f"{len(ids)} drafts"


def _differing(old: dict[str, dict[str, object]], new: dict[str, dict[str, object]]) -> set[str]:
    keys = set(old) | set(new)
    return {k for k in keys if old.get(k) is not new.get(k) and old.get(k) != new.get(k)}
