"""Signed human decisions against the real PLUR (@plur-ai/core 0.20.0) and an independent Ed25519 (Node's crypto)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from plur_desk.app.check import run_check
from plur_desk.app.review.bootstrap import open_session
from plur_desk.domain.commands import ApproveDrafts, EditStatement, RejectDrafts
from plur_desk.domain.trust import TrustState
from plur_desk.store.history.chain import event_hash, js_stringify

from support.node import plur_env, run_node
from support.stores import plur

pytestmark = pytest.mark.interop
REVIEWER = "Alice Reviewer"


def _node(store, home, payload):
    home.mkdir(parents=True, exist_ok=True)
    return run_node("signatures.mjs", payload=payload, env=plur_env(store, home))


def _ours(events):
    return [e for e in events if (e.get("actor") or {}).get("kind") == "human"]


def test_signed_events_are_read_by_plur_verify_independently_and_keys_yaml_survives_plur_writes(store, node_home):
    session = open_session(store, REVIEWER, use_cache=False)
    drafts = session.queue.rows()
    session.execute(ApproveDrafts(tuple(session.writes.seen([drafts[0].id])), note="checked"))
    session.execute(RejectDrafts(tuple(session.writes.seen([drafts[1].id])), "duplicate"))
    session.execute(EditStatement(session.writes.seen([drafts[2].id])[0], "Deploys need a second reviewer"))
    keys_bytes = (store / "keys.yaml").read_bytes()

    loaded, history = plur(store, node_home, [{"op": "load"}, {"op": "history"}])
    assert loaded["quarantined"] == []
    mine = _ours(history)
    assert len(mine) == 3 and all(e["signer"] == f"human:{REVIEWER}" for e in mine)
    assert all(isinstance(e["signature"], str) for e in mine)  # PLUR's reader keeps the top-level fields

    verdicts = _node(store, node_home, {"op": "verdicts"})
    signed = [v for v in verdicts if v["signer"]]
    assert [v["verdict"] for v in signed] == ["valid"] * 3
    for node_view, event in zip(signed, mine, strict=True):  # Node's bytes (from the doc) are ours
        assert node_view["bytes_hash"] == event_hash(event)

    shape = _node(store, node_home, {"op": "keysDump"})
    (entry,) = shape["doc"]["keys"]
    assert sorted(entry) == ["added_at", "identity", "public_key"] and entry["identity"] == f"human:{REVIEWER}"
    assert shape["dump"].encode() == keys_bytes  # byte for byte what PLUR's registerPublicKey writes

    plur(
        store,
        node_home,
        [
            {"op": "learn", "statement": "Release notes are written by the on-call engineer"},
            {"op": "forget", "id": drafts[4].id, "reason": "stale"},
            {"op": "recall", "query": "release notes"},
        ],
    )
    assert (store / "keys.yaml").read_bytes() == keys_bytes


def _chain(store):
    """Make the store's history hash-chained (what a newer PLUR leaves): one genesis event at the tail."""
    path = store / "history" / "2026-12.jsonl"
    genesis = {
        "event": "engram_created",
        "engram_id": "ENG-2026-1202-999",
        "timestamp": "2026-12-02T00:00:00.000Z",
        "data": {},
        "prev": None,
    }
    genesis["hash"] = event_hash(genesis)
    with open(path, "a") as handle:
        handle.write(js_stringify(genesis) + "\n")


