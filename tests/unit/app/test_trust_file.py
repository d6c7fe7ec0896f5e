"""Trust is the user's: their trust file (own key, keys trusted by fingerprint) and endorsements by keys they trust.
keys.yaml names keys; an endorsement an agent writes, alters or signs itself vouches for nothing."""

from __future__ import annotations

import json

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from plur_desk.app.trust.trust_cli import main as trust_main
from plur_desk.app.trust.trust_file import TrustFile
from plur_desk.app.trust.verifier import TrustChecker
from plur_desk.domain.trust import OWN, TRUSTED, TrustState, fingerprint
from plur_desk.store.keys.endorsements import ENDORSEMENTS, append_endorsement, endorsement
from plur_desk.store.keys.keys_file import register_key, replace_key
from plur_desk.store.keys.signatures import public_key_b64, sign

AT = "2026-12-02T12:00:00.000Z"


def _event(name, engram_id="ENG-2026-12-01-001", timestamp=AT):
    return {
        "event": "engram_updated",
        "engram_id": engram_id,
        "timestamp": timestamp,
        "data": {"action": "approve", "field": "commitment", "from": "draft", "to": "decided"},
        "actor": {"asserted_by": name, "kind": "human"},
    }


def _person(root, name):
    key = Ed25519PrivateKey.generate()
    register_key(root, f"human:{name}", public_key_b64(key), AT)
    return key


def _checker(root, tmp_path, own=None):
    trust_file = TrustFile(tmp_path / "alice-config")
    if own is not None:
        trust_file.add("human:Alice", public_key_b64(own), OWN, AT)
    return TrustChecker(root, trust_file), trust_file


def test_trust_add_takes_the_key_whose_fingerprint_the_person_gave_and_nothing_else(tmp_path, capsys):
    root = tmp_path / "store"
    root.mkdir()
    bob = _person(root, "Bob")
    bobs = sign(_event("Bob"), bob, "human:Bob")
    checker = TrustChecker(root)  # this test's own config folder: nobody trusted yet
    assert checker(bobs).state is TrustState.UNTRUSTED_KEY

    assert trust_main(["--store", str(root), "add", "human:Bob", "0123456789abcdef"]) == 1
    assert "lists no key of human:Bob with fingerprint 0123456789abcdef" in capsys.readouterr().out
    assert not TrustFile().path.exists()  # nothing written
    assert checker(bobs).state is TrustState.UNTRUSTED_KEY

    assert trust_main(["--store", str(root), "add", "Bob", fingerprint(public_key_b64(bob))]) == 0
    assert "You now trust human:Bob's key" in capsys.readouterr().out
    assert checker(bobs).state is TrustState.VALID
    doc = json.loads(TrustFile().path.read_text())
    assert doc["schema_version"] == 1
    assert [(k["identity"], k["source"], k["fingerprint"]) for k in doc["keys"]] == [
        ("human:Bob", TRUSTED, fingerprint(public_key_b64(bob)))
    ]
    assert trust_main(["--store", str(root), "list"]) == 0
    assert "human:Bob" in capsys.readouterr().out
    assert trust_main(["remove", "human:Bob"]) == 0
    assert checker(bobs).state is TrustState.UNTRUSTED_KEY


def test_a_chain_of_endorsements_from_a_trusted_key_is_trusted_and_nothing_an_agent_writes_is(tmp_path):
    root = tmp_path / "store"
    root.mkdir()
    alice, bob, carol, dave, agent = (Ed25519PrivateKey.generate() for _ in range(5))
    checker, trust_file = _checker(root, tmp_path, own=alice)
    trust_file.add("human:Bob", public_key_b64(bob), TRUSTED, AT)
    # Bob vouches for Carol, Carol for Dave: a team shares trust without each pinning every key
    append_endorsement(root, endorsement("human:Carol", public_key_b64(carol), "human:Bob", AT, bob))
    append_endorsement(root, endorsement("human:Dave", public_key_b64(dave), "human:Carol", AT, carol))
    # an agent: an endorsement signed with its own key in Bob's name, one of Bob's altered to its key, and one
    # of Bob's (genuine) endorsements copied for Alice's own identity
    append_endorsement(root, endorsement("human:Eve", public_key_b64(agent), "human:Bob", AT, agent))
    genuine = endorsement("human:Mallory", public_key_b64(carol), "human:Bob", AT, bob)
    append_endorsement(root, {**genuine, "public_key": public_key_b64(agent)})
    append_endorsement(root, endorsement("human:Alice", public_key_b64(agent), "human:Bob", AT, bob))
    with open(root / ENDORSEMENTS, "a") as handle:
        handle.write("[[[[ not json\n")

    assert checker(sign(_event("Carol"), carol, "human:Carol")).state is TrustState.VALID
    dave_says = checker(sign(_event("Dave"), dave, "human:Dave"))
    assert dave_says.state is TrustState.VALID and "endorsed by human:Carol" in dave_says.detail
    assert not checker(sign(_event("Eve"), agent, "human:Eve")).counts_as_human
    assert not checker(sign(_event("Mallory"), agent, "human:Mallory")).counts_as_human
    assert not checker(sign(_event("Alice"), agent, "human:Alice")).counts_as_human  # only Alice says what is hers
    assert checker(sign(_event("Alice"), alice, "human:Alice")).state is TrustState.VALID
    # nobody trusts Bob any more: his endorsements, and those resting on them, fall with him
    trust_file.remove("human:Bob")
    assert not checker(sign(_event("Dave"), dave, "human:Dave")).counts_as_human


