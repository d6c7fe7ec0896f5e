"""The parsed-block cache file: valid blocks by content digest, in chunks, the drafts' blocks first, and beside them
the few facts `plur-desk check` needs of each valid block.

Derived data in the platformdirs cache (0600, folders 0700: it holds engram text), rebuilt when in doubt. Opening
unpacks the leading drafts chunks (what the drafts queue needs); the rest are unpacked one by one later, so no single
`marshal.loads` holds the interpreter for long. `check` unpacks no chunk at all: it reads the facts (id, status,
commitment, review record) of the blocks whose digest is known, which is tens of bytes per engram. The format tag
includes the plur_desk version: validity is a function of a block's bytes and of the rules of a version, and an
invalid block is never cached (neither its value nor its facts).
"""

from __future__ import annotations

import marshal
import os
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from plur_desk.infra.paths import store_cache_dir
from plur_desk.store.atomic import atomic_write
from plur_desk.store.file_identity import FileIdentity
from plur_desk.store.lists.known_split import KnownSplit
from plur_desk.store.lists.list_file import BlockCache, ListFile, digest_of

CACHE_FORMAT = 7  # 4: the facts in pieces; 5: PLUR 0.21's pinned_priority rule (a cached block is valid); 6: a
# reviewed engram's facts hold the engram (its review is checked); 7: 0.21's pinned_tier and sources[].validated_by rules
# blocks per chunk: one marshal.loads (or dumps) of a chunk holds the interpreter in one piece, ~5 ms for 1,000.
# While the rest of a warm store is unpacked behind the first draft, the window's thread takes the interpreter back
# after each of its calls into Qt, each time waiting for the chunk being unpacked: with 4,000 blocks (12-25 ms a
# chunk) building one hidden pane took 320-380 ms of the window's thread.
CACHE_CHUNK = 1000
FACTS_CHUNK = 10000  # facts per piece of the header
MAX_CHUNKS = 512  # `check` appends a chunk per run that parsed something; beyond this the file is compacted

# (id, status, commitment, the engram when it has a review record, else None) of a valid engram: all `check` reads
# of it (a review record stands only on the engram's content and values, domain/decision.py)
Facts = tuple[object, str, str, "dict[str, object] | None"]


def engram_facts(value: object) -> Facts | None:
    """What `check` counts and cross-checks in an engram's value (None for a value that is not a mapping)."""
    if not isinstance(value, dict):
        return None
    review = value.get("review")
    return (
        value.get("id"),
        str(value.get("status", "(none)")),
        str(value.get("commitment", "(none)")),
        value if isinstance(review, dict) else None,
    )


class ParsedBlocks(dict[bytes, object]):
    """Valid parsed blocks by digest; `parsed` counts those parsed now (not read from the cache)."""

    parsed = 0

    def add_parsed(self, pairs: list[tuple[bytes, object]]) -> None:
        self.update(pairs)
        self.parsed += len(pairs)


@dataclass
class CacheFile:
    """The cache file as stored: packed chunks (the first `drafts` of them hold drafts), every block's facts, and
    how the window last split the file (so reopening the same bytes skips the split and the scan for drafts)."""

    chunks: list[bytes] = field(default_factory=list)
    drafts: int = 0
    facts: dict[bytes, Facts] = field(default_factory=dict)
    blocks: int = 0  # values held in the chunks (some may be of blocks no longer in the file)
    split: KnownSplit | None = None


def _pack_split(split: KnownSplit | None) -> tuple[object, ...] | None:
    if split is None:
        return None
    i = split.identity
    return (
        i.size,
        i.mtime_ns,
        i.inode,
        split.sha256,
        split.starts.tobytes(),
        split.lines.tobytes(),
        split.drafts.tobytes(),
    )


def _unpack_split(packed: object) -> KnownSplit | None:
    if not (isinstance(packed, tuple) and len(packed) == 7):
        return None
    size, mtime_ns, inode, sha256, *arrays = packed
    if not isinstance(sha256, str):
        return None  # kept by an earlier version with a CRC-32: split afresh
    starts, lines, drafts = array("q"), array("q"), array("q")
    for target, raw in zip((starts, lines, drafts), arrays, strict=True):
        target.frombytes(raw)
    if len(starts) != len(lines) or any(not 0 <= d < len(starts) for d in drafts):
        return None
    return KnownSplit(FileIdentity(size, mtime_ns, inode), sha256, starts, lines, drafts)


