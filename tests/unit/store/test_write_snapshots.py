"""The snapshot a write leaves describes the file it wrote exactly, and the snapshot a reader holds stays as it was.

A write no longer copies every entry after the first one it changes (that was O(entries) per approve): unchanged
entries are shared between the old and the new snapshot, and where each entry is lives in the snapshot (arrays of the
file as read, plus shift points). So after any sequence of writes (entries growing and shrinking by lines, several
in one write, a write after PLUR rewrote the file, a write while the load is still parsing) every entry's bytes,
line and value must equal those of a fresh read of the file, and a snapshot taken before a write must still equal a
fresh read of the bytes it holds.
"""

from __future__ import annotations

import copy
import hashlib
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plur_desk.domain.plur_rules.engram_rules import engram_problems
from plur_desk.domain.review import engram_fingerprint
from plur_desk.store import file_hash
from plur_desk.store.file_hash import FileHash
from plur_desk.store.lists import entry_positions
from plur_desk.store.lists.entry_positions import Positions
from plur_desk.store.lists.list_file import ENGRAMS, ListFile
from plur_desk.store.plur_store import Edit, PlurStore

from support.stores import copy_store, make_plur_store, plur


def _state(snapshot: ListFile) -> list[tuple[object, ...]]:
    """What a reader learns of each entry from this snapshot: where it is, and its value once parsed (a copy).

    Parsing is lazy, so an entry not parsed yet may be parsed later (through this snapshot or another sharing it);
    `_held` allows that and nothing else."""
    return [
        (e.index, snapshot.line(e), snapshot.span(e), snapshot.block(e))
        + ((e.key, copy.deepcopy(e.value), list(e.problems), e.syntax_error) if e.parsed else ())
        for e in snapshot.entries
    ]


def _held(snapshot: ListFile, state: list[tuple[object, ...]]) -> bool:
    now = _state(snapshot)
    return len(now) == len(state) and all(n[: len(s)] == s for n, s in zip(now, state, strict=True))


def _fresh(data: bytes, tmp: Path) -> ListFile:
    path = tmp / "engrams.yaml"
    path.write_bytes(data)
    return ListFile.read(path, ENGRAMS, engram_problems)


def _assert_describes(snapshot: ListFile, tmp: Path) -> None:
    """`snapshot` says of every entry what a fresh read of its bytes says (values: of the entries it has parsed)."""
    fresh = _fresh(snapshot.data, tmp)
    assert snapshot.regular and fresh.regular and snapshot.fatal is None
    assert len(snapshot.entries) == len(fresh.entries)
    for ours, theirs in zip(snapshot.entries, fresh.entries, strict=True):
        assert ours.index == theirs.index
        assert snapshot.span(ours) == fresh.span(theirs), ours.index
        assert snapshot.line(ours) == fresh.line(theirs), ours.index
        if ours.parsed:
            assert (ours.value, ours.problems, ours.syntax_error) == (theirs.value, theirs.problems, None)
    assert snapshot.positions is not None
    assert list(snapshot.positions.starts()) == [fresh.span(e)[0] for e in fresh.entries]
    assert list(snapshot.positions.lines()) == [fresh.line(e) for e in fresh.entries]
    index = snapshot.by_key()
    assert {k: [e.index for e in v] for k, v in index.items()} == {
        k: [e.index for e in v] for k, v in fresh.by_key().items()
    }
    assert all(snapshot.entries[e.index] is e for v in index.values() for e in v)  # this snapshot's own entries
    assert snapshot.sha256() == fresh.sha256()


def _approve(engram: dict[str, object]) -> tuple[dict[str, object], list[dict[str, object]]]:
    engram["commitment"] = "decided"
    engram["review"] = {"state": "approved", "by": "Grace Tester", "at": "2026-12-03T10:00:00.000Z"}
    return engram, []


