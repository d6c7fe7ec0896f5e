"""Issue 36, items 3 and 4: an agent borrowing a reviewer's authority with only what it can write (engrams.yaml
through the real PLUR's updateEngram, history through PLUR's appendHistory, keys.yaml). Each is shown for what it
is, in the session and by `check`, which exits 1 naming the file, the line and the reason."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from plur_desk.app.check import run_check
from plur_desk.app.review.bootstrap import open_session
from plur_desk.domain.commands import ApproveDrafts
from plur_desk.domain.trust import TrustState
from plur_desk.ui.review.detail import engram_html

from support.node import plur_env, run_node

pytestmark = pytest.mark.interop
ALICE = "Alice"


def _agent(store, home, payload):
    home.mkdir(parents=True, exist_ok=True)
    return run_node("borrow_authority.mjs", payload=payload, env=plur_env(store, home))


def _human_events(store):
    found = []
    for path in sorted((store / "history").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            event = json.loads(line)
            if (event.get("actor") or {}).get("kind") == "human":
                found.append(event)
    return found


def _reasons(report):
    return {(c["file"], c["engram_id"], c["reason"]) for c in report.untrusted}


def _line_of(store, engram_id):
    lines = (store / "engrams.yaml").read_text().splitlines()
    return next(n for n, text in enumerate(lines, 1) if text.strip() == f"- id: {engram_id}")


def test_an_undo_reversed_through_plurs_update_claims_a_review_that_was_undone(store, node_home):
    alice = open_session(store, ALICE, use_cache=False)
    draft = alice.queue.rows()[0].id
    alice.execute(ApproveDrafts(tuple(alice.writes.seen([draft]))))
    review = alice.engram(draft)["review"]
    alice.undo()
    assert run_check(store).exit_code == 0

    _agent(store, node_home, {"op": "restore", "id": draft, "review": review})

    again = open_session(store, ALICE, use_cache=False)
    restored = again.engram(draft)
    assert restored["commitment"] == "decided" and restored["review"] == review  # PLUR kept what the agent wrote
    standing = again.verdicts.review_trust(restored)
    assert not standing.counts_as_human  # (main: "signed", the approval the undo took back)
    assert standing.state is TrustState.UNDONE
    assert standing.label == "claims a review that was undone"
    assert draft in again.verdicts.unverified_reviews()
    assert "claims a review that was undone" in engram_html(again, draft)
    # her genuine approval still verifies as hers: it is the record that stands for nothing now
    assert [again.trust(e).state for e in _human_events(store)] == [TrustState.VALID, TrustState.VALID]
    report = run_check(store)
    assert report.exit_code == 1
    (claim,) = report.untrusted
    assert (claim["file"], claim["line"], claim["reason"]) == (
        "engrams.yaml",
        _line_of(store, draft),
        "undone_review_restored",
    )
    assert f"UNDONE_REVIEW_RESTORED engrams.yaml line {claim['line']}: review: approved {draft}" in report.to_text()


def test_an_agent_registering_human_bob_with_its_own_key_decides_nothing(store, node_home):
    alice = open_session(store, ALICE, use_cache=False)
    drafts = [d.id for d in alice.queue.rows()]
    alice.execute(ApproveDrafts(tuple(alice.writes.seen([drafts[0]]))))
    _agent(store, node_home, {"op": "impersonate", "identity": "human:Bob", "name": "Bob", "id": drafts[1]})

    again = open_session(store, ALICE, use_cache=False)
    (forged,) = [e for e in _human_events(store) if e["engram_id"] == drafts[1]]
    trust = again.trust(forged)
    assert not trust.counts_as_human  # (main: valid, as keys.yaml had the agent's key for human:Bob)
    assert trust.state is TrustState.UNTRUSTED_KEY
    assert "have not trusted" in trust.detail
    assert not again.verdicts.review_trust(again.engram(drafts[1])).counts_as_human
    assert again.verdicts.review_trust(again.engram(drafts[0])).counts_as_human  # hers
    assert "approved by Alice (signed)" in engram_html(again, drafts[0])
    assert "approved by Bob: UNTRUSTED key" in engram_html(again, drafts[1])
    report = run_check(store)
    assert report.exit_code == 1
    assert ("history/" + forged["timestamp"][:7] + ".jsonl", drafts[1], "untrusted_key") in _reasons(report)
    assert ("engrams.yaml", drafts[1], "untrusted_key") in _reasons(report)  # the record: backed by that event only


@pytest.mark.parametrize("name", ["alice", "\u0410lice", "ALICE", "A\u200blice", "Al\u0456ce"])
def test_a_look_alike_of_a_trusted_reviewer_is_flagged_and_refused_as_a_new_reviewer(store, node_home, name):
    alice = open_session(store, ALICE, use_cache=False)
    drafts = [d.id for d in alice.queue.rows()]
    alice.execute(ApproveDrafts(tuple(alice.writes.seen([drafts[0]]))))
    identity = "human:" + name.strip()
    _agent(store, node_home, {"op": "impersonate", "identity": identity, "name": name.strip(), "id": drafts[1]})

    again = open_session(store, ALICE, use_cache=False)
    (forged,) = [e for e in _human_events(store) if e["engram_id"] == drafts[1]]
    trust = again.trust(forged)
    assert not trust.counts_as_human  # (main: valid, a new reviewer registered by whoever wrote keys.yaml)
    assert trust.state is TrustState.CONFUSABLE_IDENTITY and "human:Alice" in trust.detail
    assert trust.label == "LOOK-ALIKE name"
    report = run_check(store)
    assert report.exit_code == 1
    assert any(c["engram_id"] == drafts[1] and c["reason"] == "confusable_identity" for c in report.untrusted)
    assert any(c["file"] == "keys.yaml" and c["reason"] == "confusable_identity" for c in report.untrusted)
    from plur_desk.app.trust.signing import fingerprint
    from plur_desk.app.trust.trust_cli import main as trust_main

    listed = next(k for k in _keys(store) if k["identity"] == identity)["public_key"]
    assert trust_main(["--store", str(store), "add", identity, fingerprint(listed)]) == 1  # not trusted by hand
    assert not again.trust.trusted().keys_for(identity)
    # the look-alike is not auto-registered as a new reviewer on this machine: refused with a message
    from plur_desk.app.review.reviewer import InvalidReviewer

    with pytest.raises(InvalidReviewer, match="refused"):
        open_session(store, name, use_cache=False)
    assert [e["identity"] for e in _keys(store)].count(identity) == 1  # only the agent's entry


def _keys(store):
    import yaml

    return yaml.safe_load((store / "keys.yaml").read_text())["keys"]


def test_an_agent_key_listed_first_for_alice_forges_nothing_and_is_shown_at_open(store, node_home):
    alice = open_session(store, ALICE, use_cache=False)
    drafts = [d.id for d in alice.queue.rows()]
    alice.execute(ApproveDrafts(tuple(alice.writes.seen([drafts[0]]))))
    (genuine,) = _human_events(store)
    planted = _agent(
        store,
        node_home,
        {"op": "impersonate", "identity": "human:Alice", "name": ALICE, "id": drafts[1], "first": True},
    )
    assert _keys(store)[0]["public_key"] == planted["public_key"]  # what PLUR's lookup takes as Alice's key now

    again = open_session(store, ALICE, use_cache=False)
    (forged,) = [e for e in _human_events(store) if e["engram_id"] == drafts[1]]
    assert not again.trust(forged).counts_as_human  # (main: valid, the agent's key being first)
    assert again.trust(genuine).state is TrustState.VALID  # her own decision still verifies (main: invalid)
    assert again.trust(forged).state is TrustState.FOREIGN_KEY_FOR_IDENTITY
    notice = again.trust_notice()  # shown at open, before any decision (the window's banner)
    assert "not yours" in notice and planted["public_key"] not in notice
    from plur_desk.domain.trust import fingerprint

    assert fingerprint(planted["public_key"]) in notice
    # her own decisions keep working: signed with her key, valid, nothing asked, keys.yaml left as it is
    keys_before = (store / "keys.yaml").read_bytes()
    again.execute(ApproveDrafts(tuple(again.writes.seen([drafts[2]]))))
    (mine,) = [e for e in _human_events(store) if e["engram_id"] == drafts[2]]
    assert again.trust(mine).state is TrustState.VALID
    assert (store / "keys.yaml").read_bytes() == keys_before
    assert again.verdicts.review_trust(again.engram(drafts[2])).counts_as_human
    assert again.verdicts.review_trust(again.engram(drafts[0])).counts_as_human
    assert not again.verdicts.review_trust(again.engram(drafts[1])).counts_as_human
    report = run_check(store)
    assert report.exit_code == 1
    keys_claim = next(c for c in report.untrusted if c["file"] == "keys.yaml")
    assert keys_claim["reason"] == "foreign_key_for_identity" and keys_claim["line"] == 2
    assert any(c["engram_id"] == drafts[1] and c["reason"] == "foreign_key_for_identity" for c in report.untrusted)
    cli = subprocess.run(
        [sys.executable, "-m", "plur_desk", "check", str(store), "--json"], capture_output=True, timeout=300
    )
    assert cli.returncode == 1, cli.stderr.decode()
    listed = {(c["file"], c["reason"]) for c in json.loads(cli.stdout)["untrusted_human_claims"]}
    assert (
        listed
        == {
            ("keys.yaml", "foreign_key_for_identity"),  # the planted entry
            ("history/" + forged["timestamp"][:7] + ".jsonl", "foreign_key_for_identity"),  # what it signed
            ("engrams.yaml", "foreign_key_for_identity"),  # the review record that event is all it has
        }
    )