class RestChunks:
    """The cache's chunks after the drafts', read from the file only when iterated (off the launch path), and only
    if the file is still the one whose header was read (else nothing: the blocks are parsed instead)."""

    def __init__(self, path: Path, stat: os.stat_result | None = None, offset: int = 0, sizes: list[int] | None = None):
        self._path, self._offset, self._sizes = path, offset, sizes or []
        self._identity = FileIdentity.of(stat) if stat is not None else None

    def __bool__(self) -> bool:
        return bool(self._sizes)

    def __iter__(self) -> Iterator[bytes]:
        """Each chunk read as it is asked for: one chunk in memory at a time, not the ~30 MB of them at 50,000
        engrams held (and sliced) while they are unpacked."""
        if not self._sizes:
            return
        try:
            with open(self._path, "rb") as handle:
                if FileIdentity.of(os.fstat(handle.fileno())) != self._identity:
                    return
                handle.seek(self._offset)
                for size in self._sizes:
                    chunk = handle.read(size)
                    if len(chunk) != size:
                        return
                    yield chunk
        except OSError:
            return


def cache_tag() -> str:
    from plur_desk import __version__

    return f"{CACHE_FORMAT}:{__version__}"


def cache_path(cache_dir: Path, root: Path) -> Path:
    """The cache file of the store at `root` (resolved) under the platformdirs cache folder."""
    return store_cache_dir(cache_dir, root) / f"engram-blocks.v{CACHE_FORMAT}.marshal"


def read_file(path: Path, *, values: bool = True) -> CacheFile:
    """The cache file, chunks still packed (an unreadable or outdated file reads as empty). The file is a header
    (the tag, the facts, the chunk sizes) then the chunks: without `values` only the header is read."""
    try:
        with open(path, "rb") as handle:
            header = marshal.load(handle)  # reads the header only, not the chunks after it
            if not (isinstance(header, dict) and header.get("format") == cache_tag()):
                return CacheFile()
            chunks: list[bytes] = []
            if values:
                body, pos = handle.read(), 0
                for size in header["sizes"]:
                    chunks.append(body[pos : pos + size])
                    pos += size
                if pos != len(body):
                    return CacheFile()
            facts: dict[bytes, Facts] = {}
            for part in header["facts"]:
                facts.update(marshal.loads(part))
            return CacheFile(chunks, header["drafts"], facts, header["blocks"], _unpack_split(header.get("split")))
    except (OSError, ValueError, EOFError, TypeError, KeyError, IndexError):
        pass
    return CacheFile()


def read_cache(path: Path) -> tuple[BlockCache, RestChunks]:
    """For the window: the drafts' chunks unpacked and the known split; the other chunks are left in the file
    (`RestChunks`), and neither they nor the facts are read now."""
    try:
        with open(path, "rb") as handle:
            header = marshal.load(handle)
            if not (isinstance(header, dict) and header.get("format") == cache_tag()):
                return BlockCache(), RestChunks(path)
            sizes: list[int] = header["sizes"]
            drafts = header["drafts"]
            head = handle.read(sum(sizes[:drafts]))
            offset, stat = handle.tell(), os.fstat(handle.fileno())
        if len(head) != sum(sizes[:drafts]) or stat.st_size != offset + sum(sizes[drafts:]):
            return BlockCache(), RestChunks(path)
        cache: dict[bytes, object] = {}
        pos = 0
        for size in sizes[:drafts]:
            cache.update(marshal.loads(head[pos : pos + size]))
            pos += size
        return BlockCache(cache, _unpack_split(header.get("split"))), RestChunks(path, stat, offset, sizes[drafts:])
    except (OSError, ValueError, EOFError, TypeError, KeyError, IndexError):
        return BlockCache(), RestChunks(path)


def _pack_facts(facts: dict[bytes, Facts]) -> list[bytes]:
    """The facts in pieces of FACTS_CHUNK: one marshal.dumps of 50,000 of them holds the interpreter ~35 ms."""
    items = list(facts.items())
    return [marshal.dumps(dict(items[i : i + FACTS_CHUNK])) for i in range(0, len(items), FACTS_CHUNK)]


def write_file(path: Path, cache: CacheFile) -> bool:
    try:
        _private_dirs(path.parent)
        header = {
            "format": cache_tag(),
            "facts": _pack_facts(cache.facts),
            "drafts": cache.drafts,
            "blocks": cache.blocks,
            "sizes": [len(chunk) for chunk in cache.chunks],
            "split": _pack_split(cache.split),
        }
        atomic_write(path, [marshal.dumps(header), *cache.chunks], default_mode=0o600)  # not joined: no copy
        os.chmod(path, 0o600)  # it holds engram text: only its owner reads it
    except (OSError, ValueError):
        return False  # a cache that cannot be written is only a slower next start
    return True