def _long(engram: dict[str, object]) -> tuple[dict[str, object], list[dict[str, object]]]:
    engram["statement"] = "First line of a longer statement\nsecond line\nthird line\n\nfifth line after a blank"
    return engram, []


def _short(engram: dict[str, object]) -> tuple[dict[str, object], list[dict[str, object]]]:
    engram["statement"] = "Short."
    engram.pop("review", None)
    engram.pop("tags", None)
    return engram, []


def _write(store: PlurStore, changes: list[tuple[str, object]]) -> None:
    store.write_engrams([Edit(key, apply) for key, apply in changes], engram_fingerprint)  # type: ignore[arg-type]


@pytest.fixture
def store_dir(tmp_path_factory, tmp_path) -> Path:
    template = make_plur_store(tmp_path_factory.mktemp("snapshots"), n=90, drafts_ratio=0.3, tensions=2)
    return copy_store(template, tmp_path / "store")


@pytest.mark.parametrize("compact_at", [64, 2])
def test_writes_leave_the_snapshot_of_the_file_and_the_old_ones_untouched(store_dir, tmp_path, monkeypatch, compact_at):
    monkeypatch.setattr(entry_positions, "COMPACT_AT", compact_at)  # 2: the arrays are rebuilt every few writes
    check = tmp_path / "check"
    check.mkdir()
    store = PlurStore(store_dir)
    store.load()
    keys = [e.key for e in store.engrams.entries]
    assert len(keys) == 90 and all(isinstance(k, str) for k in keys)
    rng = random.Random(18)
    plan: list[list[tuple[str, object]]] = [
        [(keys[40], _approve)],  # grows by the review's lines
        [(keys[40], _long)],  # the same entry again: a shift point already there
        [(keys[0], _long), (keys[45], _short), (keys[-1], _approve)],  # several in one write, first and last
        [(keys[10], _short), (keys[11], _long), (keys[12], _short)],  # neighbours
        [(keys[60], _short)],  # shrinks
    ] + [[(keys[i], rng.choice([_approve, _long, _short]))] for i in rng.sample(range(90), 12)]
    held: list[tuple[ListFile, bytes, list[tuple[object, ...]]]] = []
    for step, changes in enumerate(plan):
        before = store.engrams
        held.append((before, before.data, _state(before)))
        _write(store, changes)
        after = store.engrams
        assert after is not before and after.data == (store_dir / "engrams.yaml").read_bytes()
        _assert_describes(after, check)
        changed = {after.by_key()[k][0].index for k, _a in changes}
        if step != 7:  # (the write after PLUR's read the file again)
            assert all(after.entries[i] is before.entries[i] for i in range(len(after.entries)) if i not in changed)
        if step == 6:  # PLUR rewrites the file (adds an engram, bumps a counter): the next write re-reads it
            plur(store_dir, tmp_path / "home", [{"op": "learn", "statement": "Builds run on the release branch"}])
            plur(store_dir, tmp_path / "home", [{"op": "update", "id": keys[70], "fields": {"statement": "Again."}}])
    assert store.engrams.data == (store_dir / "engrams.yaml").read_bytes()
    assert len(store.engrams.entries) == 91  # the write after PLUR's took its file, with the new engram
    for snapshot, data, state in held:  # what a reader still holds is what it read
        assert snapshot.data is data and _held(snapshot, state)
        _assert_describes(snapshot, check)


