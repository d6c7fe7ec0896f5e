"""Reopening a store whose engrams.yaml has not changed skips the split and the scan for drafts (the parse cache
keeps how the file was cut), and never shows a stale cut: any change of the bytes, even one that keeps the size,
the inode and the modification time, is split afresh. Stores are written by the real PLUR."""

from __future__ import annotations

import hashlib
import os
import re
import time
import zlib
from pathlib import Path

import pytest

from plur_desk.app.review import loading
from plur_desk.app.review.session import ReviewSession
from plur_desk.domain.commands import ApproveDrafts
from plur_desk.domain.engram_view import is_draft
from plur_desk.domain.plur_rules.engram_rules import engram_problems
from plur_desk.domain.review import Reviewer
from plur_desk.store.lists.list_file import ENGRAMS, ListFile
from plur_desk.store.lists.parse_cache import cache_path
from plur_desk.store.plur_store import PlurStore

from support.stores import copy_store, make_plur_store


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    return make_plur_store(tmp_path_factory.mktemp("split"), n=240, drafts_ratio=0.3, tensions=3)


@pytest.fixture
def store_dir(template, tmp_path) -> Path:
    return copy_store(template, tmp_path / "store")


def _cut(snapshot: ListFile) -> list[tuple[int, int, tuple[int, int]]]:
    return [(e.index, snapshot.line(e), snapshot.span(e)) for e in snapshot.entries]


def _state(snapshot: ListFile) -> list[tuple]:
    return [
        (*cut, e.value, e.syntax_error, e.problems) for cut, e in zip(_cut(snapshot), snapshot.entries, strict=True)
    ]


def _uncached(path: Path) -> ListFile:
    return ListFile.read(path / "engrams.yaml", ENGRAMS, engram_problems)


def _warm(store_dir: Path, cache: Path) -> PlurStore:
    first = PlurStore(store_dir, cache_dir=cache)
    first.load()
    first.save_cache()
    return PlurStore(store_dir, cache_dir=cache)


def test_an_unchanged_file_is_not_split_again_and_the_result_is_the_same(store_dir, tmp_path):
    store = _warm(store_dir, tmp_path / "cache")
    store.load_drafts()
    assert store.engrams._drafts is not None  # the kept cut was used
    fresh = _uncached(store_dir)
    assert _cut(store.engrams) == _cut(fresh)
    assert [e.index for e in store.engrams.draft_entries()] == [e.index for e in fresh.scan_drafts()]
    assert all(e.parsed for e in store.engrams.draft_entries())
    rest = store.parse_rest(workers=False)
    assert len(rest) > 0 and rest.parsed == 0  # the other blocks' values read from the cache, none parsed
    store.finish_load(rest)
    assert _state(store.engrams) == _state(fresh)


def test_a_change_that_keeps_size_inode_and_mtime_is_still_seen(store_dir, tmp_path):
    store = _warm(store_dir, tmp_path / "cache")
    path = store_dir / "engrams.yaml"
    before = os.stat(path)
    data = path.read_bytes()
    draft = _uncached(store_dir).scan_drafts()[0]
    where = data.index(b"statement: ", _uncached(store_dir).span(draft)[0]) + len(b"statement: ")
    changed = data[:where] + (b"X" if data[where : where + 1] != b"X" else b"Y") + data[where + 1 :]
    with open(path, "r+b") as handle:  # in place: the same inode and size
        handle.write(changed)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # and the same modification time
    after = os.stat(path)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)

    store.load_drafts()
    assert store.engrams._drafts is None  # the kept cut was not trusted: the bytes differ
    fresh = _uncached(store_dir)
    assert _cut(store.engrams) == _cut(fresh)
    changed_entry = store.engrams.entries[draft.index]
    assert changed_entry.value == fresh.entries[draft.index].value
    assert changed_entry.value["statement"].startswith(("X", "Y"))


def test_a_file_cut_differently_with_the_same_size_is_split_afresh(store_dir, tmp_path):
    """Two entries swapped: the same bytes in another order, the same size; the kept cut would be wrong."""
    store = _warm(store_dir, tmp_path / "cache")
    path = store_dir / "engrams.yaml"
    data = path.read_bytes()
    fresh = _uncached(store_dir)
    (a, b), (c, d) = fresh.span(fresh.entries[0]), fresh.span(fresh.entries[1])
    swapped = data[:a] + data[c:d] + data[a:b] + data[d:]
    assert len(swapped) == len(data) and swapped != data
    stat = os.stat(path)
    with open(path, "r+b") as handle:
        handle.write(swapped)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    store.load_drafts()
    assert _cut(store.engrams) == _cut(_uncached(store_dir))


def _crc_change(tail: int) -> list[int]:
    """How the CRC-32 of a message changes when bit i of 4 bytes followed by `tail` bytes flips (for each i)."""
    zeros = zlib.crc32(bytes(4 + tail))
    return [zlib.crc32((1 << i).to_bytes(4, "little") + bytes(tail)) ^ zeros for i in range(32)]


