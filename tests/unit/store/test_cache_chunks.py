"""The parse cache's later chunks are read from the file one at a time as they are unpacked (not all of them held
at once), and only from the file whose header was read."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

from plur_desk.store.lists.parse_cache import RestChunks

CHUNK = 1 << 20


def _file(tmp_path: Path, count: int) -> tuple[Path, list[bytes]]:
    chunks = [bytes([n]) * CHUNK for n in range(count)]
    path = tmp_path / "cache.marshal"
    path.write_bytes(b"HEAD" + b"".join(chunks))
    return path, chunks


def test_chunks_are_read_one_at_a_time(tmp_path: Path) -> None:
    path, chunks = _file(tmp_path, 12)
    rest = RestChunks(path, os.stat(path), 4, [CHUNK] * len(chunks))
    tracemalloc.start()
    try:
        seen = [chunk[:1] for chunk in rest]  # each chunk dropped once looked at, as parse_rest does
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert seen == [chunk[:1] for chunk in chunks]
    assert peak < 3 * CHUNK  # not the 12 MiB of them at once


def test_a_replaced_or_short_file_gives_no_chunk_it_does_not_hold(tmp_path: Path) -> None:
    path, chunks = _file(tmp_path, 3)
    stat = os.stat(path)
    assert list(RestChunks(path, stat, 4, [CHUNK] * 3)) == chunks
    assert list(RestChunks(path, stat, 4, [CHUNK] * 4)) == chunks  # the file ends: no fourth chunk, none cut short
    path.write_bytes(path.read_bytes())  # the same bytes, another file: nothing (its header was not read)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    assert list(RestChunks(path, stat, 4, [CHUNK] * 3)) == []
