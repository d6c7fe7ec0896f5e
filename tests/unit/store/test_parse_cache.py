"""The parse cache as the window saves it: drafts and the other blocks in bounded chunks, the facts `check` reads in
bounded pieces (no single marshal call over a whole store), and a warm open that gives exactly what a fresh parse
gives. The store is written by the real PLUR."""

from __future__ import annotations

import marshal
from pathlib import Path

import pytest

from plur_desk.domain.plur_rules.engram_rules import engram_problems
from plur_desk.store.lists import parse_cache
from plur_desk.store.lists.list_file import ENGRAMS, ListFile, digest_of
from plur_desk.store.lists.parse_cache import cache_path, engram_facts, read_file
from plur_desk.store.plur_store import PlurStore

from support.stores import copy_store, make_plur_store


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    return make_plur_store(tmp_path_factory.mktemp("chunks"), n=240, drafts_ratio=0.3, tensions=3)


def test_drafts_and_facts_are_saved_in_bounded_pieces_and_read_back_whole(template, tmp_path, monkeypatch):
    monkeypatch.setattr(parse_cache, "CACHE_CHUNK", 16)
    monkeypatch.setattr(parse_cache, "FACTS_CHUNK", 25)
    store_dir, cache = copy_store(template, tmp_path / "store"), tmp_path / "cache"
    first = PlurStore(store_dir, cache_dir=cache)
    first.load()
    first.save_cache()

    fresh = ListFile.read(store_dir / "engrams.yaml", ENGRAMS, engram_problems)
    drafts = fresh.scan_drafts()
    assert len(drafts) > 3 * 16  # enough drafts for several chunks
    saved = read_file(cache_path(cache, first.root))
    assert saved.drafts == -(-len(drafts) // 16)  # the drafts' chunks, each at most 16 blocks
    assert all(len(marshal.loads(chunk)) <= 16 for chunk in saved.chunks)
    header_facts = saved.facts
    expected = {}
    for entry, (start, end) in zip(fresh.entries, fresh.positions.spans(), strict=True):
        if entry.valid:
            expected[digest_of(fresh.data[start:end])] = engram_facts(entry.value)
    assert header_facts == expected  # every valid block's facts, from several pieces

    warm = PlurStore(store_dir, cache_dir=cache)
    warm.load_drafts()
    assert all(e.parsed for e in warm.engrams.draft_entries())
    assert sorted(e.index for e in warm.engrams.draft_entries()) == sorted(e.index for e in drafts)
    rest = warm.parse_rest(workers=False)
    assert rest.parsed == 0  # every block came from the cache, none parsed again
    warm.finish_load(rest)
    assert [(e.index, e.value, e.problems) for e in warm.engrams.entries] == [
        (e.index, e.value, e.problems) for e in fresh.entries
    ]
