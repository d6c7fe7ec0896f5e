"""Reopening a store reads tensions.yaml's valid blocks from the parse cache instead of parsing them again, and
never shows a stale or invalid one as current: the cache is keyed by each block's bytes, so any change, even one
that keeps the size, the inode and the modification time, is parsed afresh, and an invalid block is never kept.
Stores are written by the real PLUR."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plur_desk.domain.plur_rules.engram_rules import tension_problems
from plur_desk.store.lists import list_file
from plur_desk.store.lists.list_file import TENSIONS, ListFile
from plur_desk.store.lists.parse_cache import cache_path, tension_cache_path
from plur_desk.store.plur_store import PlurStore

from support.stores import copy_store, make_plur_store


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    return make_plur_store(tmp_path_factory.mktemp("tensions"), n=40, drafts_ratio=0.3, tensions=4)


@pytest.fixture
def store_dir(template, tmp_path) -> Path:
    return copy_store(template, tmp_path / "store")


def _uncached(store_dir: Path) -> ListFile:
    return ListFile.read(store_dir / "tensions.yaml", TENSIONS, tension_problems)


def _state(snapshot: ListFile) -> list[tuple]:
    return [(snapshot.line(e), snapshot.span(e), e.value, e.syntax_error, e.problems) for e in snapshot.entries]


def _warm(store_dir: Path, cache: Path) -> PlurStore:
    first = PlurStore(store_dir, cache_dir=cache)
    first.load()
    first.save_cache()
    return PlurStore(store_dir, cache_dir=cache)


def _rewrite_in_place(path: Path, old: bytes, new: bytes) -> None:
    """Replace bytes of the same length without changing the inode, the size or the modification time."""
    before = os.stat(path)
    data = path.read_bytes()
    assert len(old) == len(new) and old in data
    with open(path, "r+b") as handle:
        handle.write(data.replace(old, new, 1))  # the first tension's
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)


def test_reopening_takes_the_tensions_from_the_cache_with_the_same_result(store_dir, tmp_path, monkeypatch):
    store = _warm(store_dir, tmp_path / "cache")
    parsed: list[str] = []
    real_parse = list_file.parse_item
    monkeypatch.setattr(list_file, "parse_item", lambda text, indent: parsed.append(text) or real_parse(text, indent))
    store.load_drafts()
    assert not [text for text in parsed if text.startswith("- ")]  # no tension block parsed: all from the file
    cached = store._tension_cache()
    assert cached is not None and len(cached.entries) == len(store.tensions.entries) == 4
    held = {id(v) for v in cached.entries.values()}
    assert all(id(e.value) in held for e in store.tensions.entries)  # none parsed again
    assert _state(store.tensions) == _state(_uncached(store_dir))


def test_a_tension_changed_in_place_is_read_afresh(store_dir, tmp_path):
    store = _warm(store_dir, tmp_path / "cache")
    path = store_dir / "tensions.yaml"
    first = _uncached(store_dir).entries[0].value
    assert isinstance(first, dict)
    _rewrite_in_place(path, f"reason: {first['reason']}".encode(), b"reason: " + b"X" * len(first["reason"]))

    store.load_drafts()
    assert _state(store.tensions) == _state(_uncached(store_dir))
    assert store.tensions.entries[0].value["reason"] == "X" * len(first["reason"])


def test_an_invalid_tension_is_never_kept_and_stays_invalid(store_dir, tmp_path):
    cache = tmp_path / "cache"
    path = store_dir / "tensions.yaml"
    value = _uncached(store_dir).entries[1].value
    assert isinstance(value, dict)
    text = path.read_bytes()
    at = text.index(b"confidence: ", text.index(f"id: {value['id']}".encode()))
    end = text.index(b"\n", at)
    path.write_bytes(text[:at] + b"confidence: 7" + text[end:])  # PLUR's schema wants 0..1

    store = _warm(store_dir, cache)
    store.load_drafts()
    bad = store.tensions.entries[1]
    assert not bad.valid and any("confidence" in p for p in bad.problems)
    assert all(v.get("id") != value["id"] for v in store._tension_cache().entries.values())  # type: ignore[union-attr]
    assert _state(store.tensions) == _state(_uncached(store_dir))


def test_a_cache_from_another_store_state_is_only_a_slower_start(store_dir, tmp_path):
    """Blocks no longer in the file are dropped from the cache when it is saved again."""
    cache = tmp_path / "cache"
    store = _warm(store_dir, cache)
    store.load_drafts()
    path = store_dir / "tensions.yaml"
    data = path.read_bytes()
    second = data.index(b"\n- ") + 1
    path.write_bytes(data[second:])  # the first tension gone
    store.load_drafts()
    store.save_cache()
    again = PlurStore(store_dir, cache_dir=cache)
    again.load_drafts()
    assert len(again._tension_cache().entries) == 3  # type: ignore[union-attr]
    assert _state(again.tensions) == _state(_uncached(store_dir))


def test_the_table_is_written_when_its_blocks_change_and_only_then(store_dir, tmp_path):
    cache = tmp_path / "cache"
    store = _warm(store_dir, cache)
    table = tension_cache_path(cache_path(cache, store.root))
    written = table.stat().st_mtime_ns, table.stat().st_ino
    store.load()
    store.save_cache()
    assert (table.stat().st_mtime_ns, table.stat().st_ino) == written  # the same blocks: not written again
    path = store_dir / "tensions.yaml"
    data = path.read_bytes()
    path.write_bytes(data[data.index(b"\n- ") + 1 :])
    store.load()
    store.save_cache()
    assert (table.stat().st_mtime_ns, table.stat().st_ino) != written
    assert len(PlurStore(store_dir, cache_dir=cache)._tension_cache().entries) == 3  # type: ignore[union-attr]
