"""plur_desk and the real PLUR (@plur-ai/core 0.20.0) on the same store files."""

from __future__ import annotations

import json
import subprocess
import threading
import time

import pytest

from plur_desk.app.review.bootstrap import open_session
from plur_desk.domain.commands import (
    ApproveDrafts,
    ConfirmTension,
    EditStatement,
    RejectDrafts,
    ResolveTension,
    SetValidity,
)
from plur_desk.store.locking.lock import locked
from plur_desk.store.plur_store import PlurStore

from support.node import NODE_DIR, plur_env, run_node
from support.stores import plur

pytestmark = pytest.mark.interop


def _strip(value):
    return {k: v for k, v in value.items() if not k.startswith("_")} if isinstance(value, dict) else value


def test_a_store_plur_made_is_read_completely(store, node_home):
    ours = PlurStore(store)
    ours.load()
    theirs = plur(store, node_home, [{"op": "load"}, {"op": "tensions"}, {"op": "history"}])
    loaded, tensions, history = theirs
    assert loaded["quarantined"] == []
    our_engrams = {e.key: e.value for e in ours.engrams.entries}
    assert list(our_engrams) == loaded["valid"]
    for engram_id, value in loaded["engrams"].items():
        assert our_engrams[engram_id] == value, engram_id  # every field, every unknown key, same values
    assert [e.value for e in ours.tensions.entries] == tensions
    ours_history = ours.history.read_all()
    assert [_strip(e) for e in ours_history.events] == history
    assert not ours_history.malformed


def test_b_plur_reads_our_changes_with_nothing_quarantined(store, node_home):
    session = open_session(store, "Alice Reviewer", use_cache=False)
    drafts = session.queue.rows()
    approved, rejected, edited = drafts[0].id, drafts[1].id, drafts[2].id
    session.execute(
        EditStatement(session.writes.seen([edited])[0], "Deploys to production need a second reviewer on Fridays")
    )
    session.execute(
        ApproveDrafts(
            tuple(session.writes.seen([approved, edited])), level="decided", note="checked against the runbook"
        )
    )
    session.execute(RejectDrafts(tuple(session.writes.seen([rejected])), "duplicate of an older engram"))
    windowed = drafts[3].id
    session.execute(SetValidity(tuple(session.writes.seen([windowed])), "2026-01-01", "2027-06-30"))
    tension = session.tensions()[0]
    session.execute(ResolveTension(session.writes.seen_tension(tension.id), tension.engram_b))
    before_keys = {e.key: set(e.value) for e in session.store.engrams.entries}

    ops = [
        {"op": "load"},
        {"op": "listTensions"},
        {"op": "history"},
        {"op": "inject", "prompt": "deploy production reviewer friday build cache", "options": {"limit": 50}},
    ]
    loaded, tensions, history, _ = plur(store, node_home, ops)
    assert loaded["quarantined"] == [] and loaded["validate"]["ok"], loaded["validate"]
    engrams = loaded["engrams"]
    assert engrams[approved]["commitment"] == "decided"
    assert engrams[approved]["review"]["by"] == "Alice Reviewer"
    assert engrams[edited]["statement"] == "Deploys to production need a second reviewer on Fridays"
    assert engrams[edited]["engram_version"] == 2
    assert engrams[rejected]["status"] == "retired"
    assert engrams[windowed]["temporal"]["valid_until"] == "2027-06-30"
    loser = tension.engram_a
    assert engrams[loser]["status"] == "retired"
    record = next(t for t in tensions if t["id"] == tension.id)
    assert record["status"] == "resolved" and record["resolved_by"] == tension.engram_b
    human = [e for e in history if (e.get("actor") or {}).get("kind") == "human"]
    assert len(human) == 1 + 2 + 1 + 1 + 2  # edit, approve x2, reject, validity, resolve (record + loser)
    assert all(e["actor"]["runtime"]["name"] == "plur-desk" for e in human)
    # PLUR rewrote the file (inject bumps injection_count); our keys survive its rewrite.
    after = PlurStore(store)
    after.load()
    for entry in after.engrams.entries:
        assert before_keys[entry.key] <= set(entry.value), entry.key
    assert after.engrams.entries[0].value is not None
    review = next(e.value for e in after.engrams.entries if e.key == approved)["review"]
    assert review["state"] == "approved"