def _solve(columns: list[int], want: int) -> int | None:
    """The bits x with XOR of columns[i] for each set bit i == want (Gaussian elimination over GF(2))."""
    rows: dict[int, tuple[int, int]] = {}  # leading bit -> (column value, the x bits that make it)
    for i, column in enumerate(columns):
        made = 1 << i
        for lead, (value, bits) in sorted(rows.items(), reverse=True):
            if column >> lead & 1:
                column, made = column ^ value, made ^ bits
        if column:
            rows[column.bit_length() - 1] = (column, made)
    x = 0
    for lead, (value, bits) in sorted(rows.items(), reverse=True):
        if want >> lead & 1:
            want, x = want ^ value, x ^ bits
    return x if want == 0 else None


def _same_crc(target: int, data: bytes) -> bytes:
    """`data` with 4 bytes of a statement forged so that its CRC-32 is `target`: the 4 bytes are found by solving
    the CRC's linear equations, tried at each place (last statements first) until they are all letters or digits,
    so the file stays what PLUR wrote, one statement reworded."""
    for match in reversed(list(re.finditer(rb"statement: ([A-Za-z0-9 ]+)\n", data))):
        for at in range(match.end(1) - 4, match.start(1) - 1, -1):
            x = _solve(_crc_change(len(data) - at - 4), zlib.crc32(data) ^ target)
            assert x is not None  # the map of 4 adjacent bytes onto the CRC is one to one
            forged = (int.from_bytes(data[at : at + 4], "little") ^ x).to_bytes(4, "little")
            if forged.isalnum():
                return data[:at] + forged + data[at + 4 :]
    raise AssertionError("no place for 4 letters or digits")


def test_a_change_forged_to_keep_the_crc_32_is_split_afresh(store_dir, tmp_path):
    """A process of the same user can write engrams.yaml and knows the cut kept: two entries of different lengths
    swapped (the same size, another cut) and 4 bytes of a statement forged keep the file's CRC-32, the size, the
    inode and the modification time. The kept cut must not be used (it is kept by the file's SHA-256)."""
    store = _warm(store_dir, tmp_path / "cache")
    path = store_dir / "engrams.yaml"
    data = path.read_bytes()
    fresh = _uncached(store_dir)
    (a, b), (c, d) = fresh.span(fresh.entries[0]), fresh.span(fresh.entries[1])
    assert b - a != d - c  # so the cut moves
    forged = _same_crc(zlib.crc32(data), data[:a] + data[c:d] + data[a:b] + data[d:])
    assert zlib.crc32(forged) == zlib.crc32(data) and len(forged) == len(data) and forged != data
    stat = os.stat(path)
    with open(path, "r+b") as handle:  # in place: the same inode
        handle.write(forged)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (stat.st_ino, stat.st_size, stat.st_mtime_ns)
    store.load_drafts()
    assert store.engrams._drafts is None  # the kept cut was not trusted
    fresh = _uncached(store_dir)
    assert _cut(store.engrams) == _cut(fresh) != _cut(_uncached_bytes(data, tmp_path))
    store.finish_load(store.parse_rest(workers=False))
    assert _state(store.engrams) == _state(fresh) and not fresh.fatal
    assert all(e.value is not None and not e.problems for e in fresh.entries)


def _uncached_bytes(data: bytes, tmp_path: Path) -> ListFile:
    (tmp_path / "before").mkdir()
    (tmp_path / "before" / "engrams.yaml").write_bytes(data)
    return _uncached(tmp_path / "before")


def test_after_a_decision_the_drafts_are_scanned_not_taken_from_the_old_cut(store_dir, tmp_path):
    cache = tmp_path / "cache"
    store = _warm(store_dir, cache)
    store.load_drafts()
    session = ReviewSession(store, Reviewer("Grace Tester"))
    draft = session.queue.rows()[0].id
    session.execute(ApproveDrafts(tuple(session.writes.seen([draft]))))
    assert [e.index for e in store.engrams.draft_entries()] == [e.index for e in store.engrams.scan_drafts()]
    assert all(e.key != draft for e in store.engrams.draft_entries())
    loading.finish_load(session, loading.parse_rest(session))
    store.save_cache()

    again = PlurStore(store_dir, cache_dir=cache)
    again.load_drafts()
    fresh = _uncached(store_dir)
    assert _cut(again.engrams) == _cut(fresh)
    assert [e.index for e in again.engrams.draft_entries()] == [e.index for e in fresh.scan_drafts()]


