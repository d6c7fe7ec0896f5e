"""Search and the clusters of one store hold one model session and one copy of the vectors: what the clusters
embed is in search's cache, and a cache file is read once while anybody holds it."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from plur_desk.app.demo import demo_source
from plur_desk.app.review.bootstrap import open_session
from plur_desk.app.review.session import ReviewSession
from plur_desk.app.scale.review_at_scale import ScaleView
from plur_desk.app.search.store_search import SearchService
from plur_desk.domain.plur_rules.derived import content_hash
from plur_desk.index.embeddings import DIM, Embedder, VectorCache
from plur_desk.infra.clock import FixedClock

from support.blocks import rewrite_block
from support.moments import WINDOW_NOW as NOW


@pytest.fixture
def session(tmp_path: Path) -> ReviewSession:
    root = tmp_path / "store"
    shutil.copytree(demo_source(), root)
    return open_session(root, "Searcher", clock=FixedClock(NOW), use_cache=False)


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


def _field(session: ReviewSession, engram_id: str) -> str:
    engram = session.engram(engram_id)
    assert engram is not None
    return str(engram["content_hash"])


def test_search_keys_vectors_by_the_statement_not_a_stale_or_copied_content_hash(session, tmp_path) -> None:
    """The `content_hash` field is whatever the engram's writer left there: an agent that edits a statement by hand
    leaves it stale, and one engram can carry another's. Search must use the vector of the text the engram says now
    (keyed as the clusters key it: by the hash of the statement), never the vector of OTHER text cached under the
    field."""
    cache = tmp_path / "cache"
    service = SearchService(session, cache)
    ScaleView.open(session, cache).refresh()  # every active statement embedded (the fields agree, so far)
    root = session.root
    caddy, node, tabs, spaces = (f"ENG-2026-12-02-00{n}" for n in (3, 1, 5, 6))
    rewrite_block(root, caddy, "Deploys to production go through Caddy", "Use tabs for indentation in Makefiles")
    rewrite_block(root, node, _field(session, node), _field(session, spaces))
    assert session.reload_if_changed().engrams == {caddy, node}
    assert _field(session, caddy) != content_hash("Use tabs for indentation in Makefiles")  # left stale
    service.sync()
    same_text = {h.id: h.score for h in service.similar(caddy)}
    assert same_text.get(tabs, 0.0) > 0.99  # it says what `tabs` says now
    copied = {h.id: h.score for h in service.similar(node)}
    assert copied.get(spaces, 0.0) < 0.9  # the copied field names another text's vector, not this one's


def _clusters(view: ScaleView) -> list[tuple[str, list[str]]]:
    return sorted((c.representative, sorted(m.id for m in c.members)) for c in view.clusters())


def test_the_window_clusters_wait_for_the_embedding_process_instead_of_embedding_the_store_again(
    session, tmp_path, monkeypatch
) -> None:
    """With most of the store not embedded yet, the window's clusters are by word overlap and embed nothing
    themselves (the embedding process embeds the store once); the first refresh after the vectors are in gives
    exactly the embedding clusters a view that embedded everything itself gives."""
    monkeypatch.setattr("plur_desk.app.scale.review_at_scale.IN_PROCESS_MAX", 2)  # the demo store is small
    cache = tmp_path / "cache"
    service = SearchService(session, cache)
    view = ScaleView.open(session, cache, wait_for_vectors=True)
    view.refresh()
    assert view.waiting_for_vectors and view.index.mode == "lexical"
    assert not service.vectors.vectors  # nothing embedded in this process for the clusters
    assert service.embed_missing() > 0  # the embedding process, as the window starts it
    view.refresh()
    assert not view.waiting_for_vectors and view.index.mode == "embedding"
    everything = ScaleView.open(session, cache)  # embeds what is missing itself (nothing is, now)
    everything.refresh()
    assert _clusters(view) == _clusters(everything)
    drafts = [str(e["id"]) for e in session.all_engrams() if e.get("commitment") == "draft"]
    nearest = [view.index.nearest_approved.get(d) for d in drafts]
    assert nearest == [everything.index.nearest_approved.get(d) for d in drafts]
    assert any(nearest)  # by the vectors, not by word overlap
    rows = session.queue.rows()
    assert [r.risk for r in view.risk_rows(rows)] == [r.risk for r in everything.risk_rows(rows)]
