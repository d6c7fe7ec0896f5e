"""The parsed-block cache file: valid blocks by content digest, in chunks, the drafts' blocks first.

Derived data in the platformdirs cache (0600, folders 0700: it holds engram text), rebuilt when in doubt. Opening
unpacks the first chunk (what the drafts queue needs); the rest are unpacked one by one later, so no single
`marshal.loads` holds the interpreter for long. The format tag includes the plur_desk version: validity is a
function of a block's bytes and of the rules of a version, and an invalid block is never cached.
"""

from __future__ import annotations

import gc
import marshal
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from plur_desk.store.atomic import atomic_write
from plur_desk.store.list_file import BlockCache, ListFile, digest_of

CACHE_FORMAT = 2
CACHE_CHUNK = 4000  # blocks per chunk: one marshal.loads of a chunk holds the interpreter for milliseconds


class ParsedBlocks(dict[bytes, object]):
    """Valid parsed blocks by digest; `parsed` counts those parsed now (not read from the cache)."""

    parsed = 0

    def add_parsed(self, pairs: list[tuple[bytes, object]]) -> None:
        self.update(pairs)
        self.parsed += len(pairs)


def cache_tag() -> str:
    from plur_desk import __version__

    return f"{CACHE_FORMAT}:{__version__}"


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


def read_cache(path: Path) -> tuple[BlockCache, list[bytes]]:
    """The first chunk unpacked, and the other chunks still packed."""
    try:
        with open(path, "rb") as handle:
            payload = marshal.loads(handle.read())  # a dict of bytes objects: cheap
        if isinstance(payload, dict) and payload.get("format") == cache_tag():
            chunks = list(payload["chunks"])
            return BlockCache(marshal.loads(chunks[0]) if chunks else {}), chunks[1:]
    except (OSError, ValueError, EOFError, TypeError, KeyError, IndexError):
        pass
    return BlockCache(), []


def write_cache(path: Path, snapshot: ListFile, cache: BlockCache) -> BlockCache | None:
    """Save the cached blocks still present in `snapshot`; returns the cache as saved (None if it could not be)."""
    cached = cache.entries
    drafts: dict[bytes, object] = {}
    rest: list[dict[bytes, object]] = [{}]
    probe, data = snapshot.layout.draft_probe, snapshot.data
    for entry in snapshot.entries:
        if entry.start >= 0 and entry.valid:
            digest = digest_of(data[entry.start : entry.end])
            if digest in cached:
                draft = data.find(probe, entry.start, entry.end + 1) != -1
                if not draft and len(rest[-1]) >= CACHE_CHUNK:
                    rest.append({})
                (drafts if draft else rest[-1])[digest] = cached[digest]
    chunks = [marshal.dumps(part) for part in (drafts, *rest) if part or part is drafts]
    try:
        _private_dirs(path.parent)
        atomic_write(path, marshal.dumps({"format": cache_tag(), "chunks": chunks}), default_mode=0o600)
        os.chmod(path, 0o600)  # it holds engram text: only its owner reads it
    except OSError:
        return None  # a cache that cannot be written is only a slower next start
    return BlockCache({**drafts, **{k: v for part in rest for k, v in part.items()}})


def _private_dirs(directory: Path) -> None:
    """Create missing folders 0700 (the cache holds engram text)."""
    missing = []
    while not directory.exists():
        missing.append(directory)
        directory = directory.parent
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