def test_a_write_during_the_load_and_the_load_finishing_after_it(store_dir, tmp_path):
    check = tmp_path / "check"
    check.mkdir()
    store = PlurStore(store_dir, cache_dir=tmp_path / "cache")
    store.load_drafts()
    partial = store.engrams
    assert not partial.all_parsed
    drafts = [e.key for e in partial.entries if e.parsed and isinstance(e.value, dict)]
    others = [k for k in partial.by_key() if k not in drafts]  # indexed from their first line, not parsed yet
    assert len(drafts) > 3 and others
    held = _state(partial)
    _write(store, [(drafts[0], _approve), (drafts[-1], _long)])
    _write(store, [(others[0], _short)])  # parsed by the write itself
    _write(store, [(drafts[1], _short), (others[-1], _long)])
    during = store.engrams
    assert not during.all_parsed and _held(partial, held)
    assert any(during.entries[i] is e for i, e in enumerate(partial.entries) if not e.parsed)  # shared, unparsed
    _assert_describes(during, check)
    store.finish_load(store.parse_rest())
    assert store.engrams is during and during.all_parsed
    _assert_describes(during, check)
    assert _held(partial, held) and _state(partial) != held  # entries it shares were parsed, nothing else moved
    _assert_describes(partial, check)
    _write(store, [(others[1], _approve)])
    _assert_describes(store.engrams, check)


def _naive(sizes: list[int], lines: list[int]) -> tuple[list[int], list[int]]:
    starts, firsts, at, line = [], [], 9, 2
    for size, count in zip(sizes, lines, strict=True):
        starts.append(at)
        firsts.append(line)
        at, line = at + size, line + count
    return starts, firsts


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 50), st.integers(1, 5)), min_size=1, max_size=30),
    st.lists(st.lists(st.tuples(st.integers(0, 29), st.integers(1, 60), st.integers(1, 7)), max_size=4), max_size=12),
    st.integers(1, 6),
)
def test_positions_follow_any_sequence_of_replacements(entries, writes, compact_at):
    sizes, counts = [s for s, _l in entries], [c for _s, c in entries]
    starts, lines = _naive(sizes, counts)
    positions = Positions.of(starts, lines, 9 + sum(sizes))
    history = []
    original = entry_positions.COMPACT_AT
    entry_positions.COMPACT_AT = compact_at
    try:
        for write in writes:
            replaced = {i % len(sizes): (size, count) for i, size, count in write}
            changes = [(i, size - sizes[i], count - counts[i]) for i, (size, count) in sorted(replaced.items())]
            history.append((positions, list(positions.starts()), list(positions.lines())))
            for i, (size, count) in replaced.items():
                sizes[i], counts[i] = size, count
            positions = positions.moved(changes, 9 + sum(sizes))
            starts, lines = _naive(sizes, counts)
            assert [positions.span(i) for i in range(len(sizes))] == list(
                zip(starts, [*starts[1:], 9 + sum(sizes)], strict=True)
            )
            assert [positions.line(i) for i in range(len(sizes))] == lines
            assert list(positions.starts()) == starts and list(positions.lines()) == lines
            assert positions.spans() == [positions.span(i) for i in range(len(sizes))]
    finally:
        entry_positions.COMPACT_AT = original
    for old, old_starts, old_lines in history:  # every earlier snapshot's positions are still its own
        assert list(old.starts()) == old_starts and list(old.lines()) == old_lines


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300), st.lists(st.tuples(st.integers(0, 300), st.binary(max_size=40)), max_size=6))
def test_the_file_hash_from_a_checkpoint_is_the_hash_of_the_whole_file(data, edits):
    original = file_hash.CHECKPOINT
    file_hash.CHECKPOINT = 16  # many checkpoints in a small file
    try:
        hashes = [(data, FileHash.of(data))]
        for at, insert in edits:
            old, base = hashes[at % len(hashes)]  # from any earlier file, not only the last
            cut = at % (len(old) + 1)
            new = old[:cut] + insert + old[cut + len(insert) // 2 :]
            made = FileHash.of(new, base, cut)
            assert made.hexdigest == hashlib.sha256(new).hexdigest() and made.size == len(new)
            hashes.append((new, made))
        for old, made in hashes:  # no state was changed in place: each hash still extends correctly
            assert FileHash.of(old + b"x", made, len(old)).hexdigest == hashlib.sha256(old + b"x").hexdigest()
    finally:
        file_hash.CHECKPOINT = original
