"""Adding a new record to `tensions.yaml` beside running PLURs, as PLUR's `recordTensions` does.

Under PLUR's tensions lock the file is re-read, the caller builds the record from the valid records on disk (so the
id and the "already recorded" check see every record another writer added), the record is validated against
PLUR's tension schema, appended as js-yaml would write it (every other byte stays), the file is replaced
atomically and the history events are appended before the lock is released.
"""

from __future__ import annotations

from collections.abc import Callable

from plur_desk.domain.engram_rules import tension_problems
from plur_desk.infra.errors import ActionRefused, ReadOnlyStore
from plur_desk.store.atomic import atomic_write
from plur_desk.store.list_file import TENSIONS, ListFile
from plur_desk.store.lock import locked
from plur_desk.store.plur_store import PlurStore, WriteResult
from plur_desk.store.yaml_dump import dump_tension_item, dump_tensions_document

Make = Callable[[list[dict[str, object]]], tuple[dict[str, object], list[dict[str, object]]]]


def _appended(fresh: ListFile, record: dict[str, object], block: bytes) -> bytes:
    if not fresh.exists or fresh.data == TENSIONS.empty:
        return block
    if fresh.regular:
        return fresh.data + block
    if any(not e.valid for e in fresh.entries):
        raise ActionRefused(
            "tensions.yaml is not in PLUR's own layout and holds records PLUR quarantines; adding one would rewrite "
            "them. Let PLUR rewrite the file once, or fix those records by hand."
        )
    return dump_tensions_document([e.value for e in fresh.entries] + [record]).encode("utf-8")


def append_tension(store: PlurStore, make: Make) -> WriteResult:
    """Append the record `make(valid records on disk)` returns; `make` raises ActionRefused to write nothing."""
    for snapshot in (store.engrams, store.tensions):
        if snapshot.fatal:
            raise ReadOnlyStore(f"the store is read-only: {snapshot.path.name}: {snapshot.fatal}")
    path = store.tensions_path
    with locked(path, store.tensions_policy):
        fresh = store._fresh(TENSIONS, path)
        valid = [e.value for e in fresh.entries if e.valid and isinstance(e.value, dict)]
        record, events = make(valid)
        problems = tension_problems(record)
        if problems:
            raise ActionRefused(f"the new tension would be a record PLUR rejects: {problems[0]}")
        block = dump_tension_item(record).encode("utf-8")
        atomic_write(path, _appended(fresh, record, block))
        store.tensions = ListFile.read(path, TENSIONS, tension_problems)
        key = str(record["id"])
        result = WriteResult(reloaded=True, changed=[key], events=list(events), after={key: record})
        if events:
            result.history = store.history.append(events)
    return result
