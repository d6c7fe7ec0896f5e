"""A PLUR store directory: loading it (fast, cached, drafts first) and changing it safely beside running PLURs.

Every change is a read-modify-write under PLUR's own lock: the file is re-read inside the lock, what the reviewer
saw is compared with what is on disk (a difference refuses the write), only the changed entries are re-emitted as
js-yaml would write them, the file is replaced atomically and the history events are appended before the lock is
released. Nothing is ever written to a file that could not be fully read.
"""

from __future__ import annotations

import copy
import gc
import hashlib
import marshal
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from plur_desk.domain.engram_rules import engram_problems, tension_problems
from plur_desk.infra.errors import ActionRefused, ChangedSinceError, NotAPlurStore, ReadOnlyStore, StoreUnreadable
from plur_desk.store.atomic import atomic_write
from plur_desk.store.history import AppendResult, HistoryLog
from plur_desk.store.list_file import ENGRAMS, TENSIONS, BlockCache, Entry, FileIdentity, Layout, ListFile
from plur_desk.store.lock import ENGRAMS_POLICY, TENSIONS_POLICY, LockPolicy, current_holder, locked
from plur_desk.store.yaml_dump import dump_engram_item, dump_engrams_document, dump_tension_item, dump_tensions_document

CACHE_FORMAT = 1
Apply = Callable[[dict[str, object]], tuple[dict[str, object], list[dict[str, object]]]]
Fingerprint = Callable[[dict[str, object]], dict[str, object]]


@dataclass
class Edit:
    """Change one entry: `apply` gets a private copy of the on-disk value, returns the new value and its events.

    `expected` is what the reviewer saw (as `fingerprint` computes it); None skips the check.
    """

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
    markers = ("engrams.yaml", "tensions.yaml", "history")
    if not any((root / name).exists() for name in markers):
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
        self.engrams_policy = engrams_policy
        self.tensions_policy = tensions_policy
        self._cache_file = None
        if cache_dir is not None:
            digest = hashlib.sha256(str(self.root).encode()).hexdigest()[:16]
            self._cache_file = cache_dir / "stores" / digest / f"engram-blocks.v{CACHE_FORMAT}.marshal"
        self.block_cache = BlockCache()
        self._cache_loaded = False
        self.engrams: ListFile = ListFile(self.engrams_path, ENGRAMS, b"", None)
        self.tensions: ListFile = ListFile(self.tensions_path, TENSIONS, b"", None)

    # -- reading -------------------------------------------------------------------------------------------

    def _load_cache(self) -> None:
        if self._cache_loaded or self._cache_file is None:
            return
        self._cache_loaded = True
        try:
            with open(self._cache_file, "rb") as handle:
                payload = marshal.loads(handle.read())  # loads() of the bytes is 4x faster than load(file)
            if isinstance(payload, dict) and payload.get("format") == CACHE_FORMAT:
                self.block_cache = BlockCache(payload["blocks"])
        except (OSError, ValueError, EOFError, TypeError, KeyError):
            self.block_cache = BlockCache()  # derived data: rebuilt when in doubt

    def save_cache(self) -> None:
        """Persist parsed blocks of the current file (only those still present)."""
        if self._cache_file is None or not self.block_cache.dirty:
            return
        from plur_desk.store.list_file import digest_of

        live = {}
        for entry in self.engrams.entries:
            if entry.start >= 0 and entry.valid:
                digest = digest_of(self.engrams.block(entry))
                if digest in self.block_cache.entries:
                    live[digest] = self.block_cache.entries[digest]
        self._cache_file.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self._cache_file, marshal.dumps({"format": CACHE_FORMAT, "blocks": live}))
        self.block_cache = BlockCache(live)

    def scan_engrams(self) -> ListFile:
        """Read and split engrams.yaml without parsing entries (call parse_* on the result)."""
        self._load_cache()
        return ListFile.read(self.engrams_path, ENGRAMS, engram_problems, self.block_cache, parse=False)

    def load(self, on_drafts: Callable[[ListFile], None] | None = None) -> None:
        """Load everything; `on_drafts` is called once the drafts are parsed (before the rest)."""
        gc_was = gc.isenabled()
        gc.disable()  # millions of small objects: the collector would only slow the build down
        try:
            engrams = self.scan_engrams()
            if engrams.fatal is None and engrams.regular:
                engrams.parse_entries(engrams.draft_entries())
                if on_drafts is not None:
                    on_drafts(engrams)
                engrams.parse_all()
            self.engrams = engrams
            self.tensions = ListFile.read(self.tensions_path, TENSIONS, tension_problems)
        finally:
            if gc_was:
                gc.enable()
                gc.freeze()

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
        if not os.access(self.root, os.W_OK):
            reasons.append(f"{self.root} is not writable")
        return reasons

    def lock_holder(self) -> str | None:
        return current_holder(self.engrams_path)

    # -- writing -------------------------------------------------------------------------------------------

    def write_engrams(self, edits: list[Edit], fingerprint: Fingerprint) -> WriteResult:
        return self._write(ENGRAMS, self.engrams_path, self.engrams_policy, edits, fingerprint)

    def write_tensions(self, edits: list[Edit], fingerprint: Fingerprint) -> WriteResult:
        return self._write(TENSIONS, self.tensions_path, self.tensions_policy, edits, fingerprint)

    def _current(self, layout: Layout) -> ListFile:
        return self.engrams if layout is ENGRAMS else self.tensions

    def _fresh(self, layout: Layout, path: Path) -> ListFile:
        """The file as it is now (inside the lock), fully read; reuses the snapshot when the bytes are the same."""
        known = self._current(layout)
        try:
            identity = FileIdentity.of(os.stat(path))
        except FileNotFoundError:
            identity = None
        if identity is not None and identity == known.identity and all(e.parsed for e in known.entries):
            return known
        validate = engram_problems if layout is ENGRAMS else tension_problems
        cache = self.block_cache if layout is ENGRAMS else None
        fresh = ListFile.read(path, layout, validate, cache)
        if fresh.fatal:
            raise StoreUnreadable(path, fresh.fatal, fresh.fatal_line)
        return fresh

    def _write(
        self, layout: Layout, path: Path, policy: LockPolicy, edits: list[Edit], fingerprint: Fingerprint
    ) -> WriteResult:
        if not edits:
            return WriteResult()
        for snapshot in (self.engrams, self.tensions):
            if snapshot.fatal:
                raise ReadOnlyStore(f"the store is read-only: {snapshot.path.name}: {snapshot.fatal}")
        validate = engram_problems if layout is ENGRAMS else tension_problems
        with locked(path, policy):
            fresh = self._fresh(layout, path)
            by_key = fresh.by_key()
            result = WriteResult(reloaded=fresh is not self._current(layout))
            replacements: dict[int, tuple[bytes, dict[str, object]]] = {}
            for edit in edits:
                entry = _entry_for(by_key, edit.key, path)
                value = entry.value
                assert isinstance(value, dict)
                if edit.expected is not None:
                    now = fingerprint(value)
                    differing = [k for k in edit.expected if edit.expected[k] != now.get(k)]
                    if differing:
                        raise ChangedSinceError(edit.key, differing)
                new_value, events = edit.apply(copy.deepcopy(value))
                if new_value.get("id") != value.get("id"):
                    raise ActionRefused(f"{edit.key}: a review action may not change an id")
                problems = validate(new_value)
                if problems:
                    raise ActionRefused(f"{edit.key}: the change would make an entry PLUR rejects: {problems[0]}")
                block = (dump_engram_item if layout is ENGRAMS else dump_tension_item)(new_value).encode("utf-8")
                replacements[entry.index] = (block, new_value)
                result.changed.append(edit.key)
                result.events.extend(events)
                result.before[edit.key] = value
                result.after[edit.key] = new_value
            new_data = _spliced(fresh, replacements)
            atomic_write(path, new_data)
            new_file = _replaced_in_place(fresh, replacements, new_data)
            new_file.identity = FileIdentity.of(os.stat(path))
            new_file.exists = True
            if layout is ENGRAMS:
                self.engrams = new_file
            else:
                self.tensions = new_file
            if result.events:
                result.history = self.history.append(result.events)
        return result


