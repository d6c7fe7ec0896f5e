"""The file a write leaves, in parts (views of the old bytes between the changed entries, and the new blocks), and
its staging beside the store file with its hash: never joined into one more copy of the file (at 50,000 engrams a
join held the interpreter lock ~40 ms per write)."""

from __future__ import annotations

import contextlib
from pathlib import Path

from plur_desk.infra.errors import ActionRefused
from plur_desk.store.atomic import Beside, Staged, stage
from plur_desk.store.file_hash import FileHash, Part
from plur_desk.store.lists.list_file import ENGRAMS, ListFile
from plur_desk.store.lists.yaml_dump import dump_engrams_document, dump_tensions_document

Replacements = dict[int, tuple[bytes, dict[str, object]]]


def stage_new_file(
    path: Path, fresh: ListFile, replacements: Replacements, parts: list[Part]
) -> tuple[Staged, FileHash, FileHash]:
    """The new file staged beside the old one (written from its parts; its fsync and read-back still running, see
    `Staged.synced`), and the old and new files' hashes: the new one from the old one's state before the first
    change, from the same parts, hashed on another thread while they are written (both release the interpreter
    lock)."""
    first = min((fresh.span(fresh.entries[i])[0] for i in replacements), default=0)
    hashing = Beside(lambda: (fresh.file_hash(), FileHash.of_parts(parts, fresh.file_hash(), max(first, 0))))
    try:
        staged = stage(path, parts, read_back=True, sync_later=True)
    except BaseException:
        with contextlib.suppress(BaseException):
            hashing.result()
        raise
    try:
        old_hash, new_hash = hashing.result()
    except BaseException:
        staged.discard()
        raise
    return staged, old_hash, new_hash


def new_file_parts(snapshot: ListFile, replacements: Replacements) -> list[Part]:
    """The new file in parts, to be written one after the other: changed entries re-emitted, every other byte the
    old file's (views of its bytes, not copies)."""
    if not snapshot.regular:
        values = [replacements[e.index][1] if e.index in replacements else e.value for e in snapshot.entries]
        if any(not e.valid for e in snapshot.entries):
            raise ActionRefused(
                f"{snapshot.path.name} is not in PLUR's own layout and holds entries PLUR quarantines; rewriting it "
                "would change them. Let PLUR rewrite the file once, or fix those entries by hand."
            )
        if snapshot.layout is ENGRAMS:
            return [dump_engrams_document({"engrams": values, **snapshot.extra_top_level}).encode("utf-8")]
        return [dump_tensions_document(values).encode("utf-8")]
    data = memoryview(snapshot.data)
    parts: list[Part] = []
    pos = 0
    for index in sorted(replacements):
        start, end = snapshot.span(snapshot.entries[index])
        parts.append(data[pos:start])
        parts.append(replacements[index][0])
        pos = end
    parts.append(data[pos:])
    return parts
