"""engrams.yaml as `plur-desk check` sees it: each entry's line, id, reason (None when valid) and facts.

A block whose digest the parse cache knows is valid by construction (only valid blocks are cached, under a tag
that includes the version), so its facts come from the cache and it is not parsed; every other block is parsed:
in worker processes when there are many (they hand back the values packed, so this process never unpacks them),
else here, and an entry that is not valid is always parsed and reported here. So a cached run reports exactly
what an uncached one does. The cache is updated with what was parsed, for the window and the next run.
"""

from __future__ import annotations

import marshal
from array import array
from dataclasses import dataclass
from pathlib import Path

from plur_desk.domain.plur_rules.engram_rules import engram_problems
from plur_desk.store.file_identity import FileIdentity
from plur_desk.store.lists.entry_positions import Positions
from plur_desk.store.lists.list_file import ENGRAMS, MAX_ENTRY_BYTES, Entry, ListFile, digest_of
from plur_desk.store.lists.parse_cache import (
    CACHE_CHUNK,
    MAX_CHUNKS,
    CacheFile,
    Facts,
    cache_tag,
    engram_facts,
    read_file,
    read_private,
    write_file,
    write_private,
)
from plur_desk.store.lists.parse_pool import IN_PROCESS_BELOW, parse_in_workers
from plur_desk.store.safe_open import read_regular

_EMPTY = marshal.dumps({})
SPLIT_FILE = "engrams-split.marshal"


@dataclass(frozen=True)
class EngramRow:
    line: int
    key: str | None  # the id when it is a string (as Entry.key)
    reason: str | None  # why PLUR would quarantine it (None when valid)
    valid: bool
    facts: Facts | None  # None when the value is not a mapping
    index: int = -1  # the entry's place in the file (`entry_value` parses it again)
    digest: bytes | None = None  # its block's digest (None: too big to be cached)


@dataclass
class EngramScan:
    """engrams.yaml for `check`: why PLUR would refuse the whole file (if it would), and one row per entry."""

    regular: bool
    fatal: str | None
    fatal_line: int | None
    rows: list[EngramRow]
    snapshot: ListFile | None = None  # the file as split (unparsed), for `entry_value`

    def entry_value(self, row: EngramRow) -> object:
        """The value of a row's entry, parsed from the file's bytes (None when this scan kept no split file)."""
        if self.snapshot is None:
            return None
        entry = Entry(row.index)
        self.snapshot.parse_entries([entry])
        return entry.value


def summarize_engrams(path: Path, cache_file: Path | None, *, workers: bool = True) -> EngramScan:
    """One row per entry, in file order (see the module's docstring)."""
    if cache_file is None:
        return _scan(path, None, CacheFile(), workers)
    stored = read_file(cache_file, values=False)
    same = _unchanged(path, cache_file.with_name(SPLIT_FILE), stored.facts)
    return same if same is not None else _scan(path, cache_file, stored, workers)


def _row(entry: Entry, line: int, digest: bytes | None) -> EngramRow:
    reason = entry.syntax_error or ("; ".join(entry.problems) if entry.problems else None)
    return EngramRow(line, entry.key, reason, entry.valid, engram_facts(entry.value), entry.index, digest)


def _cached_row(line: int, facts: Facts, index: int, digest: bytes) -> EngramRow:
    return EngramRow(line, facts[0] if isinstance(facts[0], str) else None, None, True, facts, index, digest)


def _scan(path: Path, cache_file: Path | None, stored: CacheFile, workers: bool) -> EngramScan:
    snapshot = ListFile.read(path, ENGRAMS, engram_problems, None, parse=False)
    known = stored.facts
    data = snapshot.data
    spans = snapshot.positions.spans() if snapshot.positions is not None else [(-1, -1)] * len(snapshot.entries)
    lines = [snapshot.line(e) for e in snapshot.entries]
    digests = [
        digest_of(data[start:end]) if not e.parsed and start >= 0 and end - start <= MAX_ENTRY_BYTES else None
        for e, (start, end) in zip(snapshot.entries, spans, strict=True)
    ]
    before = len(known)
    packed: list[tuple[bytes, bytes]] = []
    new = [span for span, d in zip(spans, digests, strict=True) if d is not None and d not in known]
    if workers and len(new) >= IN_PROCESS_BELOW:

        def sink(result: tuple[list[tuple[bytes, Facts]], bytes, bytes]) -> None:
            known.update(result[0])
            packed.append((result[1], result[2]))

        parse_in_workers(data, new, ENGRAMS.item_indent, ENGRAMS.kind, sink, packed=True)
    added = len(known) - before
    rows, values = [], {}
    for entry, digest, line in zip(snapshot.entries, digests, lines, strict=True):
        facts = known.get(digest) if digest is not None else None
        if facts is not None:
            rows.append(_cached_row(line, facts, entry.index, digest))  # type: ignore[arg-type]  # (facts: a digest)
            continue
        snapshot.parse_entries([entry])  # the first broken entry in file order makes the file fatal, as a load does
        if entry.valid and digest is not None:
            values[digest] = entry.value
            known[digest] = engram_facts(entry.value)  # type: ignore[assignment]  # a valid engram is a mapping
        rows.append(_row(entry, line, digest))
    if cache_file is not None:
        _update_cache(cache_file, stored, before, added, snapshot, digests, packed, values)
        if snapshot.regular and snapshot.entries:
            _save_split(cache_file.with_name(SPLIT_FILE), snapshot, digests)
    return EngramScan(snapshot.regular, snapshot.fatal, snapshot.fatal_line, rows, snapshot)


