"""`check`'s reading of ids as PLUR 0.21 reads them: duplicate ids kept (the later copy renamed) and renames followed."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from plur_desk.domain.plur_rules.engram_rules import engram_problems
from plur_desk.domain.plur_rules.rekey import Renames, resolve_duplicate_ids
from plur_desk.store.history.log import MonthSummary
from plur_desk.store.lists.engram_summary import EngramRow
from plur_desk.store.lists.list_file import ENGRAMS, ListFile
from plur_desk.store.team.held import merge_held, read_held


def renames_in(months: Iterable[tuple[str, MonthSummary]]) -> Renames:
    return Renames(pair for _name, month in months for pair in month.rekeyed)


def duplicate_ids(path: Path, rows: list[EngramRow]) -> tuple[list[str], set[str]]:
    """What 0.20 and 0.21 make of ids that repeat among valid entries: a note per later copy, and the ids 0.21
    gives the renamed ones. Both versions read every copy (0.21 reads an exact repeat once), so none is invalid.
    Only the repeated entries are parsed, and only when there are some."""
    seen: dict[str, int] = {}
    repeated: set[str] = set()
    for row in rows:
        if row.valid and row.key is not None:
            if row.key in seen:
                repeated.add(row.key)
            seen[row.key] = row.line
    if not repeated:
        return [], set()
    snapshot = ListFile.read(path, ENGRAMS, engram_problems, None, parse=False)
    by_key = snapshot.by_key()
    group = [e for key in sorted(repeated) for e in by_key.get(key, [])]
    snapshot.parse_entries(group)
    group = sorted((e for e in group if e.valid and isinstance(e.value, dict)), key=snapshot.line)
    others = {row.key for row in rows if row.key is not None and row.key not in repeated}
    resolved = resolve_duplicate_ids([(str(e.key), e.value) for e in group], others)  # type: ignore[misc]
    notes, new_ids = [], set()
    for outcome in resolved:
        entry = group[outcome.index]
        line = snapshot.line(entry)
        first = min(snapshot.line(e) for e in group if e.key == entry.key)
        if outcome.exact_duplicate_of is not None:
            notes.append(
                f"engrams.yaml line {line}: {entry.key} repeats the engram at line {first} exactly; "
                "PLUR 0.21 reads it once (0.20 reads both)"
            )
        elif outcome.renamed_from is not None:
            new_ids.add(outcome.engram_id)
            notes.append(
                f"engrams.yaml line {line}: {entry.key} is also the id of a different engram (line {first}); PLUR 0.20 "
                f"reads both under that id, PLUR 0.21 keeps both and reads this one as {outcome.engram_id} (it "
                "renames it on its next write)"
            )
    return notes, new_ids


def held_engrams(root: Path, rows: list[EngramRow]) -> tuple[list[str], int]:
    """The engrams an interrupted PLUR 0.21 sync holds in .git/plur-held.json, as its readers fold them in: a note,
    and how many. Only the entries whose ids clash with a held one are parsed."""
    try:
        held = read_held(root)
    except ValueError as exc:
        return [f"{exc}; PLUR 0.21 refuses to sync until it is repaired (it holds never-pushed engrams)"], 0
    if not held:
        return [], 0
    wanted = {str(r.get("id")) for r in held if isinstance(r, dict)}
    present = [row.key for row in rows if row.key in wanted]
    current: list[dict[str, object]] = []
    if present:
        snapshot = ListFile.read(root / "engrams.yaml", ENGRAMS, engram_problems, None, parse=False)
        by_key = snapshot.by_key()
        entries = [e for key in present for e in by_key.get(key, [])]
        snapshot.parse_entries(entries)
        current = [e.value for e in entries if isinstance(e.value, dict)]
    others: list[dict[str, object]] = [{"id": row.key} for row in rows if row.key is not None and row.key not in wanted]
    merged = merge_held(current + others, held)
    if not merged.engrams:
        return [], 0
    ids = ", ".join(str(e.get("id")) for e in merged.engrams[:5]) + (", …" if len(merged.engrams) > 5 else "")
    renamed = "".join(f"; {old} is read as {new} (its id is taken)" for old, new in merged.renamed)
    note = (
        f".git/plur-held.json holds {len(merged.engrams)} scope:local engram(s) an interrupted PLUR sync set aside "
        f"({ids}{renamed}): PLUR 0.21 counts them as part of the store and puts them back on its next write"
    )
    return [note], len(merged.engrams)