def test_the_rest_of_a_cache_replaced_meanwhile_is_not_read(store_dir, tmp_path):
    """The drafts come from the cache file as it was; if it is replaced before the rest is read, the rest is
    parsed instead of read from a file whose chunks are not the ones announced."""
    cache = tmp_path / "cache"
    store = _warm(store_dir, cache)
    store.load_drafts()
    assert store._cache_chunks  # there is a rest to read
    file = cache_path(cache, store.root)
    file.write_bytes(file.read_bytes()[:-10])  # replaced: another inode, another size
    found = store.parse_rest(workers=False)
    assert len(found) == 0  # nothing read from it: the blocks are parsed when the load finishes
    store.finish_load(found)
    assert _state(store.engrams) == _state(_uncached(store_dir))


def _reworded_in_place(store_dir: Path) -> str:
    """A draft's statement changed in place, keeping the file's size, inode and modification time; its id."""
    path = store_dir / "engrams.yaml"
    before = os.stat(path)
    data = path.read_bytes()
    fresh = _uncached(store_dir)
    draft = fresh.scan_drafts()[0]
    where = data.index(b"statement: ", fresh.span(draft)[0]) + len(b"statement: ")
    changed = data[:where] + (b"X" if data[where : where + 1] != b"X" else b"Y") + data[where + 1 :]
    with open(path, "r+b") as handle:
        handle.write(changed)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(path).st_ino == before.st_ino
    return str(fresh.entries[draft.index].key)


def _window_open(store_dir: Path, cache: Path) -> ReviewSession:
    from plur_desk.app.review.bootstrap import open_session

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("plur_desk.app.review.bootstrap.cache_dir", lambda: cache)
        return open_session(store_dir, "Grace Tester", drafts_first=True, load_history=False, for_review=True)


def _slow_digest(monkeypatch, order: list[str]) -> None:
    """The file's digest finishes only after the queue is built (as it may on a busy machine)."""
    digest, build = ListFile.sha256, ReviewSession.__init__

    def slow(self):
        computed = self._hash is None and self._sha256 is None
        if computed:
            time.sleep(0.3)
        found = digest(self)
        if computed:
            order.append("digest")
        return found

    def built(self, *args, **kwargs):
        build(self, *args, **kwargs)
        order.append("queue")

    monkeypatch.setattr(ListFile, "sha256", slow)
    monkeypatch.setattr(ReviewSession, "__init__", built)


def test_a_cut_whose_digest_fails_after_the_drafts_were_found_is_never_trusted(store_dir, tmp_path, monkeypatch):
    """The window looks the drafts up through the kept cut while the file's digest is computed; when the digest
    says the bytes differ and arrives only after the queue was built from that cut, the session handed out is the
    file's own: split afresh, the reworded draft as it is on disk."""
    cache = tmp_path / "cache"
    _warm(store_dir, cache)
    reworded = _reworded_in_place(store_dir)
    order: list[str] = []
    _slow_digest(monkeypatch, order)
    session = _window_open(store_dir, cache)
    assert order[:2] == ["queue", "digest"]  # the queue was built through the kept cut before the digest was known
    assert order.count("queue") == 2  # and built again from the file split afresh
    fresh = _uncached(store_dir)
    assert session.store.engrams._drafts is None and _cut(session.store.engrams) == _cut(fresh)
    fresh.parse_all()
    on_disk = {e.key: e.value for e in fresh.scan_drafts()}
    assert {row.id for row in session.queue.rows()} == {i for i, v in on_disk.items() if is_draft(v)}
    assert {i: session.engram(i) for i in on_disk} == on_disk
    assert str(session.engram(reworded)["statement"]).startswith(("X", "Y"))


def test_a_kept_cut_whose_digest_matches_is_taken_and_the_file_hashed_once(store_dir, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    _warm(store_dir, cache)
    order: list[str] = []
    _slow_digest(monkeypatch, order)
    session = _window_open(store_dir, cache)
    assert order == ["queue", "digest"]  # built once, through the kept cut, before its digest was known
    engrams = session.store.engrams
    assert engrams._drafts is not None and _cut(engrams) == _cut(_uncached(store_dir))
    assert engrams.sha256() == hashlib.sha256((store_dir / "engrams.yaml").read_bytes()).hexdigest()
    assert order.count("digest") == 1  # the digest the check computed is the snapshot's (the journal's) own
    assert engrams.file_hash().hexdigest == engrams.sha256()  # the checkpointed hash a write continues from agrees


def test_the_checkpointed_hash_is_ready_for_the_first_write_once_the_rest_is_parsed(store_dir, tmp_path):
    """The launch takes the digest alone (one call, the interpreter lock released once); the hash with its
    checkpoints, which the first write continues from, is computed with the rest of the load, not by that write."""
    cache = tmp_path / "cache"
    _warm(store_dir, cache)
    session = _window_open(store_dir, cache)
    engrams = session.store.engrams
    assert engrams._hash is None and engrams._sha256 is not None
    session.parse_rest()
    assert engrams._hash is not None and engrams._hash.hexdigest == engrams._sha256
