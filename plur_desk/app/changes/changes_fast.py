"""`plur-desk changes` as fast as `plur-desk check`: the watched values of each engram come from a table kept beside
the parse cache, keyed by the digest of the engram's block, so a warm run unpacks no engram at all.

engrams.yaml is split and digested as `check` does it (store/lists/engram_summary.py: the facts of every known block,
the bytes of every other one parsed and validated); a block the table does not know yet is parsed from the file's
bytes and added. Detection then reads only the engrams that moved (parsed again from their bytes, for their sources
and attribution). Anything `changes_on_disk` would read differently takes that path instead: a file PLUR would
refuse or quarantine an entry of, a repeated id (PLUR 0.21 renames it), records held by an interrupted 0.21 sync,
a special file in history, a store this user cannot write.
"""

from __future__ import annotations

import marshal
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from plur_desk.app.changes.baseline_read import BaselineRead, read_baseline
from plur_desk.app.changes.watch import changes_on_disk
from plur_desk.domain.agents.agent_changes import AgentChange, Values, detect, engram_values
from plur_desk.domain.agents.baseline_renames import follow_renames
from plur_desk.domain.plur_rules.engram_rules import tension_problems
from plur_desk.infra.memory import gc_paused
from plur_desk.infra.paths import cache_dir
from plur_desk.store import baseline as baseline_file
from plur_desk.store.history.log import HistoryLog
from plur_desk.store.lists.engram_summary import EngramRow, EngramScan, summarize_engrams
from plur_desk.store.lists.list_file import TENSIONS, ListFile
from plur_desk.store.lists.parse_cache import cache_path, cache_tag, read_file, read_private, write_private
from plur_desk.store.recovery import rename_trail
from plur_desk.store.team.held import read_held

Record = Mapping[str, object]


def _tag() -> str:
    return f"watched-values-1:{cache_tag()}"


def watched_table(cache_file: Path) -> Path:
    return cache_file.with_name("watched-values.marshal")


class _Parsed(Mapping[str, Record]):
    """The store's valid engrams by id, each parsed from the file's bytes only when asked for."""

    def __init__(self, scan: EngramScan, rows: dict[str, EngramRow]) -> None:
        self.scan, self.rows = scan, rows
        self.memo: dict[str, Record] = {}

    def __getitem__(self, ident: str) -> Record:
        value = self.memo.get(ident)
        if value is None:
            parsed = self.scan.entry_value(self.rows[ident])
            if not isinstance(parsed, dict):
                raise KeyError(ident)
            value = self.memo[ident] = parsed
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __contains__(self, ident: object) -> bool:
        return ident in self.rows


def changes_fast(root: Path, *, use_cache: bool = True) -> tuple[BaselineRead, list[AgentChange]]:
    """What `changes_on_disk(open_store(root))` finds, writing only derived tables in the user's cache."""
    root = root.resolve()
    cache = cache_path(cache_dir(), root) if use_cache else None
    found = _fast(root, cache) if cache is not None else None
    if found is not None:
        return found
    from plur_desk.app.review.bootstrap import open_store

    return changes_on_disk(open_store(root, use_cache=use_cache))


def _fast(root: Path, cache: Path) -> tuple[BaselineRead, list[AgentChange]] | None:
    from plur_desk.app.trust.verifier import TrustChecker

    log = HistoryLog(root)
    if not _plain_store(root, log):
        return None
    with gc_paused():
        scan = summarize_engrams(root / "engrams.yaml", cache)
        tensions_file = ListFile.read(root / "tensions.yaml", TENSIONS, tension_problems)
    if not scan.regular or scan.fatal or not tensions_file.regular or tensions_file.fatal:
        return None
    rows: dict[str, EngramRow] = {}
    for row in scan.rows:
        if not row.valid or row.key is None or row.key in rows:
            return None  # quarantined, or an id PLUR 0.21 renames: the whole load reads it as PLUR does
        rows[row.key] = row
    tensions: dict[str, Record] = {}
    for entry in tensions_file.entries:
        key = entry.key
        if not entry.valid or key is None or key in tensions or not isinstance(entry.value, dict):
            return None
        tensions[key] = entry.value
    trust = TrustChecker(root)
    read = read_baseline(root, trust, cache)
    if not read.baseline.watched:
        return read, []
    parsed = _Parsed(scan, rows)
    values = _values(cache, scan, parsed)
    if values is None:
        return None

    # PLUR 0.21's renames followed as the whole load follows them (app/changes/watch.py)
    baseline = follow_renames(read.baseline, parsed, lambda: rename_trail(root))
    months = [m for m in log.month_files() if m.stem >= str(baseline.started)[:7]]
    events: dict[str, list[dict[str, object]]] = {}

    def prefetch(wanted: set[str]) -> None:
        events.update(baseline_file.events_naming(months, wanted) if wanted else {})

    def human(event: object) -> bool:
        return isinstance(event, dict) and trust(event).counts_as_human

    found = detect(baseline, parsed, tensions, lambda i: events.get(i, []), human, prefetch, values)
    return read, found


def _plain_store(root: Path, log: HistoryLog) -> bool:
    """No history file that is not a regular file, a store this user can write, no records held by a sync."""
    if log.special_files() or not os.access(root, os.W_OK):
        return False
    try:
        return not read_held(root)
    except ValueError:
        return False


UNPACK_OVER = 200  # blocks the table lacks: above this the parse cache's chunks are unpacked instead of parsing each


def _values(cache: Path, scan: EngramScan, parsed: _Parsed) -> dict[str, Values] | None:
    """Every engram's watched values: from the table by block digest; the blocks it lacks taken from the parse
    cache when there are many (its first run on a store, after the window or check cached every block), else parsed
    from the file's bytes; then added. The table keeps only blocks still in the file, so it never outgrows it."""
    path = watched_table(cache)
    table = read_private(path, _tag())
    values: dict[str, Values] = {}
    kept: dict[bytes, object] = {}
    missing: list[tuple[str, bytes | None]] = []
    for ident, row in parsed.rows.items():
        digest = row.digest
        known = table.get(digest) if digest is not None else None
        if isinstance(known, tuple) and known[0] == ident:
            values[ident] = known[1]
            kept[digest] = known  # type: ignore[index]  # (known: a digest)
        else:
            missing.append((ident, digest))
    if len(missing) > UNPACK_OVER:
        _from_parse_cache(cache, missing, parsed)
    for ident, digest in missing:
        try:
            values[ident] = engram_values(parsed[ident])
        except KeyError:
            return None
        if digest is not None:
            kept[digest] = (ident, values[ident])
    if missing or len(kept) != len(table):
        write_private(path, _tag(), kept)
    return {i: values[i] for i in parsed.rows} if missing else values  # in file order, as a whole load lists them


def _from_parse_cache(cache: Path, missing: list[tuple[str, bytes | None]], parsed: _Parsed) -> None:
    """The values of the missing blocks the parse cache holds, unpacked chunk by chunk (valid by construction)."""
    wanted = {d: i for i, d in missing if d is not None}
    for chunk in read_file(cache).chunks:
        try:
            blocks = marshal.loads(chunk)
        except (ValueError, EOFError, TypeError):
            continue
        for digest in wanted.keys() & blocks.keys():
            value = blocks[digest]
            if isinstance(value, dict) and value.get("id") == wanted[digest]:
                parsed.memo[wanted[digest]] = value
