"""The reviewer key (keyring or 0600 file, asked for once when locked) and signed review sessions (no Qt, no Node)."""

from __future__ import annotations

import itertools
import json
import stat
from datetime import timedelta

import keyring
import keyring.errors
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import null

from plur_desk.app.history.history_index import HistoryFilter
from plur_desk.app.review.session import ReviewSession
from plur_desk.app.trust.signing import ReviewerKeys
from plur_desk.app.trust.vault import SERVICE, KeyVault
from plur_desk.domain.commands import (
    ApproveDrafts,
    ConfirmTension,
    DismissTension,
    EditStatement,
    ExpireNow,
    RejectDrafts,
    SetValidity,
    SplitInTime,
)
from plur_desk.domain.review import Reviewer, make_event
from plur_desk.domain.trust import TrustState
from plur_desk.infra.clock import FixedClock
from plur_desk.infra.errors import KeyConflict, KeyUnavailable
from plur_desk.infra.paths import data_dir
from plur_desk.store.history.chain import event_hash
from plur_desk.store.keys.keys_file import read_keys
from plur_desk.store.keys.signatures import check_signature, public_key_b64
from plur_desk.store.lists.yaml_dump import dump_engrams_document
from plur_desk.store.plur_store import PlurStore

from support.moments import NOW


def _engram(i: int) -> dict:
    return {
        "id": f"ENG-2026-11-0{i}-001",
        "version": 2,
        "status": "active",
        "type": "behavioral",
        "scope": "project:web",
        "statement": f"Statement number {i}",
        "commitment": "draft",
        "created_at": f"2026-11-0{i}T10:00:00.000Z",
        "content_hash": f"{i}" * 64,
    }


