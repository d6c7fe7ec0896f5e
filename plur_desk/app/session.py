"""ReviewSession: the one Qt-free entry point for everything a pane shows or changes on one open store.

Each action takes what the reviewer saw (the session's snapshot, or explicit fingerprints), writes the store and
its history events in one locked step, records an undoable Operation, and returns a ChangeSet naming what changed.
Undo and redo are themselves audited forward changes that refuse when the record moved on since.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from plur_desk.app.history_index import HistoryIndex
from plur_desk.app.journaled import ChangeSet as ChangeSet  # re-exported: panes import it from here
from plur_desk.app.journaled import JournaledSession
from plur_desk.app.rows import DraftRow, TensionRow, draft_row, tension_row
from plur_desk.app.session_clusters import ClusterDecisionsMixin
from plur_desk.app.session_signing import SigningMixin
from plur_desk.app.signing import ReviewerKeys
from plur_desk.app.trust import TrustChecker
from plur_desk.app.vault import KeyVault
from plur_desk.domain import review
from plur_desk.domain.review import Operation, Patch, Reviewer, engram_fingerprint, tension_fingerprint
from plur_desk.infra.clock import Clock, SystemClock
from plur_desk.infra.errors import ActionRefused, PartialWrite, ReadOnlyStore
from plur_desk.infra.paths import data_dir
from plur_desk.store.journal import JournalRecord, Step
from plur_desk.store.plur_store import Edit, PlurStore, WriteResult


class ReviewSession(JournaledSession, SigningMixin, ClusterDecisionsMixin):
    def __init__(
        self, store: PlurStore, reviewer: Reviewer, clock: Clock | None = None, keys: ReviewerKeys | None = None
    ) -> None:
        self.store = store
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
        self.reindex()

    # -- snapshot ------------------------------------------------------------------------------------------

    def load_history(self) -> None:
        self.history.load()

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
        now = self.now()
        tension_ids = self.open_tension_ids()
        rejected = self.rejected_verdicts()
        rows = [
            draft_row(e, now, tension_ids, rejected)
            for e in self._engrams.values()
            if e.get("commitment") == "draft" and e.get("status") == "active"
        ]
        keys: dict[str, Callable[[DraftRow], object]] = {
            "age": lambda r: (r.created, r.id),
            "scope": lambda r: (r.scope, r.created),
            "domain": lambda r: (r.domain, r.created),
            "writer": lambda r: (r.writer, r.created),
            "type": lambda r: (r.type, r.created),
            "id": lambda r: r.id,
            "statement": lambda r: r.statement.lower(),
            "flags": lambda r: (-len(r.flags), r.created),
        }
        rows.sort(key=keys.get(sort, keys["age"]), reverse=descending)  # type: ignore[arg-type]
        return rows

    def tensions(self, statuses: Iterable[str] = ("detected", "confirmed")) -> list[TensionRow]:
        wanted = set(statuses)
        now = self.now()
        rows = [tension_row(t, now) for t in self._tensions.values() if t.get("status", "detected") in wanted]
        rows.sort(key=lambda r: r.detected_at)
        return rows

    def counts(self) -> dict[str, int]:
        drafts = sum(
            1 for e in self._engrams.values() if e.get("commitment") == "draft" and e.get("status") == "active"
        )
        open_t = sum(1 for t in self._tensions.values() if t.get("status", "detected") in ("detected", "confirmed"))
        return {"drafts": drafts, "open_tensions": open_t, "engrams": len(self._engrams)}

    # -- actions -------------------------------------------------------------------------------------------

    def _check_writable(self) -> None:
        reasons = [r for r in self.store.read_only_reasons()]
        if reasons:
            raise ReadOnlyStore("the store is open read-only: " + "; ".join(reasons))

    def _seen(self, engram_id: str) -> dict[str, object]:
        self._check_writable()
        engram = self._engrams.get(engram_id)
        if engram is None:
            for entry in self.store.engrams.entries:
                if entry.key == engram_id:
                    reason = entry.syntax_error or "; ".join(entry.problems) or "listed more than once"
                    duplicates = sum(1 for e in self.store.engrams.entries if e.key == engram_id)
                    if duplicates > 1:
                        lines = ", ".join(str(e.line) for e in self.store.engrams.entries if e.key == engram_id)
                        raise ActionRefused(
                            f"{engram_id} appears {duplicates} times in engrams.yaml (lines {lines}); fix that first"
                        )
                    raise ActionRefused(
                        f"{engram_id} at line {entry.line} is an entry PLUR quarantines ({reason}); "
                        "fix it by hand first"
                    )
            raise ActionRefused(f"{engram_id} is not in the store")
        return engram_fingerprint(engram)

    def _engram_action(
        self,
        action: str,
        label: str,
        ids: list[str],
        fn: Callable[[dict[str, object]], tuple[dict[str, object], list[dict[str, object]]]],
        seen: dict[str, dict[str, object]] | None = None,
    ) -> ChangeSet:
        if not ids:
            raise ActionRefused("nothing selected")
        edits = self._signed([Edit(i, fn, (seen or {}).get(i) or self._seen(i)) for i in dict.fromkeys(ids)])
        record = self.store.journal.begin(action, label)
        result = self._step(lambda: self.store.write_engrams(edits, engram_fingerprint, record, 0))
        record.finish()
        op = Operation(
            action, label, [Patch.between("engrams", k, result.before[k], result.after[k]) for k in result.changed]
        )
        return self._done(op, result)

    def approve(
        self, ids: list[str], level: str = "decided", note: str = "", seen: dict[str, dict[str, object]] | None = None
    ) -> ChangeSet:
        now = self.now()
        label = f"approve {_names(ids)} as {level}"
        return self._engram_action(
            "approve", label, ids, lambda e: review.approve(e, level, note, self.reviewer, now), seen
        )

    def reject(self, ids: list[str], reason: str, seen: dict[str, dict[str, object]] | None = None) -> ChangeSet:
        now = self.now()
        return self._engram_action(
            "reject", f"reject {_names(ids)}", ids, lambda e: review.reject(e, reason, self.reviewer, now), seen
        )

    def edit_statement(self, engram_id: str, statement: str, seen: dict[str, object] | None = None) -> ChangeSet:
        now = self.now()
        return self._engram_action(
            "edit",
            f"edit {engram_id}",
            [engram_id],
            lambda e: review.edit_statement(e, statement, self.reviewer, now),
            {engram_id: seen} if seen else None,
        )

    def set_validity(
        self, ids: list[str], valid_from: str | None, valid_until: str | None, action: str = "set_validity"
    ) -> ChangeSet:
        now = self.now()
        return self._engram_action(
            action,
            f"set validity of {_names(ids)}",
            ids,
            lambda e: review.set_validity(e, valid_from, valid_until, self.reviewer, now, action),
        )

    def expire_now(self, ids: list[str]) -> ChangeSet:
        from plur_desk.infra.clock import iso_ms

        now = self.now()
        instant = iso_ms(now).split(".")[0] + "Z"
        now_ids = list(ids)

        def fn(engram: dict[str, object]) -> tuple[dict[str, object], list[dict[str, object]]]:
            temporal = engram.get("temporal") if isinstance(engram.get("temporal"), dict) else {}
            start = temporal.get("valid_from") if isinstance(temporal, dict) else None
            return review.set_validity(
                engram, start if isinstance(start, str) else None, instant, self.reviewer, now, "expire_now"
            )

        return self._engram_action("expire_now", f"expire {_names(now_ids)} now", now_ids, fn)

    # -- tensions ------------------------------------------------------------------------------------------

    def _tension_write(
        self,
        tension_id: str,
        fn: Callable[[dict[str, object]], dict[str, object]],
        action: str,
        record: JournalRecord,
        **extra: object,
    ) -> WriteResult:
        self._check_writable()
        journal = record
        seen = self._tensions.get(tension_id)
        if seen is None:
            raise ActionRefused(f"{tension_id} is not in tensions.yaml, or PLUR quarantines it (see plur-desk check)")
        now = self.now()

        def apply(value: dict[str, object]) -> tuple[dict[str, object], list[dict[str, object]]]:
            event = review.tension_event(action, value, self.reviewer, now, **extra)
            new = fn(value)
            event["data"]["to"] = new.get("status")  # type: ignore[index]
            return new, [event]

        (edit,) = self._signed([Edit(tension_id, apply, tension_fingerprint(seen))])
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

    def confirm_tension(self, tension_id: str) -> ChangeSet:
        record = self.store.journal.begin("confirm_tension", f"confirm {tension_id}")
        result = self._tension_write(tension_id, review.confirm_tension, "confirm", record)
        record.finish()
        op = Operation(
            "confirm_tension",
            f"confirm {tension_id}",
            [Patch.between("tensions", tension_id, result.before[tension_id], result.after[tension_id])],
        )
        return self._done(op, result)

    def dismiss_tension(self, tension_id: str, reason: str = "") -> ChangeSet:
        record = self.store.journal.begin("dismiss_tension", f"dismiss {tension_id}")
        result = self._tension_write(tension_id, review.dismiss_tension, "dismiss", record, reason=reason or None)
        record.finish()
        op = Operation(
            "dismiss_tension",
            f"dismiss {tension_id}",
            [Patch.between("tensions", tension_id, result.before[tension_id], result.after[tension_id])],
        )
        return self._done(op, result)

    def resolve_tension(self, tension_id: str, winner: str) -> ChangeSet:
        """PLUR's order: the record under the tensions lock, then the loser retired under the engrams lock,
        the record rolled back if the second step fails. The two locks are never held together."""
        record = self._tensions.get(tension_id)
        if record is None:
            raise ActionRefused(f"{tension_id} is not in tensions.yaml")
        pair = (record.get("engram_a"), record.get("engram_b"))
        if winner not in pair:
            raise ActionRefused(f"{winner} is not one of the two engrams of {tension_id}")
        loser = str(pair[1] if winner == pair[0] else pair[0])
        winner_engram = self._engrams.get(winner)
        if winner_engram is not None and winner_engram.get("status") == "retired":
            raise ActionRefused(f"{winner} is already retired; it cannot win {tension_id}")
        if loser not in self._engrams:
            raise ActionRefused(f"{loser} is not in the store; resolve {tension_id} by hand or dismiss it")
        if winner_engram is None:
            raise ActionRefused(f"{winner} is not in the store (or PLUR quarantines it); it cannot win {tension_id}")
        now = self.now()
        label = f"resolve {tension_id} for {winner}"
        (retire,) = self._signed(
            [Edit(loser, lambda e: review.retire_loser(e, tension_id, winner, self.reviewer, now), self._seen(loser))]
        )
        self.store.precheck_engrams([retire], engram_fingerprint)  # refuse before tensions.yaml is touched
        journal = self.store.journal.begin("resolve_tension", label)
        journal.steps = [Step("tensions", [], [], planned=True), self._plan("engrams", [retire])]
        first = self._tension_write(
            tension_id,
            lambda r: review.resolve_tension(r, winner, now),
            "resolve",
            journal,
            winner=winner,
            loser=loser,
        )
        record_patch = Patch.between("tensions", tension_id, first.before[tension_id], first.after[tension_id])
        second = self._second_step(journal, record_patch, "resolve", [retire])
        journal.finish()
        op = Operation(
            "resolve_tension",
            label,
            [record_patch, Patch.between("engrams", loser, second.before[loser], second.after[loser])],
        )
        return self._done(op, first, second)

    def split_in_time(self, tension_id: str, at: str) -> ChangeSet:
        """Both were true at different times: the earlier engram ends the day before `at`, the later one starts
        on `at`, and the tension is dismissed with that reason. Nothing is retired."""
        review.check_bound(at, "split date")
        if len(at) != 10:
            raise ActionRefused("split in time takes a date (YYYY-MM-DD)")
        record = self._tensions.get(tension_id)
        if record is None:
            raise ActionRefused(f"{tension_id} is not in tensions.yaml")
        a, b = str(record.get("engram_a")), str(record.get("engram_b"))
        ea, eb = self._engrams.get(a), self._engrams.get(b)
        if ea is None or eb is None:
            raise ActionRefused(f"both engrams of {tension_id} must be in the store to split it in time")
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

            return Edit(engram_id, fn, self._seen(engram_id))

        label = f"split {tension_id} at {at}"
        windows = self._signed([window(earlier, None, review.day_before(at)), window(later, at, None)])
        self.store.precheck_engrams(windows, engram_fingerprint)
        journal = self.store.journal.begin("split_in_time", label)
        first_placeholder = Step("tensions", [], [], planned=True)
        journal.steps = [first_placeholder, self._plan("engrams", windows)]
        first = self._tension_write(
            tension_id,
            review.dismiss_tension,
            "split_in_time",
            journal,
            reason=f"both true at different times: {earlier} until {review.day_before(at)}, {later} from {at}",
            earlier=earlier,
            later=later,
            at=at,
        )
        record_patch = Patch.between("tensions", tension_id, first.before[tension_id], first.after[tension_id])

        second = self._second_step(journal, record_patch, "split_in_time", windows)
        journal.finish()
        patches = [record_patch] + [
            Patch.between("engrams", k, second.before[k], second.after[k]) for k in second.changed
        ]
        return self._done(Operation("split_in_time", label, patches), first, second)


def _names(ids: list[str]) -> str:
    ids = list(dict.fromkeys(ids))
    return ids[0] if len(ids) == 1 else f"{len(ids)} drafts"


def _differing(old: dict[str, dict[str, object]], new: dict[str, dict[str, object]]) -> set[str]:
    keys = set(old) | set(new)
    return {k for k in keys if old.get(k) is not new.get(k) and old.get(k) != new.get(k)}
