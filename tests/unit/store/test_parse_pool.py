"""The worker pool returns exactly the valid blocks an in-process parse finds, in chunks, while its task frames are
made one at a time and its results wait in a short queue; a reader that fails stops the workers (none is left
waiting on a full pipe)."""

from __future__ import annotations

import contextlib
import os
import sys

import pytest

from plur_desk.domain.plur_rules.engram_rules import engram_problems
from plur_desk.store.lists import parse_pool
from plur_desk.store.lists.list_file import digest_of
from plur_desk.store.lists.yaml_dump import dump_engrams_document
from plur_desk.store.lists.yaml_load import parse_item


def _store_bytes(n: int) -> tuple[bytes, list[tuple[int, int]]]:
    engrams = [
        {
            "id": f"ENG-2026-01-01-{i:04d}",
            "status": "active",
            "type": "behavioral",
            "scope": "global",
            "statement": f"Statement number {i}",
            "created_at": "2026-01-01T00:00:00.000Z",
        }
        for i in range(n)
    ]
    data = dump_engrams_document({"engrams": engrams}).encode()
    data = data.replace(b"id: ENG-2026-01-01-0007\n", b"id: ENG-2026-01-01-0007\n    status: [broken\n", 1)
    starts = [i for i in range(len(data)) if data.startswith(b"  - ", i) and data[i - 1 : i] == b"\n"]
    return data, list(zip(starts, [*starts[1:], len(data)], strict=True))


def test_workers_return_what_an_in_process_parse_finds_valid(monkeypatch) -> None:
    monkeypatch.setattr(parse_pool, "CHUNK_BLOCKS", 50)  # many frames per worker, more than the queue holds
    data, spans = _store_bytes(600)
    got: dict[bytes, object] = {}
    assert parse_pool.parse_in_workers(data, spans, 2, "engrams", lambda pairs: got.update(pairs))
    expected = {}
    for start, end in spans:
        raw = data[start:end]
        try:
            value = parse_item(raw.decode(), 2)
        except Exception:
            continue
        if not engram_problems(value, dates=True):
            expected[digest_of(raw)] = value
    assert len(expected) == 599  # the broken block is not returned
    assert got == expected


def test_a_failing_reader_stops_the_workers(monkeypatch) -> None:
    monkeypatch.setattr(parse_pool, "CHUNK_BLOCKS", 20)
    started = []
    start_worker = parse_pool._start_worker

    def tracked():  # type: ignore[no-untyped-def]
        started.append(start_worker())
        return started[-1]

    monkeypatch.setattr(parse_pool, "_start_worker", tracked)
    data, spans = _store_bytes(400)

    def failing(_pairs: object) -> None:
        raise RuntimeError("reader failed")

    with pytest.raises(RuntimeError, match="reader failed"):
        parse_pool.parse_in_workers(data, spans, 2, "engrams", failing)
    assert started
    for proc in started:
        assert proc.wait(timeout=30) is not None  # ended (killed), not waiting on a full pipe


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="process priorities are a POSIX notion")
def test_a_window_s_parse_workers_run_below_it_and_a_command_s_do_not():
    """The window's workers must never take a core from the window's thread: started inside a job of a window
    (its `Pacing.workers_below`) they run that many nice steps below the process that starts them; outside a job
    (the command line) at its priority."""
    from plur_desk.infra.jobs import Job, Pacing, running

    mine = os.getpriority(os.PRIO_PROCESS, 0)
    if mine > 19 - 3:
        pytest.skip("this process already runs at the lowest priority")
    seen = []
    for job in (None, Job(Pacing(workers_below=0)), Job(Pacing(workers_below=3))):
        with running(job) if job is not None else contextlib.nullcontext():
            seen.append(_started_worker_nice() - mine)
    assert seen == [0, 0, 3]


def _started_worker_nice() -> int:
    """The nice value a parse worker started here runs at (the worker is ended at once)."""
    proc = parse_pool._start_worker()
    try:
        return os.getpriority(os.PRIO_PROCESS, proc.pid)
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.skipif(sys.platform != "linux", reason="a thread's own nice value is Linux's")
def test_a_window_s_parse_workers_started_from_a_lowered_job_thread_run_below_the_window_not_below_that_thread():
    """A job's thread runs below the window's (`lower_this_thread`); the parse workers it starts still run
    `workers_below` steps below the window's thread, not that many below its own."""
    import threading

    from plur_desk.infra.jobs import Job, Pacing, running
    from plur_desk.infra.workers import lower_this_thread

    mine = os.getpriority(os.PRIO_PROCESS, 0)
    if mine > 19 - 8:
        pytest.skip("this process already runs too low")
    seen: list[int] = []

    def in_a_job_thread() -> None:
        lower_this_thread(5)
        with running(Job(Pacing(workers_below=3))):
            seen.append(_started_worker_nice() - mine)

    thread = threading.Thread(target=in_a_job_thread)
    thread.start()
    thread.join(60)
    assert seen == [3]
