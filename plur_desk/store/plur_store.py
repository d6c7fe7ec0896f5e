"""A PLUR store directory: loading it (fast, cached, drafts first) and changing it safely beside running PLURs.

Every change is a read-modify-write under PLUR's own lock: the file is re-read inside the lock, what the reviewer
saw is compared with what is on disk (a difference refuses the write), only the changed entries are re-emitted as
js-yaml would write them, the file is replaced atomically and the history events are appended before the lock is
released. Nothing is ever written to a file that could not be fully read.
"""

from __future__ import annotations

import marshal
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from plur_desk.domain.plur_rules.engram_rules import engram_problems, tension_problems
from plur_desk.domain.review import Patch
from plur_desk.infra.copies import copy_value
from plur_desk.infra.crash import crash_point
from plur_desk.infra.errors import (
    ActionRefused,
    ChangedSinceError,
    NotAPlurStore,
    PartialWrite,
    ReadOnlyStore,
    StoreUnreadable,
    WriteFailed,
    refused_by_system,
)
from plur_desk.infra.memory import gc_paused
from plur_desk.store.atomic import Beside, Staged
from plur_desk.store.file_hash import FileHash
from plur_desk.store.file_identity import FileIdentity
from plur_desk.store.history.log import AppendResult, HistoryLog, PreparedAppend
from plur_desk.store.journal import Journal, JournalRecord, Step
from plur_desk.store.lists.entry_lookup import Located, locate, rekeyed_event
from plur_desk.store.lists.file_parts import new_file_parts, stage_new_file
from plur_desk.store.lists.known_split import KnownSplit
from plur_desk.store.lists.list_file import (
    ENGRAMS,
    TENSIONS,
    BlockCache,
    Layout,
    ListFile,
    digest_of,
)
from plur_desk.store.lists.parse_cache import (
    ParsedBlocks,
    cache_path,
    read_blocks,
    read_cache,
    tension_cache_path,
    write_blocks,
    write_cache,
)
from plur_desk.store.lists.parse_pool import IN_PROCESS_BELOW, parse_in_workers
from plur_desk.store.lists.yaml_dump import dump_engram_item, dump_tension_item
from plur_desk.store.locking.lock import ENGRAMS_POLICY, TENSIONS_POLICY, LockPolicy, current_holder, locked
from plur_desk.store.safe_open import read_regular, special_file_problem

Apply = Callable[[dict[str, object]], tuple[dict[str, object], list[dict[str, object]]]]
Fingerprint = Callable[[dict[str, object]], dict[str, object]]


@dataclass
class Edit:
    """Change one entry: `apply` gets a private copy of the on-disk value, returns the new value and its events;
    `expected` is what the reviewer saw (as `fingerprint` computes it), None skips the check."""

    key: str
    apply: Apply
    expected: dict[str, object] | None = None


@dataclass
class WriteResult:
    reloaded: bool = False  # the file had changed on disk since the last load: callers re-index everything
    changed: list[str] = field(default_factory=list)
    events: list[dict[str, object]] = field(default_factory=list)
    before: dict[str, dict[str, object]] = field(default_factory=dict)
    after: dict[str, dict[str, object]] = field(default_factory=dict)
    history: AppendResult | None = None


def find_store_problem(root: Path) -> str | None:
    if not root.exists():
        return f"{root} does not exist"
    if not root.is_dir():
        return f"{root} is not a directory"
    engrams = root / "engrams.yaml"
    problem = special_file_problem(engrams)
    if problem:
        return f"{root} cannot be opened: {problem}"
    if not engrams.exists():
        markers = ("tensions.yaml", "history")
        if any(os.path.lexists(root / name) for name in markers):
            return (
                f"{root} has no engrams.yaml (only {', '.join(n for n in markers if os.path.lexists(root / n))}); "
                "PLUR writes it with the first engram. Nothing to review here yet."
            )
        return (
            f"{root} is not a PLUR store: it has no engrams.yaml, tensions.yaml or history/ "
            "(set PLUR_PATH or pass the store directory)"
        )
    return None


