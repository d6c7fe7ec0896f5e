"""A cold open (no parse cache) sends every block but the drafts to worker processes as soon as the file is split,
and the load's result is exactly an in-process parse's: an invalid entry is never hidden, and a decision taken
before the rest is collected is seen in the final snapshot. Stores are written by the real PLUR."""

from __future__ import annotations

from pathlib import Path

import pytest

from plur_desk.app import loading
from plur_desk.app.session import ReviewSession
from plur_desk.domain.engram_rules import engram_problems
from plur_desk.domain.review import Reviewer
from plur_desk.store import plur_store
from plur_desk.store.list_file import ENGRAMS, ListFile
from plur_desk.store.plur_store import PlurStore

from support.stores import copy_store, make_plur_store


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    return make_plur_store(tmp_path_factory.mktemp("early"), n=240, drafts_ratio=0.3, tensions=2)


@pytest.fixture
def store_dir(template, tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr(plur_store, "IN_PROCESS_BELOW", 20)  # workers for a small store, as for 50,000 engrams
    return copy_store(template, tmp_path / "store")


def _state(snapshot: ListFile) -> list[tuple]:
    return [
        (e.index, snapshot.line(e), snapshot.span(e), e.value, e.syntax_error, e.problems) for e in snapshot.entries
    ]


def _uncached(store_dir: Path) -> ListFile:
    return ListFile.read(store_dir / "engrams.yaml", ENGRAMS, engram_problems)


def _break_a_non_draft(store_dir: Path) -> str:
    """Make one entry that is not a draft invalid for PLUR's schema (a type PLUR does not know); returns its id."""
    fresh = _uncached(store_dir)
    drafts = {e.index for e in fresh.scan_drafts()}
    entry = next(e for e in fresh.entries if e.index not in drafts and e.valid)
    path = store_dir / "engrams.yaml"
    data = path.read_bytes()
    start, end = fresh.span(entry)
    block = data[start:end]
    at = block.index(b"\n    type: ") + len(b"\n    type: ")
    block = block[:at] + b"no-such-type" + block[block.index(b"\n", at) :]
    path.write_bytes(data[:start] + block + data[end:])
    return str(entry.key)


def test_a_cold_open_parses_the_rest_early_with_the_same_result(store_dir, tmp_path):
    broken = _break_a_non_draft(store_dir)
    store = PlurStore(store_dir, cache_dir=tmp_path / "cache")
    store.load_drafts()
    assert store._early is not None  # started at the split, before the drafts were parsed
    rest = store.parse_rest()
    assert store._early is None
    assert rest.parsed > 0
    store.finish_load(rest)
    assert _state(store.engrams) == _state(_uncached(store_dir))
    bad = [e for e in store.engrams.entries if not e.valid]
    assert [e.value["id"] for e in bad] == [broken] and bad[0].problems  # type: ignore[index]


def test_a_warm_open_starts_no_early_parse(store_dir, tmp_path):
    first = PlurStore(store_dir, cache_dir=tmp_path / "cache")
    first.load()
    first.save_cache()
    again = PlurStore(store_dir, cache_dir=tmp_path / "cache")
    again.load_drafts()
    assert again._early is None


def test_a_decision_before_the_rest_is_collected_is_in_the_final_snapshot(store_dir, tmp_path):
    store = PlurStore(store_dir, cache_dir=tmp_path / "cache")
    store.load_drafts()
    assert store._early is not None
    session = ReviewSession(store, Reviewer("Grace Tester"))
    draft = session.drafts()[0].id
    session.approve(session.seen([draft]))
    loading.finish_load(session, loading.parse_rest(session))
    assert _state(store.engrams) == _state(_uncached(store_dir))
    assert session.engram(draft)["commitment"] != "draft"  # type: ignore[index]
