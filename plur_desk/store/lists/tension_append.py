"""Adding a new record to `tensions.yaml` beside running PLURs, as PLUR's `recordTensions` does.

Under PLUR's tensions lock the file is re-read, the caller builds the record from the valid records on disk (so the
id and the "already recorded" check see every record another writer added), the record is validated against
PLUR's tension schema and appended as js-yaml would write it (every other byte stays). As every write here: the
history append is pre-flighted, the step is journaled (the new record as a patch from nothing), the file replaced
atomically, the events appended, and only then the journal record finished; a crash in between is completed by
recovery when the store is next opened.
"""

from __future__ import annotations

from collections.abc import Callable

from plur_desk.domain.plur_rules.engram_rules import tension_problems
from plur_desk.infra.errors import ActionRefused, PartialWrite, ReadOnlyStore, WriteFailed
from plur_desk.store.atomic import atomic_write
from plur_desk.store.file_hash import FileHash
from plur_desk.store.journal import JournalRecord
from plur_desk.store.lists.list_file import TENSIONS, ListFile
from plur_desk.store.lists.yaml_dump import dump_tension_item, dump_tensions_document
from plur_desk.store.locking.lock import locked
from plur_desk.store.plur_store import PlurStore, WriteResult, exact_step

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


def append_tension(store: PlurStore, make: Make, label: str = "record a tension") -> WriteResult:
    """Append the record `make(valid records on disk)` returns; `make` raises ActionRefused to write nothing."""
    for snapshot in (store.engrams, store.tensions):
        if snapshot.fatal:
            raise ReadOnlyStore(f"the store is read-only: {snapshot.path.name}: {snapshot.fatal}")
    path = store.tensions_path
    journal = store.journal.begin("record_tension", label)
    try:
        result = _append_locked(store, make, journal)
    except PartialWrite:
        raise  # the journal record stays: recovery appends the events when the store is next opened
    except BaseException:
        journal.drop_from(0)  # nothing was written
        raise
    journal.finish()
    store.tensions = ListFile.read(path, TENSIONS, tension_problems)
    return result


def _append_locked(store: PlurStore, make: Make, journal: JournalRecord) -> WriteResult:
    path = store.tensions_path
    with locked(path, store.tensions_policy):
        fresh = store._fresh(TENSIONS, path)
        valid = [e.value for e in fresh.entries if e.valid and isinstance(e.value, dict)]
        record, events = make(valid)
        problems = tension_problems(record)
        if problems:
            raise ActionRefused(f"the new tension would be a record PLUR rejects: {problems[0]}")
        new_data = _appended(fresh, record, dump_tension_item(record).encode("utf-8"))
        key = str(record["id"])
        result = WriteResult(reloaded=True, changed=[key], events=list(events), before={key: {}}, after={key: record})
        prepared = store.history.prepare(result.events)  # pre-flight: raises before the first byte is written
        try:
            appended = fresh.exists and fresh.regular and fresh.data != TENSIONS.empty  # as _appended decides
            new_hash = FileHash.of(new_data, fresh.file_hash(), len(fresh.data) if appended else 0).hexdigest
            journal.make_exact(0, exact_step(TENSIONS, fresh.sha256(), new_hash, result, prepared.offsets))
            atomic_write(path, new_data, crash_label="store")
            try:
                result.history = prepared.commit()
            except WriteFailed as exc:
                raise PartialWrite(
                    f"tensions.yaml gained {key}, but its history event could not be appended: "
                    f"{exc.without_outcome()} The write-ahead journal keeps it; it is appended when "
                    "the store is next opened for review."
                ) from exc
        finally:
            prepared.close()
    return result