def test_b_inject_follows_approval_and_rejection(store, node_home):
    session = open_session(store, "Alice", use_cache=False)
    text_a = "Zebra crossings in the staging parking lot are repainted every April"
    text_b = "Zebra crossings in the staging parking lot are repainted every October"
    created = plur(
        store,
        node_home,
        [
            {"op": "learn", "statement": text_a, "options": {"scope": "global", "commitment": "draft"}},
            {"op": "learn", "statement": text_b, "options": {"scope": "global", "commitment": "draft"}},
        ],
    )
    a, b = created[0]["id"], created[1]["id"]
    prompt = {"op": "inject", "prompt": "zebra crossings staging parking lot repainted", "options": {"scope": "global"}}
    before = plur(store, node_home, [prompt])[0]["ids"]
    assert a not in before and b not in before  # drafts are gated
    session.reload_if_changed()
    session.execute(ApproveDrafts(tuple(session.writes.seen([a]))))
    session.execute(RejectDrafts(tuple(session.writes.seen([b])), "wrong month"))
    after = plur(store, node_home, [prompt])[0]["ids"]
    assert a in after and b not in after


def test_b_plur_can_still_work_tensions_after_our_changes(store, node_home):
    session = open_session(store, "Alice", use_cache=False)
    rows = session.tensions()
    session.execute(ConfirmTension(session.writes.seen_tension(rows[0].id)))
    session.execute(ResolveTension(session.writes.seen_tension(rows[1].id), rows[1].engram_a))
    results = plur(
        store,
        node_home,
        [
            {"op": "confirm", "id": rows[2].id},
            {"op": "dismiss", "id": rows[3].id},
            {"op": "resolve", "id": rows[0].id, "winner": rows[0].engram_a},
            {"op": "load"},
            {"op": "listTensions"},
        ],
    )
    assert not any(isinstance(r, dict) and "error" in r for r in results[:3]), results[:3]
    statuses = {t["id"]: t["status"] for t in results[4]}
    assert statuses[rows[0].id] == "resolved" and statuses[rows[1].id] == "resolved"
    assert statuses[rows[2].id] == "confirmed" and statuses[rows[3].id] == "dismissed"
    assert results[3]["quarantined"] == []


def test_written_file_is_what_jsyaml_would_write(store):
    """Our output re-dumped by the real js-yaml with PLUR's options is byte-identical: PLUR would write the same."""
    original = (store / "engrams.yaml").read_bytes()
    session = open_session(store, "Alice", use_cache=False)
    ids = [r.id for r in session.queue.rows()[:5]]
    note = "multi-line\nnote: with 'quotes' and ünïcode"
    # (one of them is in an open tension: the window asked and the reviewer locked it anyway)
    session.execute(ApproveDrafts(tuple(session.writes.seen(ids[:3])), "locked", note, despite_open_tension=True))
    session.execute(
        EditStatement(
            session.writes.seen([ids[3]])[0],
            "A long statement " + "that keeps going " * 30 + "until it has to be folded.",
        )
    )
    written = (store / "engrams.yaml").read_text()
    answer = run_node("jsyaml_oracle.mjs", payload=[{"op": "load", "text": written}])[0]
    redump = run_node("jsyaml_oracle.mjs", payload=[{"op": "dump", "doc": answer["value"], "quote": '"'}])[0]
    assert redump["out"] == written
    # and only the changed entries differ from the original bytes
    old_blocks = original.split(b"\n  - ")
    new_blocks = written.encode().split(b"\n  - ")
    changed = [i for i, (x, y) in enumerate(zip(old_blocks, new_blocks, strict=True)) if x != y]
    assert len(changed) == 4