class PlurStore:
    def __init__(
        self,
        root: Path,
        *,
        cache_dir: Path | None = None,
        engrams_policy: LockPolicy = ENGRAMS_POLICY,
        tensions_policy: LockPolicy = TENSIONS_POLICY,
    ) -> None:
        problem = find_store_problem(root)
        if problem:
            raise NotAPlurStore(problem)
        self.root = root.resolve()
        self.engrams_path = self.root / "engrams.yaml"
        self.tensions_path = self.root / "tensions.yaml"
        self.history = HistoryLog(self.root)
        self.journal = Journal(self.root)
        self.engrams_policy = engrams_policy
        self.tensions_policy = tensions_policy
        self._cache_file = None
        if cache_dir is not None:
            self._cache_file = cache_path(cache_dir, self.root)
        self.block_cache = BlockCache()
        self._tension_blocks: BlockCache | None = None  # tensions.yaml's valid blocks, read with the first load
        self._cache_chunks: Iterable[bytes] = []  # cache chunks not unpacked yet (parse_rest does)
        self._cache_loaded = False
        self._first_load = True  # the block cache holds only what this load parsed (no cache file, or an empty one)
        self._unchecked_split: KnownSplit | None = None  # a kept cut taken before its digest was known
        self.engrams: ListFile = ListFile(self.engrams_path, ENGRAMS, b"", None)
        self.tensions: ListFile = ListFile(self.tensions_path, TENSIONS, b"", None)

    # -- reading -------------------------------------------------------------------------------------------

    @property
    def cache_file(self) -> Path | None:  # the parse cache (None without one): derived tables are kept beside it
        return self._cache_file

    def _load_cache(self) -> None:
        if self._cache_loaded or self._cache_file is None:
            return
        self._cache_loaded = True
        self.block_cache, self._cache_chunks = read_cache(self._cache_file)
        self._first_load = not self.block_cache.entries

    def save_cache(self) -> None:
        """Persist parsed blocks of the current files (only those still present; see parse_cache)."""
        if self._cache_file is None:
            return
        if self.block_cache.dirty:
            saved = write_cache(self._cache_file, self.engrams, self.block_cache)
            if saved is not None:
                self.block_cache, self._cache_chunks = saved, []
        if self._tension_blocks is not None:
            self._tension_blocks = write_blocks(
                tension_cache_path(self._cache_file), self.tensions, self._tension_blocks
            )

    def _tension_cache(self) -> BlockCache | None:
        if self._tension_blocks is None and self._cache_file is not None:
            self._tension_blocks = read_blocks(tension_cache_path(self._cache_file))
        return self._tension_blocks

    def scan_engrams(self, check_split_later: bool = False) -> ListFile:
        """Read and split engrams.yaml without parsing entries (call parse_* on the result). `check_split_later`:
        a kept cut of a file with the same identity is taken before its digest is known (`split_confirmed`). The
        file is read while the cache is (a read releases the interpreter lock)."""
        reading = Beside(lambda: read_regular(self.engrams_path), "plur-desk-read")
        self._load_cache()
        known = self.block_cache.split
        if check_split_later and known is not None:
            self.block_cache.split = self._unchecked_split = known.unchecked()
        try:
            return ListFile.read(
                self.engrams_path,
                ENGRAMS,
                engram_problems,
                self.block_cache,
                parse=False,
                read=lambda _p: reading.result(),
            )
        finally:
            self.block_cache.split = known

    def split_confirmed(self) -> bool:
        """After `load_drafts(check_split_later=True)`: whether the kept cut it took is this file's (waits for the
        digest). When False, nothing found through it may be shown or decided on: load the drafts again."""
        unchecked, self._unchecked_split = self._unchecked_split, None
        return unchecked is None or unchecked.confirmed()

    def load(self, on_drafts: Callable[[ListFile], None] | None = None, *, drafts_first: bool = True) -> None:
        """Load everything; `on_drafts` is called once the drafts are parsed (before the rest). Without
        `drafts_first` (nobody waits for the queue: `check`), every block goes to the workers at once."""
        self.load_drafts(drafts=drafts_first)
        if on_drafts is not None:
            on_drafts(self.engrams)
        self.finish_load(self.parse_rest())

    def load_drafts(self, drafts: bool = True, check_split_later: bool = False) -> None:
        """First step of a load: the file split, the drafts parsed, tensions read. The snapshot can be written
        through at once (the write path finds any entry by id and parses what it touches); `parse_rest` and
        `finish_load` complete it. With `check_split_later`, only once `split_confirmed()` is true."""
        with gc_paused():
            engrams = self.scan_engrams(check_split_later)
            if drafts and engrams.fatal is None and engrams.regular:
                engrams.parse_entries(engrams.draft_entries())
            self.engrams = engrams
            self.tensions = ListFile.read(self.tensions_path, TENSIONS, tension_problems, self._tension_cache())

    def parse_rest(self, workers: bool = True) -> ParsedBlocks:
        """Valid parsed blocks, by digest, for what the current snapshot has not parsed: from the cache's other
        chunks, then from worker processes. Touches no state of the store, so it can run beside writes."""
        snapshot, found = self.engrams, ParsedBlocks()
        with gc_paused():
            for chunk in self._cache_chunks:
                found.update(marshal.loads(chunk))
            known = self.block_cache.entries
            data = snapshot.data
            spans = snapshot.unparsed_spans()
            if found or not self._first_load:  # else nothing known can be among them: no digests before the workers
                spans = [
                    (start, end)
                    for start, end in spans
                    if (digest := digest_of(data[start:end])) not in found and digest not in known
                ]
            if workers and len(spans) >= IN_PROCESS_BELOW:
                parse_in_workers(data, spans, snapshot.layout.item_indent, snapshot.layout.kind, found.add_parsed)
        return found

    def finish_load(self, found: ParsedBlocks) -> None:
        """Last step of a load, after `parse_rest`: whatever the snapshot is now (a write may have replaced it),
        every entry is parsed: from `found`, else here (invalid entries always are)."""
        with gc_paused():
            self.block_cache.entries.update(found)
            self._first_load = False
            self.block_cache.dirty = self.block_cache.dirty or found.parsed > 0
            self._cache_chunks = []
            self.engrams.parse_all()  # a file refused as a whole has no entries; a broken entry stops nothing

    def engrams_changed_on_disk(self) -> bool:
        try:
            return FileIdentity.of(os.stat(self.engrams_path)) != self.engrams.identity
        except FileNotFoundError:
            return self.engrams.identity is not None

    def tensions_changed_on_disk(self) -> bool:
        try:
            return FileIdentity.of(os.stat(self.tensions_path)) != self.tensions.identity
        except FileNotFoundError:
            return self.tensions.identity is not None

    def read_only_reasons(self) -> list[str]:
        reasons = []
        for snapshot in (self.engrams, self.tensions):
            if snapshot.fatal:
                where = f", line {snapshot.fatal_line}" if snapshot.fatal_line else ""
                reasons.append(f"{snapshot.path.name}{where}: {snapshot.fatal}")
        reasons += self.history.special_files()
        if not os.access(self.root, os.W_OK):
            reasons.append(f"{self.root} is not writable")
        return reasons

    def special_files(self) -> list[str]:
        """Store files that exist but are not regular files (never opened; the store is read-only)."""
        found = [special_file_problem(p) for p in (self.engrams_path, self.tensions_path)]
        return [p for p in found if p] + self.history.special_files()

    def lock_holder(self) -> str | None:
        return current_holder(self.engrams_path)

    # -- writing -------------------------------------------------------------------------------------------

    def write_engrams(
        self, edits: list[Edit], fingerprint: Fingerprint, record: JournalRecord | None = None, step: int = 0
    ) -> WriteResult:
        return self._journaled(ENGRAMS, edits, fingerprint, record, step)

    def write_tensions(
        self, edits: list[Edit], fingerprint: Fingerprint, record: JournalRecord | None = None, step: int = 0
    ) -> WriteResult:
        return self._journaled(TENSIONS, edits, fingerprint, record, step)

    def precheck_engrams(self, edits: list[Edit], fingerprint: Fingerprint) -> None:
        """Refuse early (without the lock, writing nothing) when an entry already differs from what the reviewer
        saw; the locked check in the write itself still decides."""
        fresh = self._fresh(ENGRAMS, self.engrams_path)
        by_key = fresh.by_key()
        for edit in edits:
            fresh.parse_entries(by_key.get(edit.key, []))
            value = _shown(locate(fresh, by_key, edit.key, rekey=True), edit.key)
            if edit.expected is not None and isinstance(value, dict):
                now = fingerprint(value)
                differing = [k for k in edit.expected if edit.expected[k] != now.get(k)]
                if differing:
                    raise ChangedSinceError(edit.key, differing)

    def _journaled(
        self, layout: Layout, edits: list[Edit], fingerprint: Fingerprint, record: JournalRecord | None, step: int
    ) -> WriteResult:
        """One step of an action. Without a record the step is an action of its own (journaled, then finished)."""
        own = record is None
        if record is None:
            record = self.journal.begin("write", f"change {', '.join(e.key for e in edits)}")
        path, policy = (
            (self.engrams_path, self.engrams_policy)
            if layout is ENGRAMS
            else (self.tensions_path, self.tensions_policy)
        )
        result = self._write(layout, path, policy, edits, fingerprint, record, step)
        if own:
            record.finish()
        return result

    def _current(self, layout: Layout) -> ListFile:
        return self.engrams if layout is ENGRAMS else self.tensions

    def _fresh(self, layout: Layout, path: Path) -> ListFile:
        """The file as it is now (inside the lock); reuses the snapshot when the bytes are the same. While a load is
        still parsing (the snapshot is partial), a changed file is split and only its drafts parsed, as the load
        does: the write parses the entries it touches and finds every entry by id."""
        known = self._current(layout)
        try:
            identity = FileIdentity.of(os.stat(path))
        except FileNotFoundError:
            identity = None
        partial = not known.all_parsed
        if identity is None or identity != known.identity:
            validate = engram_problems if layout is ENGRAMS else tension_problems
            cache = self.block_cache if layout is ENGRAMS else None
            fresh = ListFile.read(path, layout, validate, cache, parse=not partial)
            if partial and fresh.fatal is None and fresh.regular:
                fresh.parse_entries(fresh.draft_entries())
        else:
            fresh = known
        if not fresh.all_parsed:
            fresh.check_encoding()
        if fresh.fatal:
            raise StoreUnreadable(path, fresh.fatal, fresh.fatal_line)
        return fresh

    def _write(
        self,
        layout: Layout,
        path: Path,
        policy: LockPolicy,
        edits: list[Edit],
        fingerprint: Fingerprint,
        record: JournalRecord,
        step: int,
    ) -> WriteResult:
        """Inside the lock: re-read, check, compute; pre-flight the history append; journal; replace; append."""
        if not edits:
            return WriteResult()
        for snapshot in (self.engrams, self.tensions):
            if snapshot.fatal:
                raise ReadOnlyStore(f"the store is read-only: {snapshot.path.name}: {snapshot.fatal}")
        with locked(path, policy):
            fresh = self._fresh(layout, path)
            result = WriteResult(reloaded=fresh is not self._current(layout))
            replacements = self._apply_edits(layout, fresh, edits, fingerprint, result)
            parts = new_file_parts(fresh, replacements)  # may refuse: before the pre-flight
            prepared = self.history.prepare(result.events)  # pre-flight: raises before the first byte is written
            try:
                try:
                    staged, old_hash, new_hash = stage_new_file(path, fresh, replacements, parts)
                except OSError as exc:  # the temp file is removed: the store file and the journal are untouched
                    raise refused_by_system(f"cannot write the new {path.name}", exc) from exc
                try:
                    crash_point("store-staged")  # a temp file beside the store file, nothing journaled yet
                    self._journal_and_replace(record, step, layout, staged, old_hash, new_hash, result, prepared)
                finally:
                    staged.discard()  # when the journal step could not be saved (after the rename: nothing left)
                assert staged.data is not None
                new_file = fresh.replaced(replacements, staged.data)
                new_file._hash = new_hash
                new_file.identity = FileIdentity.of(os.stat(path))
                new_file.exists = True
                if layout is ENGRAMS:
                    self.engrams = new_file
                else:
                    self.tensions = new_file
                try:
                    result.history = prepared.commit()
                except WriteFailed as exc:
                    raise PartialWrite(
                        f"{path.name} was changed ({', '.join(result.changed)}), but its history events could not "
                        f"be appended: {exc.without_outcome()} The write-ahead journal keeps them; they "
                        "are appended when the store "
                        "is next opened for review."
                    ) from exc
                crash_point("step-done")
            finally:
                prepared.close()
        return result

    def _journal_and_replace(
        self,
        record: JournalRecord,
        step: int,
        layout: Layout,
        staged: Staged,
        old_hash: FileHash,
        new_hash: FileHash,
        result: WriteResult,
        prepared: PreparedAppend,
    ) -> None:
        """The step made exact in the journal (while the staged file's fsync runs), then, once the staged file is
        durable, renamed over the store file; if its fsync or the rename fails, this step and the later ones will
        not happen (`drop_from`: the record's one way back)."""
        record.make_exact(step, exact_step(layout, old_hash.hexdigest, new_hash.hexdigest, result, prepared.offsets))
        try:
            try:
                staged.synced()
            except OSError as exc:  # the store file and its name untouched: the step did not happen
                raise refused_by_system(f"cannot write the new {staged.target.name}", exc) from exc
            staged.commit(crash_label="store")
        except BaseException:
            if not staged.replaced:  # after the rename (its folder's fsync failed) the step happened: kept for recovery
                record.drop_from(step)
            raise

    def _apply_edits(
        self, layout: Layout, fresh: ListFile, edits: list[Edit], fingerprint: Fingerprint, result: WriteResult
    ) -> dict[int, tuple[bytes, dict[str, object]]]:
        validate = engram_problems if layout is ENGRAMS else tension_problems
        by_key = fresh.by_key()
        replacements: dict[int, tuple[bytes, dict[str, object]]] = {}
        for edit in edits:
            fresh.parse_entries(by_key.get(edit.key, []))  # during a load it may not be parsed yet
            located = locate(fresh, by_key, edit.key, rekey=layout is ENGRAMS)
            value = _shown(located, edit.key)  # a later copy of a shared id as shown: under the id 0.21 gives it
            if edit.expected is not None:
                now = fingerprint(value)
                differing = [k for k in edit.expected if edit.expected[k] != now.get(k)]
                if differing:
                    raise ChangedSinceError(edit.key, differing)
            new_value, events = edit.apply(copy_value(value))
            if new_value.get("id") != value.get("id"):
                raise ActionRefused(f"{edit.key}: a review action may not change an id")
            problems = validate(new_value)
            if problems:
                raise ActionRefused(f"{edit.key}: the change would make an entry PLUR rejects: {problems[0]}")
            block = (dump_engram_item if layout is ENGRAMS else dump_tension_item)(new_value).encode("utf-8")
            for entry in located.entries:  # exact repeats of one engram stay exact repeats
                replacements[entry.index] = (block, new_value)
            result.changed.append(edit.key)
            if located.renamed_from is not None:
                events = [rekeyed_event(located.renamed_from, edit.key, events, self.engrams_path), *events]
            result.events.extend(events)
            result.before[edit.key] = value  # a later copy as shown: its rename is not part of what an undo takes back
            result.after[edit.key] = new_value
        return replacements


def exact_step(layout: Layout, old_hash: str, new_hash: str, result: WriteResult, offsets: dict[str, int]) -> Step:
    """A write's step as the journal keeps it: the patches of what changed, its events, the file's hashes."""
    file: Literal["engrams", "tensions"] = "engrams" if layout is ENGRAMS else "tensions"
    patches = [Patch.between(file, k, result.before[k], result.after[k]) for k in result.changed]
    return Step(file, patches, copy_value(result.events), old_hash, new_hash, offsets)


def _shown(located: Located, key: str) -> dict[str, object]:
    value = located.entries[0].value
    assert isinstance(value, dict)
    return {**value, "id": key} if located.renamed_from is not None else value
