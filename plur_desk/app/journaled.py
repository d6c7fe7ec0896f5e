"""The journaled write steps under ReviewSession: one write-ahead journal record per action (both files of a
two-file action, every group of an undo), the set-back of a first step when the second is refused, undo and redo
as audited forward changes, and recovery of interrupted actions when a store is opened for review."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from copy import deepcopy
from dataclasses import dataclass, field
from datetime import datetime

from plur_desk.app.history_index import HistoryIndex
from plur_desk.app.queries import DraftQueue
from plur_desk.app.signing import ReviewerKeys
from plur_desk.domain import review
from plur_desk.domain.review import Operation, Patch, Reviewer, engram_fingerprint, tension_fingerprint
from plur_desk.infra.clock import Clock
from plur_desk.infra.errors import ActionRefused, PartialWrite, PlurDeskError, without_nothing_written
from plur_desk.store.journal import JournalRecord, Step
from plur_desk.store.plur_store import Edit, PlurStore, WriteResult


@dataclass
class ChangeSet:
    """What an action or a reload changed, by id, so panes refresh only that."""

    engrams: set[str] = field(default_factory=set)
    tensions: set[str] = field(default_factory=set)
    events: int = 0
    reloaded: bool = False
    warnings: list[str] = field(default_factory=list)
    message: str = ""

    def merge(self, other: ChangeSet) -> ChangeSet:
        self.engrams |= other.engrams
        self.tensions |= other.tensions
        self.events += other.events
        self.reloaded = self.reloaded or other.reloaded
        self.warnings += other.warnings
        return self


class JournaledSession:
    store: PlurStore
    reviewer: Reviewer
    clock: Clock
    history: HistoryIndex
    recovery_note: str
    _undo: list[Operation]
    _redo: list[Operation]
    _engrams: dict[str, dict[str, object]]
    _tensions: dict[str, dict[str, object]]
    keys: ReviewerKeys
    made_changes: bool
    queue: DraftQueue
    # from SigningMixin (annotations only, so the mixin's methods are the ones found)
    _signed: Callable[[list[Edit]], list[Edit]]
    key_notices: Callable[[], list[str]]

    def recover_on_open(self) -> str:
        """Opened for review: finish or roll back what killed writers left in the journal, sweep their abandoned
        temp files. Returns (and keeps in `recovery_note`) one line for the reviewer, empty when nothing was done."""
        from plur_desk.store.recovery import recover
        from plur_desk.store.sweep import sweep_temp_files

        if self.store.read_only_reasons():
            return ""
        sweep_temp_files(self.store.root)
        log = self.store.history
        own_resign = log.resign
        log.resign = self._resign_recovered
        try:
            report = recover(self.store)
        except PlurDeskError as exc:  # e.g. another plur_desk is recovering right now: the store stays usable
            self.recovery_note = f"Recovery of interrupted actions was not done: {exc}"
            return self.recovery_note
        finally:
            log.resign = own_resign
        if report.completed:
            # A killed writer may not have registered the key it signed with; a conflict is asked about later.
            with contextlib.suppress(PlurDeskError):
                self.keys.register(self.now())
            self.store.load()
            self.reindex()
        self.recovery_note = report.line()
        return self.recovery_note

    def _resign_recovered(self, event: dict[str, object]) -> dict[str, object]:
        """A recovered event (`data.recovered` changed its bytes) is signed again only by the reviewer it names;
        anyone else's recovery leaves it unsigned rather than carrying a signature that no longer verifies, so
        `check` lists it as an unsigned human claim."""
        actor = event.get("actor")
        if isinstance(actor, dict) and actor.get("asserted_by") == self.reviewer.name:
            return self.keys.sign(event)
        return {k: v for k, v in event.items() if k not in ("signature", "signer")}

    def reindex(self) -> None:
        counts: dict[str, int] = {}
        for entry in self.store.engrams.entries:
            if entry.key:
                counts[entry.key] = counts.get(entry.key, 0) + 1
        self._engrams = {
            e.key: e.value  # type: ignore[misc]
            for e in self.store.engrams.entries
            if e.valid and e.key and counts[e.key] == 1
        }
        self._tensions = {e.key: e.value for e in self.store.tensions.entries if e.valid and e.key}  # type: ignore[misc]
        self.queue.note(everything=True)  # records replaced wholesale: the queue compares them by identity
        self.queue.prime()  # here, on the loading thread, not on the window's next read

    def now(self) -> datetime:
        return self.clock.now()

    def _step(self, write: Callable[[], WriteResult]) -> WriteResult:
        """Run one journaled write; after a partial write the snapshot is re-read so the panes show the disk."""
        try:
            return write()
        except PartialWrite:
            self.reindex()
            raise

    def _plan(self, file: str, edits: list[Edit]) -> Step:
        """A later step of a two-file action as the reviewer's snapshot predicts it (journaled before the first
        file is replaced; made exact inside its own lock)."""

        index = self._engrams if file == "engrams" else self._tensions
        patches, events = [], []
        for edit in edits:
            before = index[edit.key]
            after, evs = edit.apply(deepcopy(before))
            patches.append(Patch.between("engrams" if file == "engrams" else "tensions", edit.key, before, after))
            events += evs
        return Step("engrams" if file == "engrams" else "tensions", patches, events, planned=True)

    def _done(self, op: Operation, *results: WriteResult) -> ChangeSet:
        self._undo.append(op)
        self._redo.clear()
        return self._changes(op, *results)

    def _changes(self, op: Operation, *results: WriteResult) -> ChangeSet:
        change = ChangeSet(message=op.label)
        self.made_changes = True
        self.keys.register(self.now())
        change.warnings += self.key_notices()  # said once: where the new key lives, that it was registered
        if any(r.reloaded for r in results):
            self.reindex()  # PLUR had rewritten a file meanwhile: everything may have moved
        else:
            for patch in op.patches:
                index = self._engrams if patch.file == "engrams" else self._tensions
                for result in results:
                    if patch.key in result.after:
                        index[patch.key] = result.after[patch.key]
        for result in results:
            for patch_file, key in ((p.file, p.key) for p in op.patches):
                (change.engrams if patch_file == "engrams" else change.tensions).add(key)
            change.events += len(result.events)
            if result.history is not None:
                change.warnings += result.history.warnings
            self.history.add(result.events)
        self.queue.note(change.engrams, change.tensions)
        return change

    def _second_step(self, journal: JournalRecord, first: Patch, action: str, edits: list[Edit]) -> WriteResult:
        """The engrams step of a two-file action. Refused before engrams.yaml changed: the tension record is set
        back (a journaled step of the same action), and the message says exactly what was written."""
        try:
            return self._step(lambda: self.store.write_engrams(edits, engram_fingerprint, journal, 1))
        except PartialWrite:
            raise
        except Exception as exc:
            del journal.steps[1:]
            said = without_nothing_written(str(exc)).rstrip(".")
            try:
                self._rollback(first, action, journal, 1)
            except Exception as again:
                exc.args = (
                    f"{said}. engrams.yaml was not changed, but tensions.yaml had already been changed and setting "
                    f"it back failed ({again}); the write-ahead journal keeps the action, and opening the store for "
                    "review completes it or reports why it cannot.",
                )
                raise
            journal.finish()
            exc.args = (
                f"{said}. engrams.yaml was not changed; tensions.yaml had already been changed and was set back "
                f"({first.key} is as before; history records both steps).",
            )
            raise

    def _rollback(self, patch: Patch, action: str, journal: JournalRecord, step: int) -> None:
        now = self.now()
        back = patch.reversed()

        def apply(value: dict[str, object]) -> tuple[dict[str, object], list[dict[str, object]]]:
            return back.apply(value), [review.tension_event(f"rollback_{action}", value, self.reviewer, now)]

        self.store.write_tensions(self._signed([Edit(patch.key, apply)]), tension_fingerprint, journal, step)
        self.keys.register(now)
        self.reindex()

    # -- undo / redo ---------------------------------------------------------------------------------------

    @property
    def can_undo(self) -> bool:
        return bool(self._undo)

    @property
    def can_redo(self) -> bool:
        return bool(self._redo)

    def undo_label(self) -> str:
        return self._undo[-1].label if self._undo else ""

    def redo_label(self) -> str:
        return self._redo[-1].label if self._redo else ""

    def undo(self) -> ChangeSet:
        if not self._undo:
            raise ActionRefused("nothing to undo")
        op = self._undo[-1]
        change = self._replay(op, [p.reversed() for p in reversed(op.patches)], "undo")
        self._redo.append(self._undo.pop())
        return change

    def redo(self) -> ChangeSet:
        if not self._redo:
            raise ActionRefused("nothing to redo")
        op = self._redo[-1]
        change = self._replay(op, list(op.patches), "redo")
        self._undo.append(self._redo.pop())
        return change

    def _replay(
        self, op: Operation, patches: list[Patch], verb: str, journal: JournalRecord | None = None
    ) -> ChangeSet:
        now = self.now()
        own = journal is None
        if journal is None:
            journal = self.store.journal.begin(verb, f"{verb} {op.label}")
        results: list[WriteResult] = []
        done: list[Patch] = []
        groups = _groups(patches)
        base = len(journal.steps)
        planned = [
            (file, self._signed([Edit(p.key, self._replay_fn(p, op, verb, now)) for p in group]))
            for file, group in groups
        ]
        journal.steps += [Step("tensions", [], [], planned=True)] + [
            self._plan(file, edits) for file, edits in planned[1:]
        ]
        try:
            for n, ((file, edits), (_f, group)) in enumerate(zip(planned, groups, strict=True)):
                results.append(self._write_group(file, edits, journal, base + n))
                done.extend(group)
        except PartialWrite:
            raise
        except Exception:
            del journal.steps[base + len(results) :]
            if done:  # put back what this undo already changed, so the store is as it was before the attempt
                self._replay(op, [p.reversed() for p in reversed(done)], f"rollback_{verb}", journal)
            if own:
                journal.finish()
            raise
        if own:
            journal.finish()
        change = self._changes(Operation(op.action, f"{verb} {op.label}", patches), *results)
        change.message = f"{verb}: {op.label}"
        return change

    def _write_group(self, file: str, edits: list[Edit], journal: JournalRecord, step: int) -> WriteResult:
        if file == "engrams":
            return self._step(lambda: self.store.write_engrams(edits, engram_fingerprint, journal, step))
        return self._step(lambda: self.store.write_tensions(edits, tension_fingerprint, journal, step))

    def _replay_fn(self, patch: Patch, op: Operation, verb: str, now: datetime):  # type: ignore[no-untyped-def]
        def apply(value: dict[str, object]) -> tuple[dict[str, object], list[dict[str, object]]]:
            new = patch.apply(value)
            fields = {k: {"from": _plain(old), "to": _plain(after)} for k, old, after in patch.changes}
            data = {"action": verb, verb + "s": op.action, "label": op.label, "fields": fields}
            if patch.file == "engrams":
                kind = "engram_retired" if new.get("status") == "retired" and "status" in fields else "engram_updated"
                return new, [review.make_event(kind, patch.key, now, data, self.reviewer)]
            return new, [
                review.make_event(
                    "tension_reviewed", str(new.get("engram_a")), now, {**data, "tension_id": patch.key}, self.reviewer
                )
            ]

        return apply


def _plain(value: object) -> object:
    return None if value is review.ABSENT else value


def _groups(patches: list[Patch]) -> list[tuple[str, list[Patch]]]:
    groups: list[tuple[str, list[Patch]]] = []
    for patch in patches:
        if groups and groups[-1][0] == patch.file:
            groups[-1][1].append(patch)
        else:
            groups.append((patch.file, [patch]))
    return groups
