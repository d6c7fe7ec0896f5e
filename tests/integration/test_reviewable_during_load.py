"""Decisions taken while a large store is still being parsed (issue: reviewable before the full load).

The drafts-first snapshot is written through exactly as a fully parsed one: the write re-reads inside the lock,
finds every entry with the id (from the bytes of entries not parsed yet), refuses duplicates, and leaves every other
byte identical. The real PLUR reads the result. The rest of the file is parsed in worker processes, with the same
result as one process, and an invalid entry is never hidden (not by the workers, not by the cache).
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from pathlib import Path

import pytest

from plur_desk.app.review import loading
from plur_desk.app.review.session import ReviewSession
from plur_desk.domain.commands import ApproveDrafts, RejectDrafts
from plur_desk.domain.review import Reviewer
from plur_desk.store import plur_store
from plur_desk.store.lists.list_file import ListFile
from plur_desk.store.lists.parse_pool import IN_PROCESS_BELOW
from plur_desk.store.plur_store import PlurStore

from support.stores import copy_store, make_plur_store, plur

N = IN_PROCESS_BELOW + 1500  # enough entries that the rest is parsed by worker processes
BLOCK = re.compile(rb"^  - id: (\S+)\n", re.M)


@pytest.fixture(scope="module")
def big_template(tmp_path_factory) -> Path:
    return make_plur_store(tmp_path_factory.mktemp("big"), n=N, drafts_ratio=0.1, tensions=4)


@pytest.fixture
def big(big_template, tmp_path) -> Path:
    return copy_store(big_template, tmp_path / "store")


def _blocks(data: bytes) -> dict[str, bytes]:
    starts = [m.start() for m in BLOCK.finditer(data)] + [len(data)]
    return {BLOCK.match(data, s).group(1).decode(): data[s:e] for s, e in itertools.pairwise(starts)}


def _state(snapshot: ListFile) -> list[tuple]:
    return [
        (e.index, snapshot.line(e), snapshot.span(e), e.value, e.syntax_error, e.problems) for e in snapshot.entries
    ]


def test_approve_and_reject_during_the_load_are_safe_and_plur_reads_them(big, tmp_path):
    before = (big / "engrams.yaml").read_bytes()
    store = PlurStore(big, cache_dir=tmp_path / "cache")
    store.load_drafts()
    session = ReviewSession(store, Reviewer("Grace Tester"))
    drafts = [row.id for row in session.queue.rows()]
    assert len(drafts) >= 2 and not store.engrams.all_parsed

    session.execute(ApproveDrafts(tuple(session.writes.seen([drafts[0]]))))
    session.execute(RejectDrafts(tuple(session.writes.seen([drafts[1]])), "wrong"))
    unparsed = sum(1 for e in store.engrams.entries if not e.parsed)
    assert unparsed > N // 2  # the decisions were taken on the partial snapshot

    loading.finish_load(session, loading.parse_rest(session))
    assert store.engrams.all_parsed

    after = (big / "engrams.yaml").read_bytes()
    old, new = _blocks(before), _blocks(after)
    assert list(old) == list(new)
    assert {k for k in old if old[k] != new[k]} == {drafts[0], drafts[1]}  # every other byte identical

    fresh = PlurStore(big)
    fresh.load()
    assert _state(fresh.engrams) == _state(store.engrams)  # the completed snapshot is the file, parsed afresh
    assert session.engram(drafts[0])["commitment"] == "decided"

    loaded, history = plur(big, tmp_path / "home", [{"op": "load"}, {"op": "history"}])
    assert len(loaded["valid"]) == N and not loaded["quarantined"]
    assert loaded["engrams"][drafts[0]]["commitment"] == "decided"
    assert loaded["engrams"][drafts[1]]["status"] == "retired"
    human = [e for e in history if (e.get("actor") or {}).get("kind") == "human"]
    assert [(e["engram_id"], e["data"]["action"]) for e in human] == [(drafts[0], "approve"), (drafts[1], "reject")]


def test_a_duplicate_id_not_parsed_yet_is_decided_on_the_copy_shown(big):
    # PLUR 0.21 reads the first copy of a repeated id under it (the later, different one under a fresh id): a
    # decision made during the load, before the later copy is parsed, lands on the first copy and leaves the other.
    path = big / "engrams.yaml"
    data = path.read_bytes()
    blocks = _blocks(data)
    store = PlurStore(big)
    store.load_drafts()
    target = ReviewSession(store, Reviewer("Grace Tester")).queue.rows()[0].id
    copy = blocks[target].replace(b"\n    commitment: draft\n", b"\n    commitment: decided\n")
    path.write_bytes(data + copy)  # the same id again, in an entry the drafts-first pass does not parse
    store = PlurStore(big)
    store.load_drafts()
    session = ReviewSession(store, Reviewer("Grace Tester"))
    assert session.engram(target) is not None  # the snapshot cannot know yet: the write path must
    session.execute(ApproveDrafts(tuple(session.writes.seen([target]))))
    after = path.read_bytes()
    assert after.endswith(copy)  # the later copy is untouched
    assert _blocks(after[: -len(copy)])[target] != blocks[target]  # the first one is approved
    lines = "".join(p.read_text() for p in sorted((big / "history").glob("*.jsonl"))).splitlines()
    human = [e for e in map(json.loads, lines) if (e.get("actor") or {}).get("kind") == "human"]
    assert [e["engram_id"] for e in human] == [target]


def test_workers_give_what_one_process_gives_and_never_hide_an_invalid_entry(big, tmp_path):
    path = big / "engrams.yaml"
    data = path.read_bytes()
    blocks = list(_blocks(data).items())
    victim_id, victim = next((k, b) for k, b in blocks[len(blocks) // 2 :] if b"commitment: draft" not in b)
    broken = re.sub(rb'created_at: "([0-9T:.Z-]+)"', rb"created_at: \1", victim, count=1)  # an unquoted timestamp
    assert broken != victim
    path.write_bytes(data.replace(victim, broken))

    in_process = PlurStore(big)
    in_process.load_drafts()
    in_process.finish_load(in_process.parse_rest(workers=False))
    workers = PlurStore(big)
    workers.load_drafts()
    rest = workers.parse_rest()
    assert rest.parsed > IN_PROCESS_BELOW  # the workers did the parsing
    workers.finish_load(rest)
    assert _state(workers.engrams) == _state(in_process.engrams)
    (invalid,) = [e for e in workers.engrams.entries if not e.valid]
    assert invalid.key == victim_id and "timestamp" in " ".join(invalid.problems).lower()

    cache = tmp_path / "cache"
    for _ in range(2):  # cold, then warm from the cache the first run saved
        cached = PlurStore(big, cache_dir=cache)
        cached.load()
        cached.save_cache()
        assert _state(cached.engrams) == _state(in_process.engrams)


def test_review_actions_work_as_soon_as_the_drafts_are_shown(qtbot, big, tmp_path):
    from PySide6.QtCore import Qt

    from plur_desk.app.settings import Settings, SettingsStore
    from plur_desk.infra.clock import FixedClock
    from plur_desk.ui.app import make_application
    from plur_desk.ui.main_window import MainWindow

    from ui.conftest import NOW, engrams_on_disk, human_events

    make_application()
    win = MainWindow(
        SettingsStore(tmp_path / "settings.yaml"),
        Settings(reviewer_name="Grace Tester"),
        "Grace Tester",
        FixedClock(NOW),
    )
    qtbot.addWidget(win)
    win.finder.cache_root = tmp_path / "cache"
    win.show()
    qtbot.waitExposed(win)
    gate = threading.Event()
    win.workspace.jobs.submit(
        lambda: gate.wait(60), lane="index"
    )  # holds the rest of the load back until the decision is made
    opened: list[bool] = []
    win.store_opened.connect(lambda: opened.append(True))
    try:
        win.open_path(big)
        qtbot.waitUntil(lambda: win.session is not None, timeout=60000)
        assert win.qactions["review.approve"].isEnabled() and win.drafts.current() is not None
        first = win.drafts.current().id
        with qtbot.waitSignal(win.changes_applied, timeout=30000):
            qtbot.keyClick(win.drafts.table, Qt.Key.Key_A)
        assert not opened and not win.session.fully_loaded  # decided before the full load
    finally:
        gate.set()
    qtbot.waitUntil(
        lambda: bool(opened) and win.session.history.loaded and win.jobs.pending("session") == 0, timeout=120000
    )
    assert engrams_on_disk(big)[first]["commitment"] == "decided"
    assert [e["engram_id"] for e in human_events(big)] == [first]
    assert first not in [r.id for r in win.drafts.model.rows]
    win.close()


def test_check_shares_the_parse_cache_and_reports_the_same_cold_and_warm(big, tmp_path):
    from plur_desk.app.check import run_check

    path = big / "engrams.yaml"
    data = path.read_bytes()
    blocks = list(_blocks(data).values())
    quarantined = blocks[N // 3].replace(b"\n    status: active\n", b"\n    status: sleeping\n")
    path.write_bytes(data.replace(blocks[N // 3], quarantined) + blocks[N // 2])  # one invalid, one duplicate
    cold = run_check(big)
    # the duplicate is no invalid entry (PLUR 0.20 reads both copies, 0.21 this exact one once): a warning
    assert len(cold.invalid) == 1 and cold.exit_code == 1
    assert sum("repeats the engram" in w for w in cold.warnings) == 1
    assert list((tmp_path / "_home" / ".cache").rglob("engram-blocks.*"))  # the window's cache, now warm
    warm = run_check(big)
    assert warm.to_json() == cold.to_json() == run_check(big, use_cache=False).to_json()


def test_the_workers_get_only_what_neither_this_load_nor_the_cache_has(big, tmp_path, monkeypatch):
    """A first load sends every block not parsed yet (no digest is worth computing first); a reload after PLUR
    changed three engrams, and a load from the cache, send only the blocks they do not already hold."""
    sent: list[int] = []
    real = plur_store.parse_in_workers

    def counting(data, spans, *args, **kwargs):  # type: ignore[no-untyped-def]
        sent.append(len(spans))
        return real(data, spans, *args, **kwargs)

    monkeypatch.setattr(plur_store, "parse_in_workers", counting)
    monkeypatch.setattr(plur_store, "IN_PROCESS_BELOW", 1)
    cache = tmp_path / "cache"
    store = PlurStore(big, cache_dir=cache)
    store.load_drafts()
    unparsed = len(store.engrams.unparsed_spans())
    store.finish_load(store.parse_rest())
    assert sent == [unparsed] and unparsed > N // 2

    path = big / "engrams.yaml"
    data = path.read_bytes()
    plain = [b for b in _blocks(data).values() if b"commitment: draft" not in b and b"\n    statement: A" in b]
    for block in plain[:3]:
        data = data.replace(block, block.replace(b"\n    statement: A", b"\n    statement: Changed A", 1))
    path.write_bytes(data)
    store.load()  # what the window's reload does when PLUR changed the file
    assert sent[1:] == [3]
    store.save_cache()

    warm = PlurStore(big, cache_dir=cache)
    warm.load()
    assert len(sent) == 2  # everything came from the cache
    fresh = PlurStore(big)
    fresh.load_drafts()
    fresh.finish_load(fresh.parse_rest(workers=False))
    assert _state(warm.engrams) == _state(store.engrams) == _state(fresh.engrams)