def test_a_revocation_kept_in_the_trust_file_survives_an_agent_removing_it_from_keys_yaml(tmp_path):
    root = tmp_path / "store"
    root.mkdir()
    lost, new = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    checker, trust_file = _checker(root, tmp_path, own=lost)
    register_key(root, "human:Alice", public_key_b64(lost), AT)
    trust_file.add("human:Alice", public_key_b64(new), OWN, AT)
    replace_key(root, "human:Alice", public_key_b64(new), "2026-12-03T00:00:00.000Z", revoke=True)
    trust_file.revoke("human:Alice", [public_key_b64(lost)], "2026-12-03T00:00:00.000Z")
    later = sign(_event("Alice", timestamp="2026-12-04T00:00:00.000Z"), lost, "human:Alice")
    assert checker(later).state is TrustState.INVALID
    (root / "keys.yaml").unlink()  # an agent removes the registry (and its revocation mark)
    assert checker(later).state is TrustState.INVALID
    earlier = sign(_event("Alice", timestamp="2026-12-02T00:00:00.000Z"), lost, "human:Alice")
    assert checker(earlier).state is TrustState.VALID  # what the key signed before it was lost still counts


def test_an_unreadable_trust_file_trusts_nothing_and_says_so(tmp_path):
    root = tmp_path / "store"
    root.mkdir()
    alice = Ed25519PrivateKey.generate()
    checker, trust_file = _checker(root, tmp_path, own=alice)
    trust_file.path.write_text("{" * 100_000)
    assert checker(sign(_event("Alice"), alice, "human:Alice")).state is TrustState.UNKNOWN_SIGNER
    assert any("not valid JSON" in p for p in checker.problems)


def test_an_endorsements_file_that_is_a_fifo_is_not_opened(tmp_path):
    import os

    root = tmp_path / "store"
    (root / ".plur-desk").mkdir(parents=True)
    os.mkfifo(root / ENDORSEMENTS)  # would block a plain open() for ever (no writer)
    alice = Ed25519PrivateKey.generate()
    checker, _trust_file = _checker(root, tmp_path, own=alice)
    assert checker(sign(_event("Alice"), alice, "human:Alice")).state is TrustState.VALID
    assert any("not a regular file" in p for p in checker.problems)


def test_a_keys_yaml_that_is_a_fifo_is_never_opened_by_the_trust_checker(tmp_path):
    import os

    root = tmp_path / "store"
    root.mkdir()
    os.mkfifo(root / "keys.yaml")  # an open() for reading would wait for a writer for ever
    alice = Ed25519PrivateKey.generate()
    checker, _trust_file = _checker(root, tmp_path, own=alice)
    assert checker(sign(_event("Alice"), alice, "human:Alice")).state is TrustState.VALID  # her key is hers
    assert "not a regular file" in (checker.registry().problem or "")


def test_the_demo_reviewer_is_trusted_in_a_demo_copy_only(tmp_path):
    """A newcomer's `--demo` shows the demo reviewer's decisions as signed; the very same files anywhere else (an
    agent copying the demo's keys.yaml and history into a real store) are an untrusted key, as any other."""
    import shutil

    from plur_desk.app.demo import copy_demo_store, demo_source

    demo = copy_demo_store()
    elsewhere = tmp_path / "store"
    shutil.copytree(demo_source(), elsewhere)

    def verdicts(root):
        checker = TrustChecker(root)
        lines = (root / "history").glob("*.jsonl")
        events = [json.loads(x) for path in lines for x in path.read_text().splitlines() if '"human"' in x]
        return {checker(e).state for e in events if e.get("signature")}

    assert verdicts(demo) == {TrustState.VALID}
    assert verdicts(elsewhere) == {TrustState.UNTRUSTED_KEY}