def test_a_session_on_a_chained_store_ends_with_a_checkpoint_the_docs_verifier_calls_valid(store, node_home):
    _chain(store)
    session = open_session(store, REVIEWER, use_cache=False)
    drafts = session.queue.rows()
    session.execute(ApproveDrafts(tuple(session.writes.seen([drafts[0].id, drafts[1].id]))))
    session.execute(RejectDrafts(tuple(session.writes.seen([drafts[2].id])), "wrong"))
    checkpoint = session.end()
    assert checkpoint is not None and checkpoint["signer"] == f"human:{REVIEWER}"
    result = _node(store, node_home, {"op": "verifyChain"})
    assert result["ok"], result["breaks"]
    assert result["checkpoints"] == 1 and result["signatures"] == [{"verdict": "valid", "signer": f"human:{REVIEWER}"}]
    assert result["head"] == checkpoint["hash"] and result["store_hash"] == checkpoint["data"]["store_hash"]
    verdicts = _node(store, node_home, {"op": "verdicts"})
    assert [v["verdict"] for v in verdicts if v["signer"]] == ["valid"] * 4
    assert plur(store, node_home, [{"op": "load"}])[0]["quarantined"] == []


def test_attacks_through_plurs_api_are_each_shown_for_what_they_are_and_check_exits_1(store, node_home):
    session = open_session(store, REVIEWER, use_cache=False)
    drafts = [d.id for d in session.queue.rows()]
    session.execute(RejectDrafts(tuple(session.writes.seen([drafts[0]])), "not true"))
    genuine = next(e for e in session.history.newest_first() if e.get("signer"))
    assert run_check(store).exit_code == 0

    targets = {"approve": drafts[1], "copied": drafts[2], "wrongKey": drafts[3], "unknown": drafts[4]}
    targets["tampered"] = drafts[5]
    _node(store, node_home, {"op": "attack", "reviewer": REVIEWER, "targets": targets, "genuine": genuine})

    fresh = open_session(store, REVIEWER, use_cache=False)
    by_engram = {}
    for event in fresh.history.newest_first():
        if (event.get("actor") or {}).get("kind") == "human":
            by_engram.setdefault(event["engram_id"], fresh.trust(event).state)
    assert by_engram == {
        drafts[0]: TrustState.VALID,
        drafts[1]: TrustState.UNSIGNED,
        drafts[2]: TrustState.INVALID,
        drafts[3]: TrustState.INVALID,
        drafts[4]: TrustState.UNKNOWN_SIGNER,
        drafts[5]: TrustState.INVALID,
    }
    # the forged review records are not human verdicts either, even one borrowing a genuine decision's instant
    forged = fresh.engram(drafts[1])
    assert forged["review"]["by"] == REVIEWER and not fresh.verdicts.review_trust(forged).counts_as_human
    flipped = fresh.engram(drafts[0])
    assert flipped["review"]["state"] == "approved" and flipped["review"]["at"] == genuine["timestamp"]
    assert not fresh.verdicts.review_trust(flipped).counts_as_human
    # only the genuine rejection is a tombstone that counts
    counted = [v for v in fresh.verdicts.rejected_verdicts().values() if v.trust.counts_as_human]
    assert [v.engram_id for v in counted] == [drafts[0]]
    history_filter = __import__("plur_desk.app.history.history_index", fromlist=["HistoryFilter"]).HistoryFilter
    invalid = fresh.history.newest_first(history_filter(trust=frozenset({TrustState.INVALID})))
    assert sorted(e["engram_id"] for e in invalid) == sorted([drafts[2], drafts[3], drafts[5]])

    report = run_check(store)
    assert report.exit_code == 1
    listed = {(c["engram_id"], c["trust"]) for c in report.untrusted}
    assert listed == {
        (drafts[0], "review_without_decision"),  # the flipped review record: no verified decision set it
        (drafts[1], "unsigned"),
        # the genuine signature copied onto another engram, and a tampered copy of it: check names each line whose
        # signature an earlier line already holds a replay before judging it (the window shows it invalid)
        (drafts[2], "replayed_event"),
        (drafts[3], "invalid"),
        (drafts[4], "unknown_signer"),
        (drafts[5], "replayed_event"),
    }
    cli = subprocess.run(
        [sys.executable, "-m", "plur_desk", "check", str(store), "--json"], capture_output=True, timeout=300
    )
    assert cli.returncode == 1, cli.stderr.decode()
    assert len(json.loads(cli.stdout)["untrusted_human_claims"]) == 7  # five events and two forged review records