def _split_tag() -> str:
    return f"split-1:{cache_tag()}"


def _save_split(path: Path, snapshot: ListFile, digests: list[bytes | None]) -> None:
    """Where each block of this file starts, its line and digest, under the digest of the whole file."""
    whole = digest_of(snapshot.data)
    if whole in read_private(path, _split_tag()):
        return
    assert snapshot.positions is not None  # only a regular file is saved split
    starts = array("Q", snapshot.positions.starts())
    lines = array("Q", snapshot.positions.lines())
    blob = b"".join(d if d is not None else bytes(16) for d in digests)
    write_private(path, _split_tag(), {whole: (starts.tobytes(), lines.tobytes(), blob)})


def _unchanged(path: Path, split_file: Path, known: dict[bytes, Facts]) -> EngramScan | None:
    """When engrams.yaml is byte for byte the file an earlier run split (the same digest of the whole file), the
    places, lines and digests of its blocks are that run's; a block the cache knows is valid gives its facts, and
    every other block is parsed again, here. None when the file is not the same (the caller splits it)."""
    try:
        data, st = read_regular(path)
    except OSError:
        return None
    record = read_private(split_file, _split_tag()).get(digest_of(data))
    if not isinstance(record, tuple):
        return None
    starts, lines = array("Q"), array("Q")
    starts.frombytes(record[0])
    lines.frombytes(record[1])
    blob: bytes = record[2]
    snapshot = ListFile(path, ENGRAMS, data, FileIdentity.of(st))
    snapshot._validate = engram_problems  # type: ignore[attr-defined]  # as ListFile.read sets them
    snapshot._cache = None  # type: ignore[attr-defined]
    snapshot.positions = Positions.of(starts, lines, len(data))
    rows = []
    count = len(starts)
    for index in range(count):
        start = starts[index]
        end = starts[index + 1] if index + 1 < count else len(data)
        digest = blob[16 * index : 16 * index + 16] if end - start <= MAX_ENTRY_BYTES else None
        facts = known.get(digest) if digest is not None else None
        if facts is not None:
            rows.append(_cached_row(lines[index], facts, index, digest))  # type: ignore[arg-type]
            continue
        entry = Entry(index)
        snapshot.parse_entries([entry])
        rows.append(_row(entry, lines[index], digest))
    return EngramScan(True, snapshot.fatal, snapshot.fatal_line, rows, snapshot)


def _update_cache(
    path: Path,
    stored: CacheFile,
    before: int,
    added: int,
    snapshot: ListFile,
    digests: list[bytes | None],
    packed: list[tuple[bytes, bytes]],
    values: dict[bytes, object],
) -> None:
    """Keep the facts of blocks still in the file and add what was parsed as new chunks (the workers' values stay
    packed). When chunks pile up or hold many blocks no longer in the file, unpack once and write them again."""
    facts = {d: f for d in digests if d is not None and (f := stored.facts.get(d)) is not None}
    if not added and not values and len(facts) == before:
        return  # nothing new, nothing gone
    stored = read_file(path)  # now with its chunks
    drafts = stored.chunks[: stored.drafts] + [d for d, _r in packed if d != _EMPTY]
    rest = stored.chunks[stored.drafts :] + [r for _d, r in packed if r != _EMPTY]
    here = _by_kind(snapshot, digests, values)
    drafts += [marshal.dumps(here[0])] if here[0] else []
    rest += [marshal.dumps(part) for part in here[1:] if part]
    blocks = stored.blocks + added + len(values)
    if blocks - len(facts) > max(1000, len(facts) // 4) or len(drafts) + len(rest) > MAX_CHUNKS:
        everything: dict[bytes, object] = {}
        for chunk in drafts + rest:
            everything.update(marshal.loads(chunk))
        parts = _by_kind(snapshot, digests, everything)
        drafts, rest, blocks = [marshal.dumps(parts[0])], [marshal.dumps(p) for p in parts[1:] if p], len(facts)
    write_file(path, CacheFile(drafts + rest, len(drafts), facts, blocks))


def _by_kind(snapshot: ListFile, digests: list[bytes | None], values: dict[bytes, object]) -> list[dict[bytes, object]]:
    """The values of blocks in the file: the drafts' first, then the others in chunks, in file order."""
    probe, data = ENGRAMS.draft_probe, snapshot.data
    parts: list[dict[bytes, object]] = [{}, {}]
    for entry, digest in zip(snapshot.entries, digests, strict=True):
        if digest is None or digest not in values:
            continue
        start, end = snapshot.span(entry)
        if data.find(probe, start, end + 1) != -1:
            parts[0][digest] = values[digest]
        else:
            if len(parts[-1]) >= CACHE_CHUNK:
                parts.append({})
            parts[-1][digest] = values[digest]
    return parts
