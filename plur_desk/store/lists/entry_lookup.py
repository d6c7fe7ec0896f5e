"""Which entries of a list file a decision on an id changes, a repeated id read as PLUR 0.21 reads it (domain/rekey).

An id two different engrams share is the first copy's; a later copy is addressed by the id 0.21 gives it
(`<id>-D<8 hex>`), and deciding on it writes that id onto it (0.21's own rename, with its `engram_rekeyed` event), so
the id stays what the reviewer saw whatever the decision changes in the hash, 0.20 reads it as a separate engram and
0.21 finds nothing left to rename. Exact repeats (0.21 reads them once, 0.20 reads each) are changed together, so
they stay exact repeats and 0.21 never sees a changed one as a new engram.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from plur_desk.domain.plur_rules.rekey import resolve_duplicate_ids
from plur_desk.infra.errors import ActionRefused
from plur_desk.store.lists.list_file import Entry, ListFile

_LATER_COPY = re.compile(r"(?P<base>.+)-D[0-9a-f]{8}(?:-\d+)?\Z")


@dataclass(frozen=True)
class Located:
    """The entries one decision changes (all with the same content), and the shared id they leave when renamed."""

    entries: list[Entry]
    renamed_from: str | None = None


def _checked(snapshot: ListFile, key: str, entry: Entry) -> Entry:
    line = snapshot.line(entry)
    if entry.syntax_error:
        raise ActionRefused(f"{key} at line {line} is not readable YAML: {entry.syntax_error}")
    if entry.problems:
        raise ActionRefused(
            f"{key} at line {line} is an entry PLUR quarantines ({entry.problems[0]}); fix it by hand first"
        )
    return entry


def _resolved(snapshot: ListFile, by_key: dict[str, list[Entry]], base: str, key: str) -> Located | None:
    """The copies of `base` that 0.21 reads as `key` (the kept one and its exact repeats)."""
    group = by_key.get(base, [])
    snapshot.parse_entries(group)
    group = sorted(group, key=snapshot.line)
    for entry in group:
        _checked(snapshot, base, entry)
    resolved = resolve_duplicate_ids(
        [(base, e.value) for e in group],  # type: ignore[misc]  # checked valid: a dict
        set(by_key) - {base},
    )
    kept = next((r for r in resolved if r.engram_id == key and r.exact_duplicate_of is None), None)
    if kept is None:
        return None
    copies = [group[r.index] for r in resolved if r.index == kept.index or r.exact_duplicate_of == kept.index]
    return Located(copies, kept.renamed_from)


def locate(snapshot: ListFile, by_key: dict[str, list[Entry]], key: str, *, rekey: bool) -> Located:
    """The entries a decision on `key` changes, or a clear refusal. `rekey`: 0.21's rule applies (engrams only)."""
    found, name = by_key.get(key), snapshot.path.name
    if found and len(found) == 1:
        return Located([_checked(snapshot, key, found[0])])
    if found and not rekey:
        lines = ", ".join(str(snapshot.line(e)) for e in found)
        raise ActionRefused(f"{key} appears {len(found)} times in {name} (lines {lines}); fix that first")
    if not rekey:
        raise ActionRefused(f"{key} is no longer in {name} (PLUR may have compacted it)")
    if found:
        located = _resolved(snapshot, by_key, key, key)
    else:
        match = _LATER_COPY.match(key)
        base = match.group("base") if match is not None else None
        located = _resolved(snapshot, by_key, base, key) if base and len(by_key.get(base, [])) > 1 else None
    if located is None:
        raise ActionRefused(f"{key} is no longer in {name} (PLUR may have compacted it)")
    return located


def rekeyed_event(old: str, new: str, events: list[dict[str, object]], store: Path) -> dict[str, object]:
    """0.21's `engram_rekeyed` event for the rename a decision writes, stamped as the decision is (no actor: the
    rename is PLUR's rule, not the reviewer's decision)."""
    stamp = events[0].get("timestamp") if events else None
    return {
        "event": "engram_rekeyed",
        "engram_id": new,
        "timestamp": stamp,
        "data": {"from": old, "to": new, "store": str(store)},
        "reason": "duplicate id: a later, different copy was given a fresh id (P1)",
    }
