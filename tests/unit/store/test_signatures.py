"""Signatures over PLUR's canonical bytes, checked with an independent Ed25519 (PyNaCl), and the trust verdicts."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from nacl.exceptions import BadSignatureError
from nacl.signing import VerifyKey

from plur_desk.domain.trust import TrustedKey, TrustedKeys, TrustState, fingerprint
from plur_desk.store.history.chain import event_hash
from plur_desk.store.keys.keys_file import KeyRegistry, read_keys, register_key, replace_key
from plur_desk.store.keys.signatures import classify, private_key_der, public_key_b64, sign

# PLUR-HISTORY-CHAIN.md §1.1 test vector `cjk-content`
CJK = {
    "event": "engram_created",
    "engram_id": "ENG-2026-0101-001",
    "timestamp": "2026-01-01T00:00:00.000Z",
    "data": {"statement": "日本語のテスト記録", "type": "behavioral"},
    "prev": None,
}
CJK_HASH = "b252e6b38f8a651b12a566bae304b03a6f3af8370d45285999bbae7d777c5eff"
# `nested-data`, chained onto the first
NESTED = {
    "event": "engram_updated",
    "engram_id": "ENG-2026-0101-002",
    "timestamp": "2026-01-01T00:01:00.000Z",
    "data": {"top_level": "value", "nested": {"tags": ["a", "b"], "count": 3, "meta": {"active": True}}},
    "prev": CJK_HASH,
}
NESTED_HASH = "37a75402d49bb970710019c424b459e98a2dfcfba492187e2d45b8da6bf791cb"


def _doc_bytes(event: dict) -> bytes:
    """The §1.1 bytes recomputed without our canonicaliser (valid for ASCII keys, strings and small ints)."""
    stripped = {k: v for k, v in event.items() if k not in ("hash", "signature", "signer")}
    return json.dumps(stripped, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _nacl_verify(event: dict, public_spki_b64: str) -> bool:
    raw = base64.b64decode(public_spki_b64)[-32:]  # SPKI DER for Ed25519: 12-byte prefix + 32-byte key
    try:
        VerifyKey(raw).verify(_doc_bytes(event), base64.b64decode(event["signature"]))
    except BadSignatureError:
        return False
    return True


def _human(name="Ada", **extra):
    event = {
        "event": "engram_updated",
        "engram_id": "ENG-2026-1201-001",
        "timestamp": "2026-12-02T12:00:00.000Z",
        "data": {"action": "approve", "field": "commitment", "from": "draft", "to": "decided"},
        "actor": {"asserted_by": name, "kind": "human", "runtime": {"name": "plur-desk", "version": "0.1.0"}},
    }
    event.update(extra)
    return event


@pytest.mark.parametrize(("vector", "digest"), [(CJK, CJK_HASH), (NESTED, NESTED_HASH)])
def test_signature_over_the_vector_bytes_verifies_independently(vector, digest):
    assert hashlib.sha256(_doc_bytes(vector)).hexdigest() == digest  # the recomputation is the doc's
    key = Ed25519PrivateKey.generate()
    signed = sign(vector, key, "human:Ada")
    assert event_hash(signed) == digest  # signing adds nothing to the hashed bytes
    assert list(signed)[-2:] == ["signature", "signer"] and signed["signer"] == "human:Ada"
    assert len(base64.b64decode(signed["signature"], validate=True)) == 64
    assert signed["signature"].endswith("=")  # standard padded base64 (64 bytes -> 88 chars)
    assert _nacl_verify(signed, public_key_b64(key))
    assert not _nacl_verify({**signed, "prev": "0" * 64}, public_key_b64(key))
    assert len(base64.b64decode(public_key_b64(key))) == 44 and len(private_key_der(key)) == 48


def _trusting(identity, *keys, source="own"):
    return TrustedKeys(tuple(TrustedKey(identity, public_key_b64(k), source) for k in keys))


def test_the_verdicts(tmp_path):
    ada, agent = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    register_key(tmp_path, "human:Ada", public_key_b64(ada), "2026-12-01T00:00:00.000Z")
    registry, trusted = read_keys(tmp_path), _trusting("human:Ada", ada)
    good = sign(_human(), ada, "human:Ada")
    assert classify(good, registry, trusted).state is TrustState.VALID
    assert classify(_human(), registry, trusted).state is TrustState.UNSIGNED
    assert classify(sign(_human(), agent, "human:Mallory"), registry, trusted).state is TrustState.UNKNOWN_SIGNER
    assert classify(sign(_human(), agent, "human:Ada"), registry, trusted).state is TrustState.INVALID
    tampered = dict(good, data={**good["data"], "to": "locked"})
    assert classify(tampered, registry, trusted).state is TrustState.INVALID
    copied = dict(_human(engram_id="ENG-2026-1201-999"), signature=good["signature"], signer="human:Ada")
    assert classify(copied, registry, trusted).state is TrustState.INVALID
    # a valid signature by Ada on an event that claims Bob is not Bob's verdict
    assert classify(sign(_human("Bob"), ada, "human:Ada"), registry, trusted).state is TrustState.INVALID
    agent_event = {**_human(), "actor": {"asserted_by": "agent:miles"}}
    assert classify(agent_event, registry, trusted).state is TrustState.NOT_HUMAN
    # trust is the reader's, never keys.yaml's: a registered key nobody trusted verifies, and counts for nothing
    assert classify(good, registry).state is TrustState.UNTRUSTED_KEY
    assert classify(good, KeyRegistry()).state is TrustState.UNKNOWN_SIGNER
    assert classify(good, KeyRegistry(), trusted).state is TrustState.VALID  # keys.yaml emptied: still Ada's


def test_rotation_keeps_old_signatures_valid_and_revocation_invalidates_later_ones(tmp_path):
    old, new, newer = (Ed25519PrivateKey.generate() for _ in range(3))
    register_key(tmp_path, "human:Ada", public_key_b64(old), "2026-12-01T00:00:00.000Z")
    before = sign(_human(timestamp="2026-12-01T10:00:00.000Z"), old, "human:Ada")
    replace_key(tmp_path, "human:Ada", public_key_b64(new), "2026-12-02T00:00:00.000Z", revoke=False)
    registry, trusted = read_keys(tmp_path), _trusting("human:Ada", old, new, newer)
    assert [e.public_key for e in registry.for_identity("human:Ada")] == [public_key_b64(new), public_key_b64(old)]
    assert registry.current("human:Ada").public_key == public_key_b64(new)  # what PLUR's lookup finds
    assert classify(before, registry, trusted).state is TrustState.VALID
    after_retired = sign(_human(timestamp="2026-12-03T10:00:00.000Z"), old, "human:Ada")
    assert classify(after_retired, registry, trusted).state is TrustState.INVALID
    assert classify(sign(_human(timestamp="2026-12-03T10:00:00.000Z"), new, "human:Ada"), registry, trusted).state is (
        TrustState.VALID
    )
    # the new key is lost: revoked at 2026-12-04; what it signed before still counts, later claims do not
    replace_key(tmp_path, "human:Ada", public_key_b64(newer), "2026-12-04T00:00:00.000Z", revoke=True)
    registry = read_keys(tmp_path)
    assert [e.revoked_at for e in registry.for_identity("human:Ada")] == [None, "2026-12-04T00:00:00.000Z", None]
    assert classify(sign(_human(timestamp="2026-12-03T11:00:00.000Z"), new, "human:Ada"), registry, trusted).state is (
        TrustState.VALID
    )
    forged = sign(_human(timestamp="2026-12-05T11:00:00.000Z"), new, "human:Ada")
    assert classify(forged, registry, trusted).state is TrustState.INVALID
    assert "revoked" in classify(forged, registry, trusted).detail


def test_keys_yaml_other_entries_and_fields_are_kept(tmp_path):
    (tmp_path / "keys.yaml").write_text(
        "keys:\n  - identity: agent:miles\n    public_key: QUJD\n    added_at: '2026-09-01T00:00:00.000Z'\n"
        "    note: kept\n"
    )
    key = Ed25519PrivateKey.generate()
    assert register_key(tmp_path, "human:Ada", public_key_b64(key), "2026-12-02T12:00:00.000Z")
    assert not register_key(tmp_path, "human:Ada", public_key_b64(key), "2026-12-03T12:00:00.000Z")
    text = (tmp_path / "keys.yaml").read_text()
    assert text.startswith(
        "keys:\n  - identity: agent:miles\n    public_key: QUJD\n    added_at: '2026-09-01T00:00:00.000Z'\n"
        "    note: kept\n  - identity: human:Ada\n"
    )
    from plur_desk.infra.errors import ActionRefused

    with pytest.raises(ActionRefused, match="confirmation"):
        register_key(tmp_path, "human:Ada", public_key_b64(Ed25519PrivateKey.generate()), "2026-12-03T00:00:00.000Z")
    assert (tmp_path / "keys.yaml").read_text() == text
    assert not list(tmp_path.glob("*.tmp"))


def test_string_escaping_matches_json_stringify():
    """The fast escaper writes what JSON.stringify writes (= json.dumps without ASCII escaping, plus lone
    surrogates as \\udXXX)."""
    import random

    from plur_desk.store.history.chain import js_stringify

    rng = random.Random(1)
    alphabet = [chr(i) for i in range(0x80)] + ["\u2028", "\u2029", "é", "日", "\U0001f600", "\ufeff"]
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 20)))
        assert js_stringify(text) == json.dumps(text, ensure_ascii=False), repr(text)
    assert js_stringify("a\ud800b\udfff") == '"a\\ud800b\\udfff"'


def test_an_extra_key_appended_under_a_reviewers_identity_is_not_trusted(tmp_path):
    ada, agent = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    register_key(tmp_path, "human:Ada", public_key_b64(ada), "2026-12-01T00:00:00.000Z")
    with open(tmp_path / "keys.yaml", "a") as handle:  # what an agent with write access to the store can append
        handle.write(f"  - identity: human:Ada\n    public_key: {public_key_b64(agent)}\n    added_at: x\n")
    registry, trusted = read_keys(tmp_path), _trusting("human:Ada", ada)
    assert len(registry.for_identity("human:Ada")) == 2
    assert classify(sign(_human(), agent, "human:Ada"), registry, trusted).state is TrustState.FOREIGN_KEY_FOR_IDENTITY
    assert classify(sign(_human(), ada, "human:Ada"), registry, trusted).state is TrustState.VALID


def test_a_review_record_is_backed_only_by_the_event_of_the_same_decision():
    from plur_desk.domain.trust import backs_review

    approval = _human()
    record = {"state": "approved", "by": "Ada", "at": approval["timestamp"]}
    assert backs_review(approval, approval["engram_id"], record)
    assert not backs_review(approval, approval["engram_id"], {**record, "state": "rejected"})
    assert not backs_review(approval, approval["engram_id"], {**record, "by": "Bob"})
    assert not backs_review(approval, "ENG-OTHER", record)


def test_a_reviewer_with_many_keys_has_a_new_line_verified_once_and_the_verdict_is_the_same(tmp_path):
    """Keys are tried newest first, each distinct key once: what a rotated or re-created key signs now costs one
    verification, whatever the trust file kept; an old key's line is still found, with the same verdict."""
    keys = [Ed25519PrivateKey.generate() for _ in range(6)]
    register_key(tmp_path, "human:Ada", public_key_b64(keys[-1]), "2026-12-01T00:00:00.000Z")
    registry = read_keys(tmp_path)
    listed = [*keys, keys[0]]  # a key listed twice (own, and endorsed by a teammate)
    trusted = TrustedKeys(tuple(TrustedKey("human:Ada", public_key_b64(k), "own") for k in listed))
    tried: list[str] = []

    def counting(event, public_key):  # type: ignore[no-untyped-def]
        from plur_desk.store.keys.signatures import verify

        tried.append(public_key)
        return verify(event, public_key)

    newest = classify(sign(_human(), keys[-1], "human:Ada"), registry, trusted, counting)
    assert newest.state is TrustState.VALID and tried == [public_key_b64(keys[-1])]
    tried.clear()
    oldest = classify(sign(_human(), keys[0], "human:Ada"), registry, trusted, counting)
    assert oldest.state is TrustState.VALID and fingerprint(public_key_b64(keys[0])) in oldest.detail
    assert len(tried) == len(set(tried)) == 6  # each distinct key once
    tried.clear()
    forged = classify(sign(_human(), Ed25519PrivateKey.generate(), "human:Ada"), registry, trusted, counting)
    assert forged.state is TrustState.INVALID
    assert len(tried) == len(set(tried)) == 6  # each trusted key once; the one keys.yaml lists is one of them