def test_a_key_the_user_stopped_trusting_is_not_brought_back_by_an_endorsement(tmp_path):
    # Bob's key was taken (an agent holds it): the user removes it. Alice's earlier endorsement of that key sits in
    # the store and must not keep it trusted, or whatever the agent signs as Bob stays "valid"
    root = tmp_path / "store"
    root.mkdir()
    alice, bob = _person(root, "Alice"), _person(root, "Bob")
    checker, trust_file = _checker(root, tmp_path, own=alice)
    trust_file.add("human:Bob", public_key_b64(bob), TRUSTED, AT)
    append_endorsement(root, endorsement("human:Bob", public_key_b64(bob), "human:Alice", AT, alice))
    forged = sign(_event("Bob", timestamp="2026-12-03T09:00:00.000Z"), bob, "human:Bob")
    assert checker(forged).state is TrustState.VALID
    assert trust_file.remove("human:Bob") == [fingerprint(public_key_b64(bob))]
    assert checker(forged).state is TrustState.UNTRUSTED_KEY
    assert not TrustChecker(root, trust_file).trusted().trusts("human:Bob", public_key_b64(bob))
    trust_file.add("human:Bob", public_key_b64(bob), TRUSTED, AT)  # trusted by hand again: counts again
    assert checker(forged).state is TrustState.VALID


def test_an_endorsed_key_for_a_name_that_looks_like_a_trusted_one_is_not_trusted(tmp_path):
    # an agent lists its key as "human:Alice" spelt with a Cyrillic A (U+0410) and gets a teammate to vouch for it:
    # whatever it signs under that name must still read as a look-alike of Alice, never as her valid decision
    root = tmp_path / "store"
    root.mkdir()
    alice, bob = _person(root, "Alice"), _person(root, "Bob")
    agent = _person(root, "\u0410lice")
    checker, trust_file = _checker(root, tmp_path, own=alice)
    trust_file.add("human:Bob", public_key_b64(bob), TRUSTED, AT)
    append_endorsement(root, endorsement("human:\u0410lice", public_key_b64(agent), "human:Bob", AT, bob))
    forged = sign(_event("\u0410lice"), agent, "human:\u0410lice")
    assert checker(forged).state is TrustState.CONFUSABLE_IDENTITY
    assert not checker.trusted().trusts("human:\u0410lice", public_key_b64(agent))


def test_trust_endorse_refuses_a_name_that_looks_like_a_trusted_one(tmp_path, capsys):
    root = tmp_path / "store"
    root.mkdir()
    alice = _person(root, "Alice")
    agent = _person(root, "\u0410lice")
    TrustFile().add("human:Alice", public_key_b64(alice), OWN, AT)
    code = trust_main(
        ["--store", str(root), "endorse", "human:\u0410lice", fingerprint(public_key_b64(agent)), "--reviewer", "Alice"]
    )
    assert code != 0 and "looks like 'human:Alice'" in capsys.readouterr().out
    assert not (root / ENDORSEMENTS).exists()


def test_copies_of_a_genuine_endorsement_add_its_key_once(tmp_path, monkeypatch):
    # anyone can append copies of a genuine line: each copy once added the key again, so every signature claiming
    # that name (an agent's forgeries, thousands of them) was checked against every copy
    import plur_desk.store.keys.signatures as signatures

    root = tmp_path / "store"
    root.mkdir()
    alice, bob, agent = _person(root, "Alice"), _person(root, "Bob"), Ed25519PrivateKey.generate()
    checker, _trust_file = _checker(root, tmp_path, own=alice)
    line = endorsement("human:Bob", public_key_b64(bob), "human:Alice", AT, alice)
    for _ in range(500):
        append_endorsement(root, line)
    assert len(checker.trusted().keys_for("human:Bob")) == 1
    calls = []
    real = signatures.verify
    monkeypatch.setattr(signatures, "verify", lambda event, key: calls.append(key) or real(event, key))
    forged = sign(_event("Bob"), agent, "human:Bob")
    assert checker(forged).state is TrustState.INVALID
    assert calls.count(public_key_b64(bob)) <= 2  # the trusted key once, keys.yaml's listing of it once


def test_a_forged_claim_is_not_checked_against_every_key_an_agent_lists_for_the_name(tmp_path, monkeypatch):
    # keys.yaml is anyone's to write: thousands of keys listed for human:Alice made each forged "Alice" line cost
    # thousands of verifications (a few forged lines held `check` and the window for minutes)
    import plur_desk.store.keys.signatures as signatures

    root = tmp_path / "store"
    root.mkdir()
    alice = Ed25519PrivateKey.generate()
    listed = [public_key_b64(Ed25519PrivateKey.generate()) for _ in range(300)]
    (root / "keys.yaml").write_text(
        "keys:\n" + "".join(f"  - identity: human:Alice\n    public_key: {k}\n    added_at: '{AT}'\n" for k in listed)
    )
    checker, _trust_file = _checker(root, tmp_path, own=alice)
    calls = []
    real = signatures.verify
    monkeypatch.setattr(signatures, "verify", lambda event, key: calls.append(key) or real(event, key))
    forged = sign(_event("Alice"), Ed25519PrivateKey.generate(), "human:Alice")
    assert checker(forged).state is TrustState.INVALID
    assert len(calls) <= 17  # her key, and at most 16 of those listed (a rotation history, not the whole list)
    mine = sign(_event("Alice"), alice, "human:Alice")
    assert checker(mine).state is TrustState.VALID  # her own key, listed nowhere, still decides