def test_c_concurrent_learn_loop_and_reviews_lose_nothing(store, node_home):
    session = open_session(store, "Alice", use_cache=False)
    drafts = [r.id for r in session.queue.rows()]
    env = plur_env(store, node_home)
    node_home.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        ["node", str(NODE_DIR / "plur_ops.mjs")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=NODE_DIR,
    )
    proc.stdin.write(json.dumps([{"op": "learnLoop", "n": 40, "prefix": "Concurrent fact"}]).encode())
    proc.stdin.close()
    approved = []
    for engram_id in drafts:
        session.reload_if_changed()
        session.execute(ApproveDrafts(tuple(session.writes.seen([engram_id]))))
        approved.append(engram_id)
        if proc.poll() is not None:
            break
    out, err = proc.stdout.read(), proc.stderr.read()
    proc.wait(timeout=300)
    assert proc.returncode == 0, err.decode()[-2000:]
    learned = json.loads(out)[0]
    assert len(learned) == 40
    loaded = plur(store, node_home, [{"op": "load"}])[0]
    assert loaded["quarantined"] == []
    for engram_id in learned:
        assert engram_id in loaded["engrams"]
    for engram_id in approved:
        assert loaded["engrams"][engram_id]["commitment"] == "decided", engram_id
    assert len(approved) >= 3  # the two writers really interleaved


def test_d_our_lock_makes_plur_wait_and_a_dead_holders_lock_is_taken(store, node_home):
    hold = 2.0
    started = threading.Event()

    def holder():
        with locked(store / "engrams.yaml"):
            started.set()
            time.sleep(hold)

    thread = threading.Thread(target=holder)
    thread.start()
    started.wait()
    t0 = time.monotonic()
    result = plur(store, node_home, [{"op": "learn", "statement": "Learned while plur_desk held the lock"}])
    waited = time.monotonic() - t0
    thread.join()
    assert "id" in result[0]
    assert waited >= hold * 0.8  # PLUR waited for our release rather than writing past us
    # A lock left by a dead process (pid that no longer exists) is taken over by both sides.
    dead = subprocess.run(["true"])
    del dead
    import os
    import socket

    pid = 2**22 - 7
    while True:
        try:
            os.kill(pid, 0)
            pid -= 1
        except ProcessLookupError:
            break
        except PermissionError:
            pid -= 1
    (store / "engrams.yaml.lock").write_text(f"{socket.gethostname()}:{pid}:{int(time.time() * 1000)}:1")
    session = open_session(store, "Alice", use_cache=False)
    session.execute(ApproveDrafts(tuple(session.writes.seen([session.queue.rows()[0].id]))))
    assert not (store / "engrams.yaml.lock").exists()
    (store / "engrams.yaml.lock").write_text(f"{socket.gethostname()}:{pid}:{int(time.time() * 1000)}:2")
    result = plur(store, node_home, [{"op": "learn", "statement": "Learned after a dead holder's lock"}])
    assert "id" in result[0]
    assert not (store / "engrams.yaml.lock").exists()


def test_content_hash_matches_plur(node_home, tmp_path):
    from plur_desk.domain.plur_rules.derived import content_hash

    samples = [
        "The CI pipeline uses Node 20",
        "  Ünïcödé — “quotes”, emoji 🚀 and CJK 日本語!  ",
        "İstanbul ǅ ß ﬁ",
        "tabs\tand\nnewlines",
        "___",
        "!!!",
        "Ⅻ ½ ²",
    ]
    (tmp_path / "s").mkdir()
    theirs = plur(tmp_path / "s", node_home, [{"op": "contentHash", "statements": samples}])[0]
    assert [content_hash(s) for s in samples] == theirs