def split_of(snapshot: ListFile) -> KnownSplit | None:
    """How `snapshot` (a regular file as read or written) is cut, to keep with the cache."""
    positions = snapshot.positions
    if snapshot.identity is None or snapshot.fatal is not None or positions is None or not snapshot.entries:
        return None
    return KnownSplit(
        snapshot.identity,
        snapshot.sha256(),
        positions.starts(),
        positions.lines(),
        array("q", (e.index for e in snapshot.scan_drafts())),
    )


def write_cache(path: Path, snapshot: ListFile, cache: BlockCache) -> BlockCache | None:
    """Save the cached blocks still present in `snapshot`; returns the cache as saved (None if it could not be)."""
    cached = cache.entries
    # both kinds in chunks of CACHE_CHUNK: one marshal.dumps of 10,000 drafts held the interpreter ~50 ms, a stall
    # of the window when the cache is saved behind it
    drafts: list[dict[bytes, object]] = [{}]
    rest: list[dict[bytes, object]] = [{}]
    facts: dict[bytes, Facts] = {}
    probe, data = snapshot.layout.draft_probe, snapshot.data
    positions = snapshot.positions  # None in an irregular file: no blocks to cache
    for entry, (start, end) in zip(snapshot.entries, positions.spans(), strict=True) if positions is not None else ():
        if entry.valid:
            digest = digest_of(data[start:end])
            if digest in cached:
                parts = drafts if data.find(probe, start, end + 1) != -1 else rest
                if len(parts[-1]) >= CACHE_CHUNK:
                    parts.append({})
                value = cached[digest]
                parts[-1][digest] = value
                facts[digest] = engram_facts(value)  # type: ignore[assignment]  # a valid engram is a mapping
    draft_chunks = [marshal.dumps(part) for part in drafts if part] or [marshal.dumps({})]
    chunks = draft_chunks + [marshal.dumps(part) for part in rest if part]
    split = split_of(snapshot)
    if not write_file(path, CacheFile(chunks, len(draft_chunks), facts, len(facts), split)):
        return None
    return BlockCache({k: v for part in (*drafts, *rest) for k, v in part.items()}, split)


def tension_cache_path(cache_file: Path) -> Path:
    """Beside the engram blocks: tensions.yaml's valid blocks by digest (read at every open, a few hundred KiB)."""
    return cache_file.with_name(f"tension-blocks.v{CACHE_FORMAT}.marshal")


def read_blocks(path: Path) -> BlockCache:
    """Valid parsed blocks by digest from a table written by `write_blocks` (empty when missing or outdated)."""
    cache = BlockCache(read_private(path, f"blocks:{cache_tag()}"))
    cache.saved = frozenset(cache.entries)
    return cache


def write_blocks(path: Path, snapshot: ListFile, held: BlockCache) -> BlockCache:
    """Keep the valid blocks of `snapshot` (a file in PLUR's own layout) when they differ from those `held`;
    returns the cache as it now stands. Only valid entries are kept, as in the engram cache: a value read from it
    is never validated again, and validity is a function of the block's bytes. Compared with what the file holds
    (`saved`), not with `held`'s entries: reading the file put every block it parsed into `held`."""
    table: dict[bytes, object] = {}
    if snapshot.positions is not None and snapshot.fatal is None:
        for entry, (start, end) in zip(snapshot.entries, snapshot.positions.spans(), strict=True):
            if entry.valid:
                table[digest_of(snapshot.data[start:end])] = entry.value
    if table.keys() == held.saved:
        return held
    written = BlockCache(table)
    if write_private(path, f"blocks:{cache_tag()}", table):
        written.saved = frozenset(table)
    return written


def read_private(path: Path, tag: str) -> dict[bytes, object]:
    """Another derived table kept beside the block cache (a dict by digest), empty when missing or outdated."""
    try:
        with open(path, "rb") as handle:
            payload = marshal.loads(handle.read())
        if isinstance(payload, dict) and payload.get("format") == tag and isinstance(payload.get("table"), dict):
            table: dict[bytes, object] = payload["table"]
            return table
    except (OSError, ValueError, EOFError, TypeError):
        pass
    return {}


def write_private(path: Path, tag: str, table: dict[bytes, object]) -> bool:
    """Whether the table was written (a derived table: a failure only means it is computed again)."""
    try:
        _private_dirs(path.parent)
        atomic_write(path, marshal.dumps({"format": tag, "table": table}), default_mode=0o600)
        os.chmod(path, 0o600)
    except (OSError, ValueError):
        return False
    return True


def _private_dirs(directory: Path) -> None:
    """Create missing folders 0700 (the cache holds engram text)."""
    missing = []
    while not directory.exists():
        missing.append(directory)
        directory = directory.parent
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
