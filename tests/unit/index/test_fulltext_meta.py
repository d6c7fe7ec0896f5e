"""The full-text index's record of which digest each engram was indexed with: appended after our own writes,
written whole in pieces, read back exactly, and never trusted past a bad line."""

from __future__ import annotations

import json
from pathlib import Path

import tantivy

from plur_desk.index import fulltext
from plur_desk.index.fulltext import FulltextIndex


def _engrams(n: int, version: str = "a") -> dict[str, tuple[str, dict[str, object], str]]:
    out: dict[str, tuple[str, dict[str, object], str]] = {}
    for i in range(n):
        ident = f"ENG-2026-12-03-{i:05d}"
        value = {"id": ident, "statement": f"statement {i} {version}", "type": "behavioral", "status": "active"}
        out[ident] = (f"{version}{i}", value, "2026-12-03T10:00:00.000Z")
    return out


def _meta(directory: Path) -> list[str]:
    return (directory / "plur-desk-meta.jsonl").read_text().splitlines()


def test_a_full_sync_writes_the_map_in_pieces_and_reads_it_back(tmp_path, monkeypatch):
    monkeypatch.setattr(fulltext, "META_PIECE", 7)
    engrams = _engrams(30)
    index = FulltextIndex(tmp_path)
    assert index.sync(engrams) == 30
    lines = _meta(tmp_path)
    assert json.loads(lines[0]) == {"format": fulltext.FORMAT}
    assert [len(json.loads(line)) for line in lines[1:]] == [7, 7, 7, 7, 2]
    again = FulltextIndex(tmp_path)
    assert again.digests == index.digests
    assert again.sync(engrams) == 0  # nothing re-indexed


def test_syncs_after_our_writes_append_and_are_read_back_in_order(tmp_path):
    engrams = _engrams(10)
    index = FulltextIndex(tmp_path)
    index.sync(engrams)
    before = len(_meta(tmp_path))
    changed = dict(engrams)
    for version in ("b", "c"):
        ident = "ENG-2026-12-03-00003"
        _digest, value, created = changed[ident]
        changed[ident] = (version + "3", {**value, "statement": f"statement 3 {version}"}, created)
        assert index.sync({ident: changed[ident]}, partial=True) == 1
    assert len(_meta(tmp_path)) == before + 2  # one line per sync, the map not written again
    again = FulltextIndex(tmp_path)
    assert again.digests["ENG-2026-12-03-00003"] == "c3"  # the later line wins
    assert again.sync(changed) == 0
    assert again.ids_matching(tantivy.Query.all_query()) == set(changed)  # each engram indexed once


def test_a_torn_last_line_re_indexes_only_what_it_named_then_the_file_is_written_whole(tmp_path):
    engrams = _engrams(10)
    index = FulltextIndex(tmp_path)
    index.sync(engrams)
    path = tmp_path / "plur-desk-meta.jsonl"
    with path.open("a") as handle:
        handle.write('{"ENG-2026-12-03-00001": "zz')  # a crash in the middle of an append
    again = FulltextIndex(tmp_path)
    assert again.digests == index.digests
    assert again.sync({"ENG-2026-12-03-00002": engrams["ENG-2026-12-03-00002"]}, partial=True) == 0
    changed = dict(engrams)
    changed["ENG-2026-12-03-00004"] = ("b4", engrams["ENG-2026-12-03-00004"][1], "2026-12-03T10:00:00.000Z")
    assert again.sync({"ENG-2026-12-03-00004": changed["ENG-2026-12-03-00004"]}, partial=True) == 1
    assert all(line.endswith("}") for line in _meta(tmp_path))  # written whole, the torn piece gone
    assert FulltextIndex(tmp_path).sync(changed) == 0


def test_a_bad_line_before_the_last_means_a_rebuild(tmp_path):
    engrams = _engrams(5)
    FulltextIndex(tmp_path).sync(engrams)
    path = tmp_path / "plur-desk-meta.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], "{not json", *lines[1:]]) + "\n")
    assert FulltextIndex(tmp_path).sync(engrams) == 5


def test_appends_are_compacted(tmp_path, monkeypatch):
    monkeypatch.setattr(fulltext, "COMPACT_AFTER", 3)
    engrams = _engrams(4)
    index = FulltextIndex(tmp_path)
    index.sync(engrams)
    ident = "ENG-2026-12-03-00000"
    for n in range(5):
        engrams[ident] = (f"v{n}", engrams[ident][1], "2026-12-03T10:00:00.000Z")
        index.sync({ident: engrams[ident]}, partial=True)
    assert len(_meta(tmp_path)) <= 2 + 3
    assert FulltextIndex(tmp_path).digests == index.digests
