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

import gc
import hashlib
import marshal
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from plur_desk.store.atomic import atomic_write
from plur_desk.store.list_file import BlockCache, ListFile, digest_of

CACHE_FORMAT = 3
CACHE_CHUNK = 4000  # blocks per chunk: one marshal.loads of a chunk holds the interpreter for milliseconds
MAX_CHUNKS = 96  # `check` appends a chunk per run that parsed something; beyond this the file is compacted

# (id, status, commitment, review record or None) of a valid engram: all `check` reads of it
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
        review if isinstance(review, dict) else None,
    )


class ParsedBlocks(dict[bytes, object]):
    """Valid parsed blocks by digest; `parsed` counts those parsed now (not read from the cache)."""

    parsed = 0

    def add_parsed(self, pairs: list[tuple[bytes, object]]) -> None:
        self.update(pairs)
        self.parsed += len(pairs)


@dataclass
class CacheFile:
    """The cache file as stored: packed chunks (the first `drafts` of them hold drafts) and every block's facts."""

    chunks: list[bytes] = field(default_factory=list)
    drafts: int = 0
    facts: dict[bytes, Facts] = field(default_factory=dict)
    blocks: int = 0  # values held in the chunks (some may be of blocks no longer in the file)


def cache_tag() -> str:
    from plur_desk import __version__

    return f"{CACHE_FORMAT}:{__version__}"


def cache_path(cache_dir: Path, root: Path) -> Path:
    """The cache file of the store at `root` (resolved) under the platformdirs cache folder."""
    digest = hashlib.sha256(str(root).encode()).hexdigest()[:16]
    return cache_dir / "stores" / digest / f"engram-blocks.v{CACHE_FORMAT}.marshal"


@contextmanager
def gc_paused() -> Iterator[None]:
    """Millions of small objects: the collector would only slow the build down (frozen afterwards)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
            gc.freeze()


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
            facts = marshal.loads(header["facts"])
            return CacheFile(chunks, header["drafts"], facts, header["blocks"])
    except (OSError, ValueError, EOFError, TypeError, KeyError, IndexError):
        pass
    return CacheFile()


def read_cache(path: Path) -> tuple[BlockCache, list[bytes]]:
    """The drafts' chunks unpacked, and the other chunks still packed."""
    found = read_file(path)
    cache: dict[bytes, object] = {}
    for chunk in found.chunks[: found.drafts]:
        cache.update(marshal.loads(chunk))
    return BlockCache(cache), found.chunks[found.drafts :]


def write_file(path: Path, cache: CacheFile) -> bool:
    try:
        _private_dirs(path.parent)
        header = {
            "format": cache_tag(),
            "facts": marshal.dumps(cache.facts),
            "drafts": cache.drafts,
            "blocks": cache.blocks,
            "sizes": [len(chunk) for chunk in cache.chunks],
        }
        atomic_write(path, b"".join([marshal.dumps(header), *cache.chunks]), default_mode=0o600)
        os.chmod(path, 0o600)  # it holds engram text: only its owner reads it
    except (OSError, ValueError):
        return False  # a cache that cannot be written is only a slower next start
    return True


def write_cache(path: Path, snapshot: ListFile, cache: BlockCache) -> BlockCache | None:
    """Save the cached blocks still present in `snapshot`; returns the cache as saved (None if it could not be)."""
    cached = cache.entries
    drafts: dict[bytes, object] = {}
    rest: list[dict[bytes, object]] = [{}]
    facts: dict[bytes, Facts] = {}
    probe, data = snapshot.layout.draft_probe, snapshot.data
    positions = snapshot.positions  # None in an irregular file: no blocks to cache
    for entry, (start, end) in zip(snapshot.entries, positions.spans(), strict=True) if positions is not None else ():
        if entry.valid:
            digest = digest_of(data[start:end])
            if digest in cached:
                draft = data.find(probe, start, end + 1) != -1
                if not draft and len(rest[-1]) >= CACHE_CHUNK:
                    rest.append({})
                value = cached[digest]
                (drafts if draft else rest[-1])[digest] = value
                facts[digest] = engram_facts(value)  # type: ignore[assignment]  # a valid engram is a mapping
    chunks = [marshal.dumps(part) for part in (drafts, *rest) if part or part is drafts]
    if not write_file(path, CacheFile(chunks, 1, facts, len(facts))):
        return None
    return BlockCache({**drafts, **{k: v for part in rest for k, v in part.items()}})


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


def write_private(path: Path, tag: str, table: dict[bytes, object]) -> None:
    try:
        _private_dirs(path.parent)
        atomic_write(path, marshal.dumps({"format": tag, "table": table}), default_mode=0o600)
        os.chmod(path, 0o600)
    except (OSError, ValueError):
        pass


def _private_dirs(directory: Path) -> None:
    """Create missing folders 0700 (the cache holds engram text)."""
    missing = []
    while not directory.exists():
        missing.append(directory)
        directory = directory.parent
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