def _entry_for(by_key: dict[str, list[Entry]], key: str, path: Path) -> Entry:
    found = by_key.get(key)
    if not found:
        raise ActionRefused(f"{key} is no longer in {path.name} (PLUR may have compacted it)")
    if len(found) > 1:
        lines = ", ".join(str(e.line) for e in found)
        raise ActionRefused(f"{key} appears {len(found)} times in {path.name} (lines {lines}); fix that first")
    entry = found[0]
    if entry.syntax_error:
        raise ActionRefused(f"{key} at line {entry.line} is not readable YAML: {entry.syntax_error}")
    if entry.problems:
        raise ActionRefused(
            f"{key} at line {entry.line} is an entry PLUR quarantines ({entry.problems[0]}); fix it by hand first"
        )
    return entry


def _spliced(snapshot: ListFile, replacements: dict[int, tuple[bytes, dict[str, object]]]) -> bytes:
    """The new file: changed entries re-emitted, every other byte the old file's."""
    if not snapshot.regular:
        values = [replacements[e.index][1] if e.index in replacements else e.value for e in snapshot.entries]
        if any(not e.valid for e in snapshot.entries):
            raise ActionRefused(
                f"{snapshot.path.name} is not in PLUR's own layout and holds entries PLUR quarantines; rewriting it "
                "would change them. Let PLUR rewrite the file once, or fix those entries by hand."
            )
        if snapshot.layout is ENGRAMS:
            return dump_engrams_document({"engrams": values, **snapshot.extra_top_level}).encode("utf-8")
        return dump_tensions_document(values).encode("utf-8")
    data = memoryview(snapshot.data)
    pieces: list[bytes | memoryview] = []
    pos = 0
    for index in sorted(replacements):
        entry = snapshot.entries[index]
        pieces.append(data[pos : entry.start])
        pieces.append(replacements[index][0])
        pos = entry.end
    pieces.append(data[pos:])
    return b"".join(pieces)


def _replaced_in_place(
    snapshot: ListFile, replacements: dict[int, tuple[bytes, dict[str, object]]], data: bytes
) -> ListFile:
    """Once the new file is on disk: the snapshot now describes it (offsets and lines move, values replaced)."""
    old = snapshot.data
    snapshot.data = data
    if not snapshot.regular:
        for index, (_block, value) in replacements.items():
            snapshot.entries[index].value = value
        return snapshot
    shift = line_shift = 0
    first = min(replacements)
    for entry in snapshot.entries[first:]:
        old_start, old_end = entry.start, entry.end
        entry.start += shift
        entry.line += line_shift
        if entry.index in replacements:
            block, value = replacements[entry.index]
            shift += len(block) - (old_end - old_start)
            line_shift += block.count(b"\n") - old.count(b"\n", old_start, old_end)
            entry.value, entry.parsed, entry.syntax_error, entry.problems = value, True, None, []
        entry.end = old_end + shift
    return snapshot