class MemoryKeyring(KeyringBackend):
    """A keyring that works, in memory (a stand-in for Secret Service); `locked` makes reads refuse."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.secrets: dict[tuple[str, str], str] = {}
        self.locked = False
        self.reads = 0

    def get_password(self, service, username):
        self.reads += 1
        if self.locked:
            raise keyring.errors.KeyringLocked("locked")
        return self.secrets.get((service, username))

    def set_password(self, service, username, password):
        self.secrets[(service, username)] = password

    def delete_password(self, service, username):
        self.secrets.pop((service, username), None)


def _store(tmp_path, history: list[dict] | None = None) -> PlurStore:
    root = tmp_path / "store"
    root.mkdir()
    (root / "engrams.yaml").write_text(dump_engrams_document({"engrams": [_engram(i) for i in range(1, 4)]}))
    if history is not None:
        (root / "history").mkdir()
        (root / "history" / "2026-12.jsonl").write_text("".join(json.dumps(e) + "\n" for e in history))
    store = PlurStore(root)
    store.load()
    return store


def _session(store, name="Ada Reviewer", ask=None, now=NOW) -> ReviewSession:
    keys = ReviewerKeys(store.root, Reviewer(name), KeyVault(data_dir()), ask)
    s = ReviewSession(store, Reviewer(name), FixedClock(now), keys)
    s.load_history()
    return s


def _lines(store):
    path = store.root / "history" / "2026-12.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_first_decision_creates_a_0600_key_outside_the_store_and_registers_it(tmp_path):
    store = _store(tmp_path)
    session = _session(store)
    first = ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"])))
    notices = session.execute(first).warnings  # shown by the window after the action
    assert any("0600" in n for n in notices) and any("keys.yaml" in n for n in notices)
    assert (
        session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-02-001"])))).warnings == ()
    )  # said once
    key_file = data_dir() / "keys" / "human:Ada_Reviewer.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600 and len(key_file.read_bytes()) == 48
    assert not list(store.root.rglob("*.key"))
    entry = read_keys(store.root).current("human:Ada Reviewer")
    assert entry is not None and entry.public_key == public_key_b64(session.keys.key())
    event = _lines(store)[0]
    assert event["signer"] == "human:Ada Reviewer"
    assert session.trust(event).state is TrustState.VALID
    assert session.history.newest_first()[0]["signature"] == _lines(store)[-1]["signature"]


def test_keyring_is_used_when_it_works_and_no_file_is_written(tmp_path):
    ring = MemoryKeyring()
    keyring.set_keyring(ring)
    session = _session(_store(tmp_path))
    change = session.execute(RejectDrafts(tuple(session.writes.seen(["ENG-2026-11-02-001"])), "wrong"))
    assert (SERVICE, "human:Ada Reviewer") in ring.secrets
    assert not (data_dir() / "keys").exists()
    assert any("keyring" in n for n in change.warnings)


def test_null_keyring_that_keeps_nothing_falls_back_to_the_file(tmp_path):
    keyring.set_keyring(null.Keyring())
    session = _session(_store(tmp_path))
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"]))))
    assert (data_dir() / "keys" / "human:Ada_Reviewer.key").exists()


def test_locked_keyring_asks_once_and_declining_writes_nothing(tmp_path):
    ring = MemoryKeyring()
    keyring.set_keyring(ring)
    store = _store(tmp_path)
    (_s := _session(store)).execute(ApproveDrafts(tuple(_s.writes.seen(["ENG-2026-11-01-001"]))))  # a key exists now
    before = (store.root / "engrams.yaml").read_bytes(), (store.root / "history" / "2026-12.jsonl").read_bytes()
    ring.locked = True
    asked: list[str] = []
    declining = _session(store, ask=lambda why: asked.append(why) or False)
    with pytest.raises(KeyUnavailable, match="not written"):
        declining.execute(ApproveDrafts(tuple(declining.writes.seen(["ENG-2026-11-02-001"]))))
    assert len(asked) == 1
    after = (store.root / "engrams.yaml").read_bytes(), (store.root / "history" / "2026-12.jsonl").read_bytes()
    assert after == before

    def unlock(_why):
        ring.locked = False
        return True

    (_s := _session(store, ask=unlock)).execute(ApproveDrafts(tuple(_s.writes.seen(["ENG-2026-11-02-001"]))))
    assert len(_lines(store)) == 2


def test_a_key_registered_by_someone_else_refuses_until_replaced_and_the_replacement_is_an_event(tmp_path):
    store = _store(tmp_path)
    impostor = _session(store)  # same identity, another machine (or an agent that registered first)
    impostor.execute(ApproveDrafts(tuple(impostor.writes.seen(["ENG-2026-11-01-001"]))))
    first = _lines(store)[0]
    (data_dir() / "keys" / "human:Ada_Reviewer.key").unlink()
    session = _session(store, now=NOW + timedelta(hours=1))
    engrams_before = (store.root / "engrams.yaml").read_bytes()
    with pytest.raises(KeyConflict, match="Reviewer identity"):
        session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-02-001"]))))
    assert (store.root / "engrams.yaml").read_bytes() == engrams_before
    change = session.replace_key(new_key=False)
    assert "replaced" in change.message
    event = _lines(store)[-1]
    assert event["event"] == "reviewer_key_changed" and event["data"]["action"] == "replace_key"
    assert session.trust(event).state is TrustState.VALID
    assert session.trust(first).state is TrustState.VALID  # signed before the old key was retired
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-02-001"]))))
    assert session.trust(_lines(store)[-1]).state is TrustState.VALID


def test_disowning_a_key_someone_else_registered_invalidates_everything_it_signed(tmp_path):
    store = _store(tmp_path)
    (_s := _session(store)).execute(
        ApproveDrafts(tuple(_s.writes.seen(["ENG-2026-11-01-001"])))
    )  # the "impostor" registers first and signs a decision
    forged = _lines(store)[0]
    (data_dir() / "keys" / "human:Ada_Reviewer.key").unlink()
    session = _session(store, now=NOW + timedelta(hours=1))
    valid_only = HistoryFilter(trust=frozenset({TrustState.VALID}))
    assert [e["engram_id"] for e in session.history.newest_first(valid_only)] == ["ENG-2026-11-01-001"]
    session.replace_key(new_key=False, disown=True)
    assert _lines(store)[-1]["data"]["action"] == "disown_key"
    assert session.trust(forged).state is TrustState.INVALID
    # the History view's cached verdicts follow keys.yaml
    assert [e["event"] for e in session.history.newest_first(valid_only)] == ["reviewer_key_changed"]
    assert session.trust(_lines(store)[-1]).state is TrustState.VALID


def test_chained_store_events_are_signed_with_prev_and_the_session_ends_with_a_signed_checkpoint(tmp_path):
    genesis = {
        "event": "engram_created",
        "engram_id": "ENG-2026-11-01-001",
        "timestamp": "2026-12-01T00:00:00.000Z",
        "data": {},
        "prev": None,
    }
    genesis["hash"] = event_hash(genesis)
    store = _store(tmp_path, [genesis])
    session = _session(store)
    assert session.end() is None  # nothing changed: no checkpoint
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001", "ENG-2026-11-02-001"]))))
    checkpoint = session.end()
    assert checkpoint is not None
    lines = _lines(store)
    assert [e["event"] for e in lines] == ["engram_created", "engram_updated", "engram_updated", "checkpoint"]
    for before, event in itertools.pairwise(lines):
        assert event["prev"] == before["hash"] and event["hash"] == event_hash(event)
        state, _detail, _entry = check_signature(event, read_keys(store.root), session.trust.trusted())
        assert state is TrustState.VALID
    assert lines[-1]["data"]["chain_head"] == lines[-1]["prev"] == lines[-2]["hash"]
    assert list(lines[-1]["data"]) == ["chain_head", "store_hash", "engram_count", "actor"]
    assert lines[-1]["data"]["engram_count"] == 3
    assert session.end() is None  # once per batch of changes


def test_every_kind_of_event_the_session_writes_is_signed_and_valid(tmp_path):
    from plur_desk.store.lists.yaml_dump import dump_tensions_document

    store = _store(tmp_path)
    tension = {
        "engram_a": "ENG-2026-11-01-001",
        "engram_b": "ENG-2026-11-02-001",
        "statement_a": "Statement number 1",
        "statement_b": "Statement number 2",
        "confidence": 0.9,
        "reason": "conflict",
        "detected_at": "2026-12-01T10:00:00.000Z",
        "status": "detected",
        "resolved_by": None,
        "resolved_at": None,
        "category": "factual",
    }
    records = [{"id": f"T-2026-1201-00{i}", **tension} for i in (1, 2, 3)]
    (store.root / "tensions.yaml").write_text(dump_tensions_document(records))
    store.load()
    session = _session(store)
    session.execute(ConfirmTension(session.writes.seen_tension("T-2026-1201-001")))
    session.execute(DismissTension(session.writes.seen_tension("T-2026-1201-002"), "not a conflict"))
    session.execute(SplitInTime(session.writes.seen_tension("T-2026-1201-003"), "2026-06-01"))
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-03-001"])), note="ok"))
    session.execute(EditStatement(session.writes.seen(["ENG-2026-11-01-001"])[0], "Statement number one"))
    session.execute(SetValidity(tuple(session.writes.seen(["ENG-2026-11-02-001"])), "2026-01-01", None))
    session.execute(ExpireNow(tuple(session.writes.seen(["ENG-2026-11-02-001"]))))
    session.undo()
    session.redo()
    session.replace_key(new_key=True)
    session.execute(RejectDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"])), "wrong"))
    lines = _lines(store)
    kinds = {(e["event"], (e.get("data") or {}).get("action")) for e in lines}
    assert len(lines) >= 11 and ("reviewer_key_changed", "replace_key") in kinds
    assert {e["signer"] for e in lines} == {"human:Ada Reviewer"}
    assert [session.trust(e).state for e in lines] == [TrustState.VALID] * len(lines)


def test_an_unreadable_key_file_refuses_clearly_and_writes_nothing(tmp_path):
    store = _store(tmp_path)
    key_file = data_dir() / "keys" / "human:Ada Reviewer.key".replace(" ", "_")
    key_file.parent.mkdir(parents=True)
    key_file.write_bytes(b"not a key")
    key_file.chmod(0o600)
    before = (store.root / "engrams.yaml").read_bytes()
    with pytest.raises(KeyUnavailable, match="not an Ed25519 key"):
        (_s := _session(store)).execute(ApproveDrafts(tuple(_s.writes.seen(["ENG-2026-11-01-001"]))))
    key_file.chmod(0o644)
    with pytest.raises(KeyUnavailable, match="0644"):
        (_s := _session(store)).execute(ApproveDrafts(tuple(_s.writes.seen(["ENG-2026-11-01-001"]))))
    assert (store.root / "engrams.yaml").read_bytes() == before
    assert not (store.root / "history").exists() and not (store.root / "keys.yaml").exists()


def test_a_keys_yaml_that_cannot_be_written_leaves_the_written_decision_with_a_notice(tmp_path):
    store = _store(tmp_path)
    (store.root / "keys.yaml").mkdir()  # not a file: cannot be read or replaced
    change = (_s := _session(store)).execute(ApproveDrafts(tuple(_s.writes.seen(["ENG-2026-11-01-001"]))))
    assert any("could not be registered" in w for w in change.warnings)
    (event,) = _lines(store)
    assert event["signer"] == "human:Ada Reviewer"
    assert _session(store).trust(event).state is TrustState.VALID  # her own key, trusted outside the store
    from plur_desk.app.trust.trust_file import TrustFile
    from plur_desk.app.trust.verifier import TrustChecker

    someone_else = TrustChecker(store.root, TrustFile(tmp_path / "teammate-config"))
    assert someone_else(event).state is TrustState.UNKNOWN_SIGNER  # nobody else can find her key


def test_the_same_bytes_signed_again_give_the_same_signature_without_signing_and_a_new_key_signs_anew(
    tmp_path, monkeypatch
):
    """An event is signed when decided and again over its final bytes at the append: on a store without a chain
    the bytes are the same, and the signature made for them is given again (Ed25519 would make the same one). A
    changed event, or the same one after the key was replaced, is signed, and every signature verifies."""
    from plur_desk.store.keys import signatures

    store = _store(tmp_path)
    keys = ReviewerKeys(store.root, Reviewer("Ada Reviewer"), KeyVault(data_dir()))
    event = make_event("engram_updated", "ENG-2026-11-01-001", NOW, {"action": "approve"}, Reviewer("Ada Reviewer"))
    signed_bytes: list[bytes] = []
    real = signatures.sign

    def counting(event, key, identity, made=None):  # type: ignore[no-untyped-def]
        class Counted:
            def sign(self, message: bytes) -> bytes:
                signed_bytes.append(message)
                return key.sign(message)

        return real(event, Counted(), identity, made)  # type: ignore[arg-type]

    monkeypatch.setattr(signatures, "sign", counting)
    first = keys.sign(event)
    again = keys.sign(first)  # the append's re-sign of the same bytes
    changed = keys.sign({**first, "prev": None})
    monkeypatch.setattr(signatures, "sign", real)
    assert again == first and len(signed_bytes) == 2  # the event, then the changed one: not the same bytes twice
    assert changed["signature"] != first["signature"]
    public = keys.public_key()
    assert signatures.verify(first, public) and signatures.verify(changed, public)
    keys.replace(NOW, revoke=False, new_key=True)
    renewed = keys.sign(event)
    assert renewed["signature"] != first["signature"] and signatures.verify(renewed, keys.public_key())
