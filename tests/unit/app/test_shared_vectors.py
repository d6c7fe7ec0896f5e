"""Search and the clusters of one store hold one model session and one copy of the vectors: what the clusters
embed is in search's cache, and a cache file is read once while anybody holds it."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from plur_desk.app.demo import demo_source
from plur_desk.app.scale import ScaleView
from plur_desk.app.search import SearchService
from plur_desk.app.session import ReviewSession
from plur_desk.domain.derived import content_hash
from plur_desk.domain.review import Reviewer
from plur_desk.index.embeddings import DIM, Embedder, VectorCache
from plur_desk.infra.clock import FixedClock
from plur_desk.store.plur_store import PlurStore

NOW = datetime(2026, 12, 2, 15, 0, tzinfo=UTC)


@pytest.fixture
def session(tmp_path: Path) -> ReviewSession:
    root = tmp_path / "store"
    shutil.copytree(demo_source(), root)
    store = PlurStore(root)
    store.load()
    session = ReviewSession(store, Reviewer("Searcher"), FixedClock(NOW))
    session.load_history()
    return session


def test_search_and_clusters_share_the_model_session_and_the_vectors(session, tmp_path) -> None:
    cache = tmp_path / "cache"
    service = SearchService(session, cache)
    scale = ScaleView.open(session, cache)
    embedder = service.embedder()
    assert embedder is not None, "the embedding model is part of the test installation"
    assert Embedder.load() is embedder  # one ONNX session in the process
    assert scale.index.mode == "embedding"
    assert scale.index.cache is service.vectors  # one copy of the vectors
    assert not service.vectors.vectors
    scale.refresh()  # the clusters embed every active statement, through the shared cache
    active = [e for e in session.all_engrams() if e.get("status") == "active"]
    assert active
    assert all(content_hash(str(e["statement"])) in service.vectors.vectors for e in active)
    engram = next(e for e in active if e.get("content_hash") == content_hash(str(e["statement"])))
    assert service.similar(str(engram["id"]))  # search uses what the clusters computed
    assert (next(iter(service.vectors.path.parent.glob("vectors-*.npz")))).is_file()  # saved once, for both


def test_a_cache_file_is_open_once_while_anybody_holds_it(tmp_path) -> None:
    path = tmp_path / "vectors.npz"
    first, second = VectorCache.open(path), VectorCache.open(path)
    assert first is second
    vector = np.ones((1, DIM), dtype=np.float32) / np.sqrt(DIM)
    first.add(["h1"], vector)
    first.save()
    del first, second
    again = VectorCache.open(path)  # nobody held the old one: the file is read afresh
    assert not again.dirty
    assert np.allclose(again.vectors["h1"], vector[0], atol=1e-3)
    assert VectorCache.open(None) is not VectorCache.open(None)  # private caches are never shared
