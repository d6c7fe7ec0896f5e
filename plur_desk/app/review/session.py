"""ReviewSession: the one Qt-free entry point for everything a pane shows or changes on one open store.

A change is a command (`plur_desk.domain.commands`): `execute(command)` checks it against what the reviewer saw
(a `Seen` per record, as rendered), journals and writes it with its signed history events (`writes.py`), records
it for undo (`undo.py`) and returns the `ChangeSet` naming what changed. Undo and redo are themselves audited
forward changes that refuse when the record moved on since. The caller builds the command and hands it to
`execute`: the session has no method that only wraps one (`settle_duplicates` and `replace_key` do more). The store
stays inside the app layer: the session offers what a window needs of it (`save_cache`, `lock_holder`,
`changed_on_disk`, …). Its parts are public and reached directly, never through a method that only forwards:
`queue` (the drafts' rows), `writes` (`seen`, `seen_tension`), `undo_history`, `verdicts`, `snapshot`, `history`,
`signing`, `validity`.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from plur_desk.app.history.history_index import HistoryIndex
from plur_desk.app.review.queries import DraftQueue, TensionRows
from plur_desk.app.review.review_verdicts import ReviewVerdicts
from plur_desk.app.review.reviewer import READER, InvalidReviewer, check_reviewer, lookalike_problem
from plur_desk.app.review.rows import TensionRow, Verdict
from plur_desk.app.review.snapshot import Snapshot, differing
from plur_desk.app.review.undo import UndoHistory, UndoIntent, undo_patches
from plur_desk.app.review.validity_rows import ValidityRows, WindowBar, window_bars
from plur_desk.app.review.writes import Writes
from plur_desk.app.trust.session_signing import SessionSigning
from plur_desk.app.trust.signing import ReviewerKeys
from plur_desk.app.trust.vault import KeyVault
from plur_desk.app.trust.verifier import TrustChecker
from plur_desk.domain.changes import ChangeSet as ChangeSet  # re-exported: panes import it from here
from plur_desk.domain.changes import said
from plur_desk.domain.engram_view import EngramView
from plur_desk.domain.review import Patch, Reviewer
from plur_desk.infra.clock import Clock, SystemClock
from plur_desk.infra.errors import ActionRefused, LockedWithOpenTension, PlurDeskError
from plur_desk.infra.paths import data_dir
from plur_desk.store.lists.parse_cache import ParsedBlocks
from plur_desk.store.plur_store import PlurStore

COUNTED = "plur_desk_counted_failure"  # set on an exception that a change of the session counted as failed

if TYPE_CHECKING:  # the commands (and the tension rules they use) load with the first decision, not at launch
    from plur_desk.app.changes.watch import ChangeWatch
    from plur_desk.domain import commands as cmd

    Command = cmd.EngramCommand | cmd.TensionCommand | cmd.RecordTension


class ReviewSession:
    def __init__(
        self, store: PlurStore, reviewer: Reviewer, clock: Clock | None = None, keys: ReviewerKeys | None = None
    ) -> None:
        self.store = store  # app layer only: the window asks the session (tests/test_architecture.py)
        self.reading_only = reviewer.name == READER  # a read-only command's session: every decision is refused
        if not self.reading_only:
            reviewer = Reviewer(check_reviewer(reviewer.name))  # every event names a person, never "" or an agent
        self.reviewer = reviewer
        self.clock = clock or SystemClock()
        self.keys = keys or ReviewerKeys(store.root, reviewer, KeyVault(data_dir()))
        store.history.resign = self.keys.sign  # a chained append re-signs once `prev` is set
        if not self.reading_only:  # a journal record leaves the app signed as a whole, like the events in it
            store.journal.sign, store.journal.actor = self.keys.sign, reviewer.actor()
        self.trust = TrustChecker(store.root)
        if not self.reading_only:  # before anything is signed with a name that passes for someone trusted
            problem = lookalike_problem(reviewer.name, {k.identity for k in self.trust.trusted().keys})
            if problem:
                raise InvalidReviewer(f"Reviewer name refused: {problem}")
        self.history = HistoryIndex(store.history, self.trust)
        self.snapshot = Snapshot(store)
        self.signing = SessionSigning(store, self.keys, self.history)
        self.verdicts = ReviewVerdicts(store, self.history, self.trust, self.snapshot)
        self.writes = Writes(store, self.snapshot, self.signing, self.history, reviewer, self.reading_only)
        self.undo_history = UndoHistory()
        self.recovery_note = ""  # one line for the reviewer when opening finished interrupted actions
        self.unverified_records: list[str] = []  # journal records (store-relative) no trusted key verifies
        self.queue = DraftQueue(
            lambda: self._engrams,
            lambda: self._tensions,
            self.now,
            self._history_verdicts,
            self._record_verdict,
            self.history.rejections_touched,
        )
        self._tension_rows = TensionRows(lambda: self._engrams, lambda: self._tensions, self.now, self.history.renames)
        self.validity = ValidityRows(lambda: self._engrams)
        self.snapshot.followers.append(self.queue)
        self._watch: ChangeWatch | None = None
        self._watch_made = threading.Lock()
        self.snapshot.reindex()

    @property
    def watch(self) -> ChangeWatch:
        """The watched baseline (app/changes/watch.py), made on first use (from any thread): its modules are not
        imported before the first draft is shown (`loading.warm_up_signing` imports them before the first decision)."""
        with self._watch_made:
            if self._watch is None:
                from plur_desk.app.changes.watch import ChangeWatch

                self._watch = ChangeWatch(
                    self.store,
                    (self.snapshot, self.trust, self.history, self.keys),
                    self.reviewer,
                    self.now,
                    reading_only=self.reading_only,
                )
            return self._watch

    @property
    def _engrams(self) -> dict[str, dict[str, object]]:
        return self.snapshot.engrams

    @property
    def _tensions(self) -> dict[str, dict[str, object]]:
        return self.snapshot.tensions

    def now(self) -> datetime:
        return self.clock.now()

    # -- changing the store --------------------------------------------------------------------------------

    def execute(self, command: Command) -> ChangeSet:
        """Carry out one reviewer's intent: checked, journaled, signed, written, undoable (a new tension record
        is not undoable: dismiss or resolve it instead)."""
        from plur_desk.domain import commands as cmd

        ctx = cmd.Context(self.reviewer, self.now())
        if isinstance(command, cmd.ApproveDrafts) and command.level == "locked" and not command.despite_open_tension:
            lines = self.open_tensions_on(s.id for s in command.seen)
            if lines:
                raise LockedWithOpenTension(lines)
        with self._counted():
            if isinstance(command, cmd.RecordTension):
                change = self.writes.record_tension(command, ctx)
                return change.warning(self.watch.follow([Patch("tensions", t, ()) for t in change.tensions]))
            if isinstance(command, cmd.EngramCommand):
                op, change = self.writes.engrams(command, ctx)
            elif isinstance(command, cmd.TwoFileCommand):
                op, change = self.writes.two_files(command, ctx)
            else:
                op, change = self.writes.tension(command, ctx)
        self.undo_history.done(op)
        change = change.warning(self.watch.follow(op.patches, command, op))
        return change.saying(said(op.action, op.label, change.engrams, self._statement))

    def undo_intent(self, *, redo: bool = False, exact: bool = True, failures_told: int | None = None) -> UndoIntent:
        """At the key press: what an undo (or redo) run later must take back (see `UndoIntent`). `failures_told`:
        how many counted failures (`COUNTED`) the window has been told of; the actions still being written came
        after those, whatever the writer's thread has counted meanwhile (a write that failed a moment before the
        key press, not yet shown, is one of them)."""
        intent = self.undo_history.intent(redo, exact)
        return intent if failures_told is None else replace(intent, failures=failures_told)

    def undo(self, intent: UndoIntent | None = None) -> ChangeSet:
        with self._counted():
            op = self.undo_history.next_undo()
            self.undo_history.check(intent, op, "undo")
            patches = undo_patches(op)
            change = self.writes.replay(op, patches, "undo", self.now())
        self.undo_history.undone()
        change = change.warning(self.watch.follow(patches, op=op, undoing=True))
        return change.saying(said(op.action, op.label, change.engrams, self._statement, "undo")).as_kind("undone")

    def redo(self, intent: UndoIntent | None = None) -> ChangeSet:
        with self._counted():
            op = self.undo_history.next_redo()
            self.undo_history.check(intent, op, "redo")
            change = self.writes.replay(op, list(op.patches), "redo", self.now())
        self.undo_history.redone()
        change = change.warning(self.watch.follow(op.patches, op=op))
        return change.saying(said(op.action, op.label, change.engrams, self._statement, "redo")).as_kind("redone")

    def _statement(self, engram_id: str) -> object:
        return (self._engrams.get(engram_id) or {}).get("statement")

    @contextlib.contextmanager
    def _counted(self) -> Iterator[None]:
        try:
            yield
        except Exception as exc:
            self.undo_history.failures += 1  # an undo asked for after it must not take back an earlier action
            setattr(exc, COUNTED, True)  # the window counts the ones it is told of (`undo_intent`)
            raise

    def settle_duplicates(
        self,
        representative: str,
        duplicates: list[str],
        approve: bool,
        level: str = "decided",
        shown: Mapping[str, str] | None = None,
        roles: Mapping[str, tuple[str, bool]] | None = None,
    ) -> ChangeSet:
        """Approve the representative (when `approve`) and reject each duplicate with a link to it, each checked
        against the session's snapshot and the statements (`shown`), scopes and draft roles (`roles`) the Clusters pane
        showed."""
        from plur_desk.domain import commands as cmd

        others = [d for d in dict.fromkeys(duplicates) if d != representative]
        seen = tuple(self.writes.seen(([representative] if approve else []) + others))
        pairs = tuple(shown.items()) if shown is not None else None
        listed = tuple((i, scope, draft) for i, (scope, draft) in roles.items()) if roles is not None else None
        return self.execute(cmd.SettleDuplicates(representative, seen, approve, level, pairs, listed))

    def replace_key(self, *, revoke: bool = False, new_key: bool = True, disown: bool = False) -> ChangeSet:
        """After the reviewer confirmed: a (new) key becomes this reviewer's key, recorded as a signed event."""
        self.writes.check_writable()
        change = self.signing.replace_key(self.now(), revoke=revoke, new_key=new_key, disown=disown)
        self.writes.made_changes = True
        return change

    def end(self) -> dict[str, object] | None:
        """End of the review session: on a hash-chained store a session that changed something ends with a
        checkpoint signed by the reviewer. Returns it, or None when none was written."""
        if not self.writes.made_changes:
            return None
        event = self.signing.checkpoint(self.now())
        if event is not None:
            self.writes.made_changes = False
        return event

    # -- what a decision rests on --------------------------------------------------------------------------

    # -- the store, as far as a window needs it ------------------------------------------------------------

    def recover_on_open(self) -> str:
        """Opened for review: finish or roll back what killed writers left in the journal, sweep their abandoned
        temp files. Returns (and keeps in `recovery_note`) one line for the reviewer, empty when nothing was done."""
        from plur_desk.store.recovery import recover
        from plur_desk.store.sweep import sweep_temp_files

        if self.store.read_only_reasons():
            return ""
        sweep_temp_files(self.store.root)
        try:
            report = recover(
                self.store,
                self.signing.proven_decision(self.reviewer, self.trust),
                self.signing.completion_line(self.reviewer, self.now),
            )
        except PlurDeskError as exc:  # e.g. another plur_desk is recovering right now: the store stays usable
            self.recovery_note = f"Recovery of interrupted actions was not done: {exc}"
            return self.recovery_note
        named = [u.split(": ", 1)[0] for u in report.unverifiable]
        self.unverified_records = [n for n in named if n.endswith(".json")]  # (a folder problem is only said)
        if report.completed:
            # A killed writer may not have registered the key it signed with; a conflict is asked about later.
            with contextlib.suppress(PlurDeskError):
                self.keys.register(self.now())
            self.store.load()
            self.snapshot.reindex()
        self.recovery_note = report.line()
        return self.recovery_note

    def discard_journal_record(self, name: str) -> str:
        """The reviewer chose not to apply a journal record no trusted key verifies: it is moved out of the journal
        (to `.plur-desk/journal-discarded/`, kept for inspection, never deleted). Returns a line saying where."""
        from plur_desk.store.journal import JOURNAL_DIR

        wanted = Path(name).name
        if not any(Path(u).name == wanted for u in self.unverified_records):
            raise ActionRefused(f"{JOURNAL_DIR / wanted} is not a journal record reported as unverifiable")
        try:
            moved = self.store.journal.discard(wanted)
        except OSError as exc:
            raise ActionRefused(f"{JOURNAL_DIR / wanted} could not be moved aside: {exc}") from exc
        self.unverified_records = [u for u in self.unverified_records if Path(u).name != wanted]
        return f"{JOURNAL_DIR / wanted} was not applied; it was moved to {moved.relative_to(self.store.root)}"

    def load_history(self) -> None:
        if not self.reading_only:
            self.keys.remember_own()  # a key made before trust files existed is recorded as this user's
        self.history.load()
        self.queue.prime()  # the rejection verdicts of the whole history, counted here on the loading thread
        # whether the history is hash-chained: every month searched once here, so the first decision does not
        # (only bytes appended since are searched again)
        self.store.history.mode(self.now().strftime("%Y-%m"))

    def save_cache(self) -> None:
        """Keep the parsed blocks for the next open (derived data; never the store itself)."""
        self.store.save_cache()

    def lock_holder(self) -> str | None:
        """Who holds PLUR's engrams lock right now (PLUR's token), or None."""
        return self.store.lock_holder()

    def changed_on_disk(self) -> bool:
        """Whether engrams.yaml or tensions.yaml changed since the session read them."""
        return self.store.engrams_changed_on_disk() or self.store.tensions_changed_on_disk()

    def reload_if_changed(self) -> ChangeSet:
        """Re-read files PLUR changed; report which ids differ from what the session showed, and (`events`) that
        the history changed or a draft's row that rested on a fallback answer now reads differently."""
        engrams, tensions = frozenset[str](), frozenset[str]()
        old_engrams, old_tensions = self._engrams, self._tensions
        if self.changed_on_disk():
            self.store.load()
            self.snapshot.reindex()
            engrams, tensions = differing(old_engrams, self._engrams), differing(old_tensions, self._tensions)
        events = self.history.refresh()
        revised = self.queue.revised()  # a draft shown with an answer given while a month could not be read
        return ChangeSet(engrams, tensions, events=1 if events or revised else 0, reloaded=True, kind="reloaded")

    @property
    def read_only_reasons(self) -> list[str]:
        return self.store.read_only_reasons()

    @property
    def root(self) -> Path:
        return self.store.root

    @property
    def fully_loaded(self) -> bool:
        """Whether every entry of engrams.yaml is parsed (False between the drafts and the rest of a load)."""
        return self.store.engrams.all_parsed

    def parse_rest(self) -> ParsedBlocks:
        """A load's second step, off the session's writing thread: the entries not parsed yet (worker processes),
        and the file's hash, which the first decision's write would otherwise compute inside the lock (computed
        meanwhile: hashing releases the interpreter lock, the workers have the cores)."""
        hashing = threading.Thread(target=self.store.engrams.file_hash, name="file-hash", daemon=True)
        hashing.start()
        parsed = self.store.parse_rest()
        hashing.join()
        return parsed

    def finish_load(self, parsed: ParsedBlocks) -> None:
        """A load's last step, in the writes' serial queue: the rest of the entries join the snapshot, whose id
        index is built here rather than by the first decision's write."""
        self.store.finish_load(parsed)
        self.store.engrams.by_key()
        self.snapshot.reindex()

    def engram(self, engram_id: str) -> dict[str, object] | None:
        return self._engrams.get(engram_id)

    def view(self, engram_id: str) -> EngramView | None:
        """The engram read through its rules (superseded, window state, …), or None."""
        found = self._engrams.get(engram_id)
        return EngramView(found) if found is not None else None

    def tension(self, tension_id: str) -> dict[str, object] | None:
        return self._tensions.get(tension_id)

    def all_engrams(self) -> Iterable[dict[str, object]]:
        return self._engrams.values()

    def engrams_by_id(self) -> dict[str, dict[str, object]]:
        """A copy of the records by id (a copy in C, ~1 ms at 50,000): a snapshot another thread may keep."""
        return dict(self._engrams)

    def all_tensions(self) -> Iterable[dict[str, object]]:
        return self._tensions.values()

    def valid_tension_records(self) -> Iterator[dict[str, object]]:
        """Every record of tensions.yaml that PLUR accepts, duplicates of an id included (PLUR's scan skips them
        all), in file order."""
        for entry in self.store.tensions.entries:
            if entry.valid and isinstance(entry.value, dict):
                yield entry.value

    def special_files(self) -> list[str]:
        """Store files that exist but are not regular files (never opened; the store is read-only)."""
        return self.store.special_files()

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

    def trust_notice(self) -> str:
        """What the reviewer must know about keys before any decision: keys.yaml lists a key for them that is not
        theirs, or a trust file that could not be read ("" when neither)."""
        lines = [self.trust.foreign_notice(), *self.trust.problems]
        return " ".join(line for line in lines if line)

    # -- queries -------------------------------------------------------------------------------------------

    def open_tension_ids(self) -> set[str]:
        ids: set[str] = set()
        for record in self._tensions.values():
            if record.get("status", "detected") in ("detected", "confirmed"):
                ids.add(str(record.get("engram_a")))
                ids.add(str(record.get("engram_b")))
        return ids

    def open_tensions_on(self, engram_ids: Iterable[str]) -> list[str]:
        """One line per open tension (detected, confirmed) with one of these engrams on a side."""
        wanted = set(engram_ids)
        return [
            f"{record.get(side)} is in {record.get('status', 'detected')} tension {key} with {record.get(other)}"
            for key, record in self._tensions.items()
            if record.get("status", "detected") in ("detected", "confirmed")
            for side, other in (("engram_a", "engram_b"), ("engram_b", "engram_a"))
            if str(record.get(side)) in wanted
        ]

    def _history_verdicts(self) -> tuple[object, Mapping[str, Verdict]]:
        self.history.sync_trust()
        stamp = self.history.stamp()  # before the answer: one given while a read failed is never kept as current
        return stamp, self.history.rejections()

    def _record_verdict(self, engram: dict[str, object]) -> tuple[Verdict | None, object]:
        """A rejected review record as a verdict (trusted as the history event that backs it), and the history
        stamp it rests on: None when it is a fallback, given before the whole history was read or while a month
        read failed (`timeline` then says only that the history changed), which a cache must not keep."""
        record = engram.get("review")
        if not isinstance(record, dict):
            return None, None
        self.history.sync_trust()
        stamp = self.history.stamp()  # before the answer (`HistoryIndex.stamp`)
        by, at, reason = (str(record.get(k, "")) for k in ("by", "at", "reason"))
        verdict = Verdict(str(engram.get("id")), by, at, reason, self.verdicts.review_trust(engram))
        return verdict, stamp if self.history.loaded and self.history.stamp() == stamp else None

    def tensions(
        self, statuses: Iterable[str] = ("detected", "confirmed"), engram_id: str | None = None
    ) -> list[TensionRow]:
        """Rows of the tensions with these statuses (only those naming `engram_id`, when given), each kept until its
        record or one of its two engrams is replaced (`TensionRows`)."""
        rows = self._tension_rows.rows(statuses)
        return rows if engram_id is None else [r for r in rows if engram_id in (r.engram_a, r.engram_b)]

    def tensions_name_any(self, engram_ids: Iterable[str]) -> bool:
        """Whether a tension (of any status) has one of these engrams on a side: then its row may read differently."""
        wanted = set(engram_ids)
        return bool(wanted) and any(
            str(t.get(side)) in wanted for t in self._tensions.values() for side in ("engram_a", "engram_b")
        )

    def window_bars(self, engram_id: str) -> list[WindowBar]:
        """The timeline beside one engram's window: the windows of the active engrams in its domain."""
        engram = self._engrams.get(engram_id)
        return [] if engram is None else window_bars(self._engrams.values(), engram)

    def counts(self) -> dict[str, int]:
        drafts = len(self.queue)
        open_t = sum(1 for t in self._tensions.values() if t.get("status", "detected") in ("detected", "confirmed"))
        held = len(self.snapshot.held)
        return {"drafts": drafts, "open_tensions": open_t, "engrams": len(self._engrams), "held": held}

    def held_engrams(self) -> tuple[list[dict[str, object]], str | None]:
        """The engrams held by an interrupted PLUR sync (read-only), and why .git/plur-held.json is unread if so."""
        return [dict(e) for e in self.snapshot.held.values()], self.snapshot.held_problem
