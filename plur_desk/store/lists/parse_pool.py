"""Parsing engram blocks in worker processes, so the GUI process's interpreter lock stays free for the window.

A worker (`python -m plur_desk.store.lists.parse_pool`) parses and validates blocks exactly as
`ListFile.parse_entries` does (same parser, same validator) and returns only the blocks that are valid, by
content digest, as marshal bytes per chunk of a few thousand blocks (each `marshal.loads` holds the lock for
milliseconds, not for the whole store). The caller puts them in the block cache and lets `parse_entries` take
them from there; anything a worker did not return (an invalid entry, a worker that failed or could not start)
is parsed in the calling process, so the result is the same as a single-process parse by construction and an
invalid entry can never be hidden.

Workers are plain child processes speaking length-prefixed marshal frames on their stdin and stdout: unlike
multiprocessing's spawn, nothing re-imports the parent's main script, and nothing forks a process running Qt
threads.
"""

from __future__ import annotations

import marshal
import os
import queue
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from typing import IO, Any

from plur_desk.infra.jobs import workers_below
from plur_desk.infra.workers import lower_worker, worker_command

CHUNK_BLOCKS = 2000
IN_PROCESS_BELOW = 3000  # blocks: below this, starting worker processes costs more than it saves
Span = tuple[int, int]
_HEADER = struct.Struct("<Q")


def worker_count() -> int:
    return max(1, min(os.cpu_count() or 1, 4))


def _valid_blocks(chunk: bytes, spans: list[Span], indent: int, kind: str) -> Iterator[tuple[bytes, bytes, object]]:
    """(block bytes, digest, value) of the blocks of `chunk` (at `spans`) that parse and are valid."""
    from plur_desk.domain.plur_rules.engram_rules import engram_problems, tension_problems
    from plur_desk.store.lists.list_file import digest_of, may_hold_dates
    from plur_desk.store.lists.shared_values import share_nested
    from plur_desk.store.lists.yaml_load import parse_item

    validate = engram_problems if kind == "engrams" else tension_problems
    shared: dict[bytes, object] = {}  # what this chunk's blocks repeat: one object each, kept as one by marshal
    for start, end in spans:
        raw = chunk[start:end]
        try:
            value = share_nested(parse_item(raw.decode("utf-8"), indent), shared)
            problems = validate(value, dates=may_hold_dates(raw))
        except Exception:
            continue
        if not problems:
            yield raw, digest_of(raw), value


def parse_chunk(chunk: bytes, spans: list[Span], indent: int, kind: str) -> bytes:
    """marshal bytes of [(digest, value)] for the blocks of `chunk` (at `spans`) that parse and are valid."""
    return marshal.dumps([(digest, value) for _raw, digest, value in _valid_blocks(chunk, spans, indent, kind)])


def pack_chunk(chunk: bytes, spans: list[Span], indent: int, kind: str) -> bytes:
    """For a caller that only stores the values (`check`): marshal bytes of ([(digest, facts)], the drafts'
    {digest: value} packed, the others' {digest: value} packed), so the values are never unpacked on its side."""
    from plur_desk.store.lists.list_file import ENGRAMS
    from plur_desk.store.lists.parse_cache import engram_facts

    facts = []
    drafts: dict[bytes, object] = {}
    rest: dict[bytes, object] = {}
    for raw, digest, value in _valid_blocks(chunk, spans, indent, kind):
        facts.append((digest, engram_facts(value)))
        (drafts if ENGRAMS.draft_probe in raw else rest)[digest] = value
    return marshal.dumps((facts, marshal.dumps(drafts), marshal.dumps(rest)))


def _frames(data: bytes, groups: list[list[Span]], indent: int, kind: str, packed: bool) -> Iterator[bytes]:
    """One task frame per group of spans, made when the worker is fed it."""
    for group in groups:
        base = group[0][0]
        yield marshal.dumps((indent, kind, data[base : group[-1][1]], [(s - base, e - base) for s, e in group], packed))


def _write_frame(stream: IO[bytes], payload: bytes) -> None:
    stream.write(_HEADER.pack(len(payload)))
    stream.write(payload)


def _read_frame(stream: IO[bytes]) -> bytes | None:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    payload = stream.read(size)
    return payload if len(payload) == size else None


def _feed(proc: subprocess.Popen[bytes], tasks: Iterator[bytes]) -> None:
    assert proc.stdin is not None
    try:
        for task in tasks:
            _write_frame(proc.stdin, task)
        proc.stdin.close()
    except OSError:
        pass  # the worker died: its missing results are parsed in-process


def _drain(proc: subprocess.Popen[bytes], expected: int, results: queue.Queue[bytes | None]) -> None:
    assert proc.stdout is not None
    for _ in range(expected):
        frame = _read_frame(proc.stdout)
        if frame is None:
            break
        results.put(frame)
    results.put(None)


def _start_worker() -> subprocess.Popen[bytes]:
    argv, env = worker_command("plur_desk.store.lists.parse_pool")
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
    )
    lower_worker(proc.pid, workers_below())
    return proc


def parse_in_workers(
    data: bytes,
    spans: list[Span],
    indent: int,
    kind: str,
    sink: Callable[[Any], None],
    *,
    packed: bool = False,
) -> bool:
    """Parse the blocks at `spans` (sorted, non-overlapping) in worker processes; each chunk's valid results go
    to `sink` as they arrive: `parse_chunk`'s list, or with `packed` `pack_chunk`'s triple. Returns False if the
    workers could not be used (the caller parses in-process)."""
    if not spans:
        return True
    if getattr(sys, "frozen", False):
        return False  # a frozen build has no `python -m`; one process parses
    workers = worker_count()
    size = max(200, min(CHUNK_BLOCKS, -(-len(spans) // (workers * 2))))
    groups = [spans[first : first + size] for first in range(0, len(spans), size)]
    # Frames are made as each worker takes them and results wait in a short queue: neither a marshalled copy
    # of the whole file nor a backlog of unread results is alive beside the values being built (cold peak).
    results: queue.Queue[bytes | None] = queue.Queue(maxsize=2 * workers)
    procs, threads = [], []
    try:
        for index in range(min(workers, len(groups))):
            proc = _start_worker()
            mine = groups[index::workers]
            procs.append(proc)
            threads += [
                threading.Thread(target=_feed, args=(proc, _frames(data, mine, indent, kind, packed)), daemon=True),
                threading.Thread(target=_drain, args=(proc, len(mine), results), daemon=True),
            ]
    except OSError:
        for proc in procs:
            proc.kill()
        return False
    for thread in threads:
        thread.start()
    finished = 0
    try:
        while finished < len(procs):
            frame = results.get()
            if frame is None:
                finished += 1
            else:
                sink(marshal.loads(frame))
    except BaseException:
        for proc in procs:  # nobody reads their results any more: they would wait on a full pipe for ever
            proc.kill()
        raise
    for proc in procs:
        proc.wait()
    return all(proc.returncode == 0 for proc in procs)


def _serve(source: IO[bytes], sink: IO[bytes]) -> None:
    import gc

    gc.disable()  # a short-lived process building many small objects: the collector only slows it down
    while (frame := _read_frame(source)) is not None:
        indent, kind, chunk, spans, packed = marshal.loads(frame)
        _write_frame(sink, (pack_chunk if packed else parse_chunk)(chunk, spans, indent, kind))
        sink.flush()


if __name__ == "__main__":
    _serve(sys.stdin.buffer, sys.stdout.buffer)
