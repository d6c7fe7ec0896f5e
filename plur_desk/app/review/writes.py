"""How a command reaches the disk: one write-ahead journal record per action (both files of a two-file action,
every group of an undo), each step signed, checked against what the reviewer saw and written under PLUR's lock;
the set-back of a first step when the second is refused; and the session's snapshot kept in step with the disk."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from plur_desk.app.history.history_index import HistoryIndex
from plur_desk.app.review.snapshot import Snapshot, differing
from plur_desk.app.review.undo import file_groups, followed, replay_edit
from plur_desk.app.trust.session_signing import SessionSigning
from plur_desk.domain import review
from plur_desk.domain.changes import ChangeSet
from plur_desk.domain.engram_view import EngramView
from plur_desk.domain.review import Operation, Patch, Reviewer, engram_fingerprint, tension_fingerprint
from plur_desk.domain.seen import Seen, seen_engram, seen_tension
from plur_desk.infra.copies import copy_value
from plur_desk.infra.errors import (
    ActionRefused,
    ChangedSinceError,
    Outcome,
    PartialWrite,
    PlurDeskError,
    ReadOnlyStore,
    WriteFailed,
)
from plur_desk.store.journal import JournalRecord, Step
from plur_desk.store.lists.tension_append import append_tension
from plur_desk.store.plur_store import Apply, Edit, PlurStore, WriteResult

if TYPE_CHECKING:
    from plur_desk.domain.commands import Context, EngramCommand, RecordTension, TensionCommand, TwoFileCommand

NOT_A_TENSION = "{} is not in tensions.yaml, or PLUR quarantines it (see plur-desk check)"


class Writes:
    def __init__(
        self,
        store: PlurStore,
        snapshot: Snapshot,
        signing: SessionSigning,
        history: HistoryIndex,
        reviewer: Reviewer,
        reading_only: bool,
    ) -> None:
        self.store, self.snapshot, self.signing, self.history = store, snapshot, signing, history
        self.reviewer, self.reading_only = reviewer, reading_only
        self.made_changes = False  # a session that changed a chained store ends with a checkpoint

    # -- what the reviewer saw -----------------------------------------------------------------------------

    def check_writable(self) -> None:
        if self.reading_only:
            raise ReadOnlyStore("this session was opened for reading only; it has no reviewer and decides nothing")
        reasons = self.store.read_only_reasons()
        if reasons:
            raise ReadOnlyStore("the store is open read-only: " + "; ".join(reasons))

    def check_known(self, engram_id: str) -> None:
        self.check_writable()
        self.snapshot.check_known(engram_id)

    def seen(self, ids: Iterable[str]) -> list[Seen]:
        """The session's current snapshot of these engrams, for a caller that decides on exactly that (a script,
        a test). The window never uses it: it hands over the fingerprints of the rows it rendered."""
        ids = list(ids)
        if ids:  # once: it lists the store's files (a bulk of 500 listed them 1,000 times)
            self.check_writable()
        out = []
        for engram_id in ids:
            self.snapshot.check_known(engram_id)
            out.append(seen_engram(self.snapshot.engrams[engram_id]))
        return out

    def seen_tension(self, tension_id: str) -> Seen:
        self.check_writable()
        record = self.snapshot.tensions.get(tension_id)
        if record is None:
            raise ActionRefused(NOT_A_TENSION.format(tension_id))
        return seen_tension(record, [self.snapshot.engrams.get(i) for i in self.sides(record)])

    def sides(self, record: dict[str, object]) -> tuple[str, str]:
        """The engrams a tension's sides are now: an id PLUR 0.21 renamed since is followed (domain/rekey)."""
        renames, engrams = self.history.renames(), self.snapshot.engrams
        return renames.side(str(record.get("engram_a")), engrams), renames.side(str(record.get("engram_b")), engrams)

    def side_as_shown(self, seen: Seen, engram_id: str) -> dict[str, object]:
        """An engram as the reviewer saw it beside the tension; refused early when the session already knows it
        changed (the write checks the disk again inside the lock)."""
        self.check_known(engram_id)
        side = seen.side(engram_id)
        if side is None:
            raise ActionRefused(f"{engram_id} was not shown with {seen.id}; look at both sides before deciding")
        moved = side.moved(engram_fingerprint(self.snapshot.engrams[engram_id]))
        if moved:
            raise ChangedSinceError(engram_id, moved)
        return side.expected()

    def _sides_as_shown(self, seen: Seen) -> None:
        """A confirm or dismiss is about the pair as shown: both engrams of the record must read as they did beside
        it, in the session and on disk (an engram missing from the store both then and now is shown as missing)."""
        record = self.snapshot.tensions.get(seen.id)
        if record is None:
            return  # (the write refuses it: not a tension)
        checks = []
        for engram_id in self.sides(record):
            if engram_id in self.snapshot.engrams or seen.side(engram_id) is not None:
                checks.append((engram_id, self.side_as_shown(seen, engram_id)))
        if checks:
            self._on_disk_as_shown(checks)

    def _on_disk_as_shown(self, rests_on: Iterable[tuple[str, dict[str, object]]], edits: Sequence[Edit] = ()) -> None:
        """Refused early, nothing written, when an engram the decision edits (`edits`, whose own check is repeated
        inside the lock) or rests on without editing (`rests_on`: its fields as the reviewer saw them) reads
        differently in engrams.yaml now."""
        checks = [*edits, *(Edit(i, _unchanged, fields) for i, fields in rests_on)]
        self.store.precheck_engrams(checks, engram_fingerprint)

    # -- the three shapes of a decision --------------------------------------------------------------------

    def engrams(self, command: EngramCommand, ctx: Context) -> tuple[Operation, ChangeSet]:
        """The only drift check: each edit expects the record exactly as the reviewer saw it (`seen`)."""
        self.check_writable()
        seen = command.targets()
        if not seen:
            raise ActionRefused("nothing selected")
        unique = {s.id: s for s in seen}
        for item in unique.values():
            if item.kind != "engram":
                raise ActionRefused(f"{item.id} is not an engram")
            self.snapshot.check_known(item.id)  # (writable: checked above)
        command.check(self.snapshot.view)
        kept = command.unchanged()
        if kept:  # engrams it rests on without changing them: as shown on disk too
            self._on_disk_as_shown(kept)
        label = command.label()

        def apply(engram: dict[str, object]) -> tuple[dict[str, object], list[dict[str, object]]]:
            return command.apply(engram, ctx)

        for engram_id in unique:
            self._changes_something(self.snapshot.engrams[engram_id], engram_id, apply)
        edits = self.signing.signed([Edit(i, apply, item.expected()) for i, item in unique.items()])
        record = self.store.journal.begin(command.action, label)
        result = self._step(lambda: self.store.write_engrams(edits, engram_fingerprint, record, 0))
        record.finish()
        patches = [Patch.between("engrams", k, result.before[k], result.after[k]) for k in result.changed]
        op = Operation(command.action, label, patches)
        return op, self.changes(op, ctx.now, result)

    def tension(self, command: TensionCommand, ctx: Context) -> tuple[Operation, ChangeSet]:
        tension_id, label = command.seen.id, command.label()
        self._sides_as_shown(command.seen)
        edit = command.record_edit(ctx, command.event_fields())
        self._tension_changes_something(tension_id, edit)
        journal = self.store.journal.begin(command.action, label)
        result = self._tension_write(command.seen, edit, journal)
        journal.finish()
        op = Operation(
            command.action,
            label,
            [Patch.between("tensions", tension_id, result.before[tension_id], result.after[tension_id])],
        )
        return op, self.changes(op, ctx.now, result)

    def two_files(self, command: TwoFileCommand, ctx: Context) -> tuple[Operation, ChangeSet]:
        """PLUR's order under one journal record: the engram edits are checked first (refused before tensions.yaml
        is touched), the tension record is written with the engrams step journaled as planned, then the engrams; a
        refused second step sets the record back. The two locks are never held together."""
        command.validate()
        seen = command.seen
        record = self.snapshot.tensions.get(seen.id)
        if record is None:
            raise ActionRefused(f"{seen.id} is not in tensions.yaml")
        id_a, id_b = self.sides(record)  # on the engrams as shown, an id PLUR renamed since followed
        steps = command.engram_steps({**record, "engram_a": id_a, "engram_b": id_b}, self.snapshot.view, ctx)
        shown = {engram_id: self.side_as_shown(seen, engram_id) for engram_id in steps.shown}
        edits = self.signing.signed([Edit(k, apply, shown[k]) for k, apply in steps.edits])
        edited = {e.key for e in edits}  # and the sides it does not edit (a winner): as shown on disk too
        self._on_disk_as_shown([(k, fields) for k, fields in shown.items() if k not in edited], edits)
        label = command.label()
        record_edit = command.record_edit(ctx, steps.fields)
        self._tension_changes_something(seen.id, record_edit)
        planned = self._plan("engrams", edits)  # (the engram edits tried on the snapshot: refused before any lock)
        journal = self.store.journal.begin(command.action, label)
        journal.add(Step.placeholder("tensions"), planned)
        first = self._tension_write(seen, record_edit, journal)
        record_patch = Patch.between("tensions", seen.id, first.before[seen.id], first.after[seen.id])
        second = self._second_step(journal, record_patch, command.event, edits, ctx.now)
        journal.finish()
        patches = [record_patch] + [
            Patch.between("engrams", k, second.before[k], second.after[k]) for k in second.changed
        ]
        op = Operation(command.action, label, patches)
        return op, self.changes(op, ctx.now, first, second)

    def record_tension(self, command: RecordTension, ctx: Context) -> ChangeSet:
        """A new record appended under PLUR's tensions lock, with its event; not undoable."""
        if command.id_a == command.id_b:
            raise ActionRefused("a tension needs two different engrams")
        found = [self.snapshot.engrams.get(i) for i in (command.id_a, command.id_b)]
        for ident, engram in zip((command.id_a, command.id_b), found, strict=True):
            if engram is None:
                raise ActionRefused(f"{ident} is not in the store")
        a, b = (EngramView(e) for e in found if e is not None)
        self.check_writable()
        if command.seen:  # what the reviewer was shown, against engrams.yaml as it is now (`make` checks the snapshot)
            self._on_disk_as_shown([(s.id, s.expected()) for s in command.seen])

        def make(valid: list[dict[str, object]]) -> tuple[dict[str, object], list[dict[str, object]]]:
            record, events = command.make(valid, a, b, ctx)
            return record, [self.signing.keys.sign(e) for e in events]

        self.signing.keys.ready()  # every event leaves the app signed; a locked keyring asks before any lock
        result = append_tension(self.store, make, command.journal_label())
        (ident,) = result.changed
        patch = Patch.between("tensions", ident, {}, result.after[ident])
        return replace(
            self.changes(Operation(command.action, command.label(ident), [patch]), ctx.now, result), reloaded=True
        )

    # -- steps ---------------------------------------------------------------------------------------------

    @staticmethod
    def _changes_something(value: dict[str, object], key: str, apply: Apply) -> None:
        """A decision tried on the session's copy before any lock is taken: one the domain refuses, or one that
        would change nothing, is refused at once instead of after waiting for PLUR's lock (the write tries it
        again, on the disk's copy, inside the lock)."""
        after, _events = apply(copy_value(value))
        if after == value:
            raise ActionRefused(f"{key}: this decision changes nothing", outcome=Outcome.NOTHING_WRITTEN)

    def _tension_changes_something(self, tension_id: str, apply: Apply) -> None:
        record = self.snapshot.tensions.get(tension_id)
        if record is not None:
            self._changes_something(record, tension_id, apply)

    def _tension_write(self, seen: Seen, apply: Apply, journal: JournalRecord) -> WriteResult:
        self.check_writable()
        if seen.kind != "tension" or self.snapshot.tensions.get(seen.id) is None:
            raise ActionRefused(NOT_A_TENSION.format(seen.id))
        (edit,) = self.signing.signed([Edit(seen.id, apply, seen.expected())])
        try:
            return self._step(lambda: self.store.write_tensions([edit], tension_fingerprint, journal, 0))
        except PartialWrite as exc:
            rest = [p.key for later in journal.steps[1:] for p in later.changes]
            if rest:
                exc.args = (f"{exc} The rest of this action (engrams.yaml: {', '.join(rest)}) is kept there too.",)
            raise
        except Exception:
            journal.drop_from(0)  # the first file never changed: nothing of this action happened
            raise

    def _step(self, write: Callable[[], WriteResult]) -> WriteResult:
        """Run one journaled write; after a partial write the snapshot is re-read so the panes show the disk."""
        try:
            return write()
        except PartialWrite:
            self.snapshot.reindex()
            raise

    def _plan(self, file: str, edits: list[Edit]) -> Step:
        """A later step of a two-file action as the reviewer's snapshot predicts it (journaled before the first
        file is replaced; made exact inside its own lock)."""
        index = self.snapshot.engrams if file == "engrams" else self.snapshot.tensions
        patches, events = [], []
        for edit in edits:
            before = index[edit.key]
            after, evs = edit.apply(copy_value(before))
            patches.append(Patch.between("engrams" if file == "engrams" else "tensions", edit.key, before, after))
            events += evs
        return Step("engrams" if file == "engrams" else "tensions", patches, events, planned=True)

    def changes(self, op: Operation, now: datetime, *results: WriteResult) -> ChangeSet:
        """After a write: the key registered, the snapshot and the history index updated, what changed named."""
        self.made_changes = True
        self.signing.keys.register(now)
        warnings = self.signing.key_notices()  # said once: where the new key lives, that it was registered
        before = (self.snapshot.engrams, self.snapshot.tensions)
        self.snapshot.take(op.patches, results)
        for patch in op.patches:
            after = next((r.after[patch.key] for r in results if patch.key in r.after), None)
            if after is not None:
                prints = engram_fingerprint if patch.file == "engrams" else tension_fingerprint
                op.prints[f"{patch.file}/{patch.key}"] = prints(after)
        events = 0
        for result in results:
            events += len(result.events)
            if result.history is not None:
                warnings += result.history.warnings
            self.history.add(result.events)
        engrams = frozenset(p.key for p in op.patches if p.file == "engrams")
        tensions = frozenset(p.key for p in op.patches if p.file == "tensions")
        if any(r.reloaded for r in results):  # the write read in what PLUR wrote meanwhile: named too, so every
            engrams |= differing(before[0], self.snapshot.engrams)  # pane it concerns shows it (the poll will
            tensions |= differing(before[1], self.snapshot.tensions)  # not: the file is the one we know now)
        self.snapshot.changed(engrams, tensions)
        return ChangeSet(engrams, tensions, events, warnings=tuple(warnings), message=op.label)

    def _second_step(
        self, journal: JournalRecord, first: Patch, action: str, edits: list[Edit], now: datetime
    ) -> WriteResult:
        """The engrams step of a two-file action. Refused before engrams.yaml changed: the tension record is set
        back (a journaled step of the same action), and the message says exactly what was written."""
        try:
            return self._step(lambda: self.store.write_engrams(edits, engram_fingerprint, journal, 1))
        except PartialWrite:
            raise
        except Exception as exc:
            journal.drop_from(1, set_back_next=True)  # on disk the plan stays until the set-back replaces it
            try:
                self._rollback(first, action, journal, 1, now)
            except Exception as again:
                raise _with_outcome(exc, Outcome.LEFT_TO_RECOVERY, f"(Setting it back failed: {again}.)") from again
            journal.finish()
            raise _with_outcome(
                exc, Outcome.SET_BACK, f"({first.key} is as before; history records both steps)."
            ) from exc

    def _rollback(self, patch: Patch, action: str, journal: JournalRecord, step: int, now: datetime) -> None:
        back = patch.reversed()

        def apply(value: dict[str, object]) -> tuple[dict[str, object], list[dict[str, object]]]:
            return back.apply(value), [review.tension_event(f"rollback_{action}", value, self.reviewer, now)]

        self.store.write_tensions(self.signing.signed([Edit(patch.key, apply)]), tension_fingerprint, journal, step)
        self.signing.keys.register(now)
        self.snapshot.reindex()

    # -- undo and redo -------------------------------------------------------------------------------------

    def replay(
        self, op: Operation, patches: list[Patch], verb: str, now: datetime, journal: JournalRecord | None = None
    ) -> ChangeSet:
        """Apply `patches` as a new audited change (`verb` is undo, redo, or the rollback of a refused one);
        a refused later group puts back what the earlier groups already changed."""
        own = journal is None
        renames = self.history.renames()
        follow = [followed(p, op.prints, self.snapshot.engrams, renames) for p in patches]  # PLUR renamed it since
        patches = [p for p, _print in follow]
        prints = {f"{p.file}/{p.key}": printed for p, printed in follow}

        def guard(patch: Patch) -> dict[str, object] | None:
            # what the reviewer last saw this action leave; a rollback puts back our own writes of this attempt
            return None if verb.startswith("rollback") else prints.get(f"{patch.file}/{patch.key}")

        if journal is None:
            journal = self.store.journal.begin(verb, f"{verb} {op.label}")
        results: list[WriteResult] = []
        done: list[Patch] = []
        groups = file_groups(patches)
        planned = [
            (
                file,
                self.signing.signed(
                    [Edit(p.key, replay_edit(p, op, verb, self.reviewer, now), guard(p)) for p in group]
                ),
            )
            for file, group in groups
        ]
        base = journal.add(Step.placeholder("tensions"), *(self._plan(file, edits) for file, edits in planned[1:]))
        try:
            for n, ((file, edits), (_f, group)) in enumerate(zip(planned, groups, strict=True)):
                results.append(self._write_group(file, edits, journal, base + n))
                done.extend(group)
        except PartialWrite:
            raise
        except Exception:
            journal.drop_from(base + len(results), set_back_next=bool(done))  # the plan stays until set back
            if done:  # put back what this undo already changed, so the store is as it was before the attempt
                self.replay(op, [p.reversed() for p in reversed(done)], f"rollback_{verb}", now, journal)
            if own:
                journal.finish()
            raise
        if own:
            journal.finish()
        replayed = Operation(op.action, f"{verb} {op.label}", patches)
        change = self.changes(replayed, now, *results)
        op.prints.update(replayed.prints)
        return change.saying(f"{verb}: {op.label}")

    def _write_group(self, file: str, edits: list[Edit], journal: JournalRecord, step: int) -> WriteResult:
        if file == "engrams":
            return self._step(lambda: self.store.write_engrams(edits, engram_fingerprint, journal, step))
        return self._step(lambda: self.store.write_tensions(edits, tension_fingerprint, journal, step))


def _unchanged(value: dict[str, object]) -> tuple[dict[str, object], list[dict[str, object]]]:
    return value, []  # (an Edit only compared, never applied)


def _with_outcome(exc: Exception, outcome: Outcome, detail: str) -> Exception:
    """The refusal of a two-file action's second step, saying what its first step left (`outcome`)."""
    if isinstance(exc, PlurDeskError):
        exc.outcome = outcome
        exc.then = f"{detail} {exc.then}".strip()
        return exc
    failed = WriteFailed(str(exc), outcome=outcome, then=detail)
    failed.__cause__ = exc
    return failed
