"""When the keys change under an open session (keys.yaml, the user's trust file), only whether each signed line's
key counts is decided again: the watched baseline, the history's verdicts and the writer ledger verify no signature
again (and the baseline parses no line again while the same lines count); a key distrusted stops counting at once,
one trusted again counts again, and a line whose bytes were edited is verified as the new line it is."""

from __future__ import annotations

import hashlib
import os

import pytest

from plur_desk.app.changes import baseline_read
from plur_desk.app.changes.baseline_read import read_baseline
from plur_desk.app.scale.writers import Ledger
from plur_desk.app.trust import verifier
from plur_desk.app.trust.verifier import TrustChecker
from plur_desk.domain.commands import ApproveDrafts, RejectDrafts
from plur_desk.store import baseline
from plur_desk.store.keys import signatures
from plur_desk.store.keys.keys_file import KEYS_FILE
from plur_desk.store.keys.signatures import public_key_b64

DRAFTS = ("ENG-2026-11-01-001", "ENG-2026-11-02-001")
ADA = "human:Ada Reviewer"


@pytest.fixture
def counted(monkeypatch):
    """How many signatures are verified and baseline lines parsed (each call of the real function counted)."""
    calls = {"verify": 0, "read_line": 0}

    def counting(name, real):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return real(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(verifier, "verify", counting("verify", verifier.verify))
    monkeypatch.setattr(signatures, "verify", counting("verify", signatures.verify))  # where a caller looks it up
    monkeypatch.setattr(baseline_read, "read_line", counting("read_line", baseline_read.read_line))
    return calls


def watched_with_decisions(session):
    session.watch.start()
    for draft in DRAFTS:
        session.execute(ApproveDrafts(tuple(session.writes.seen([draft]))))
    read = session.watch.read()
    assert read.baseline.watched and read.problems == [] and read.lines == 3
    return read


def register_teammate(root):
    """keys.yaml gains another reviewer's key (a teammate registering, a sync): nothing of Ada's changes."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = public_key_b64(Ed25519PrivateKey.generate())
    with (root / KEYS_FILE).open("a") as handle:
        handle.write(f"  - identity: human:Teammate\n    public_key: {key}\n    added_at: '2026-12-07T00:00:00.000Z'\n")


def fresh(session):
    """What a new reader with the same trust file finds, verifying every line."""
    read = read_baseline(session.root, TrustChecker(session.root, session.trust.trust_file))
    return read.baseline, read.problems, read.lines


def test_a_new_keys_yaml_decides_trust_again_without_verifying_or_parsing_any_line(session, counted):
    before = watched_with_decisions(session)
    generation = session.trust.generation
    register_teammate(session.root)
    counted.update(verify=0, read_line=0)
    read = session.watch.read()
    assert session.trust.generation > generation  # the change was seen: the lines were judged again
    assert counted == {"verify": 0, "read_line": 0}
    assert read is before and (read.baseline, read.problems, read.lines) == fresh(session)


def test_a_key_distrusted_stops_counting_at_once_and_counts_again_once_trusted_again(session, counted):
    watched_with_decisions(session)
    public_key = session.trust.trusted().keys_for(ADA)[0].public_key
    assert session.trust.trust_file.remove(ADA)
    distrusted = session.watch.read()
    assert not distrusted.baseline.watched and distrusted.baseline.engrams == {}
    assert [n for n, _why in distrusted.problems] == [1, 2, 3]
    assert all("not trusted" in why for _n, why in distrusted.problems)
    assert (distrusted.baseline, distrusted.problems, distrusted.lines) == fresh(session)
    counted.update(verify=0)
    session.trust.trust_key(ADA, public_key, "2026-12-07T00:00:00.000Z")
    trusted = session.watch.read()
    assert counted["verify"] == 0  # the signatures were verified under her key before: not again
    assert trusted.baseline.watched and trusted.problems == [] and set(DRAFTS) <= trusted.baseline.engrams.keys()
    assert (trusted.baseline, trusted.problems, trusted.lines) == fresh(session)


def test_a_line_edited_on_disk_is_verified_as_the_line_it_now_is(session, counted):
    watched_with_decisions(session)
    path = baseline.path_of(session.root)
    data = path.read_bytes()
    st = os.stat(path)
    last = data.rstrip(b"\n").rsplit(b"\n", 1)[1]
    edited = last.replace(b',"active",', b',"parked",', 1)  # another value in the decision's line, same length
    assert edited != last and len(edited) == len(last)
    with path.open("r+b") as handle:  # in place: the same file, size and modification time
        handle.seek(len(data) - len(last) - 1)
        handle.write(edited)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    register_teammate(session.root)  # the keys changed too: every line is judged again
    counted.update(verify=0)
    read = session.watch.read()
    assert counted["verify"] >= 1  # the edited line's signature was checked, not taken as before
    assert [n for n, _why in read.problems] == [3] and "not trusted" in read.problems[0][1]
    assert "parked" not in read.baseline.engrams[DRAFTS[1]]
    assert (read.baseline, read.problems, read.lines) == fresh(session)


def test_the_histories_verdicts_and_the_writer_ledger_judge_signed_claims_again_without_verifying_them(
    session, counted
):
    session.execute(RejectDrafts(tuple(session.writes.seen([DRAFTS[0]])), "duplicate"))
    session.execute(ApproveDrafts(tuple(session.writes.seen([DRAFTS[1]]))))
    ledger = Ledger(trust=session.trust)
    ledger.sync(session.history.lines)
    verdicts = dict(session.history.rejections())
    claims = [line for line in session.history.human_lines() if b'"signature"' in line[0]]
    assert len(claims) == 2 and [v.trust.counts_as_human for v in verdicts.values()] == [True]
    generation = session.trust.generation
    register_teammate(session.root)
    counted.update(verify=0)
    assert dict(session.history.rejections()) == verdicts
    assert [session.history.trust_of(line).counts_as_human for line in claims] == [True, True]
    ledger.sync(session.history.lines)
    assert session.trust.generation > generation and counted["verify"] == 0
    cold = Ledger(trust=TrustChecker(session.root, session.trust.trust_file))
    cold.sync(session.history.lines)
    assert (ledger.decisions, ledger.unverified) == (cold.decisions, cold.unverified)
    assert session.trust.trust_file.remove(ADA)  # her key no longer counts: neither do her decisions, at once
    session.history.sync_trust()
    assert not any(session.history.trust_of(line).counts_as_human for line in claims)
    ledger.sync(session.history.lines)
    assert ledger.decisions == {} and sum(ledger.unverified.values()) == 2


def test_a_reading_kept_beside_the_cache_is_judged_again_without_verifying_or_parsing_a_line(session, counted):
    """A window opens on the verified reading kept beside its cache (no line verified); when the keys then change,
    what verifying each line established was kept with it: only which keys count is decided again."""
    from plur_desk.app.review.bootstrap import open_session
    from plur_desk.infra.clock import FixedClock

    from support.sessions import NOW

    watched_with_decisions(session)
    opened = open_session(session.root, "Ada Reviewer", clock=FixedClock(NOW), use_cache=True, for_review=True)
    cache = opened.store.cache_file
    assert cache is not None
    read_baseline(session.root, TrustChecker(session.root, opened.trust.trust_file), cache)  # as a launch keeps it
    counted.update(verify=0, read_line=0)
    assert opened.watch.read().baseline.watched and counted == {"verify": 0, "read_line": 0}  # the kept reading
    register_teammate(session.root)
    read = opened.watch.read()
    assert counted == {"verify": 0, "read_line": 0}
    assert (read.baseline, read.problems, read.lines) == fresh(session)
    assert opened.trust.trust_file.remove(ADA)  # and a key distrusted still stops counting at once
    assert not opened.watch.read().baseline.watched


def test_a_planted_kept_reading_makes_no_forged_history_event_valid(session):
    """The kept reading is a file anyone on the account can write, its key computable from files they can read: a
    line it lists as verified under Ada's key is believed for the baseline line of those bytes alone, never by the
    history's verdicts or the writer ledger, which judge the forged event by verifying it."""
    from plur_desk.app.review.bootstrap import open_session
    from plur_desk.infra.clock import FixedClock
    from plur_desk.store.lists.parse_cache import write_private

    from support.sessions import NOW

    watched_with_decisions(session)
    month = sorted((session.root / "history").glob("*.jsonl"))[-1]
    genuine = [line[0] for line in session.history.human_lines() if b'"signature"' in line[0]][-1]
    forged = genuine.replace(DRAFTS[1].encode(), b"ENG-2026-11-09-009", 1)  # her signature, another decision
    assert forged != genuine
    with month.open("ab") as handle:
        handle.write(forged + b"\n")
    opened = open_session(session.root, "Ada Reviewer", clock=FixedClock(NOW), use_cache=True, for_review=True)
    cache = opened.store.cache_file
    assert cache is not None
    checker = TrustChecker(session.root, opened.trust.trust_file)
    data = baseline.read_bytes(session.root)
    kept = list(baseline_read._to_cache(read_baseline(session.root, checker), checker))  # as a launch keeps it
    ada_key = session.trust.trusted().keys_for(ADA)[0].public_key
    kept[10] = [*kept[10], (4, hashlib.sha256(forged).digest(), True, None, {ada_key: True})]  # the attacker's line
    key = baseline_read._cache_key(data, checker)
    write_private(baseline.verified_cache(cache), baseline.VERIFIED_TAG, {key: tuple(kept)})
    assert opened.watch.read().baseline.watched  # the planted reading was read
    line = next(line for line in opened.history.human_lines() if line[0] == forged)
    opened.history.sync_trust()
    assert not opened.history.trust_of(line).counts_as_human
    ledger = Ledger(trust=opened.trust)
    ledger.sync(opened.history.lines)
    cold = Ledger(trust=TrustChecker(session.root, session.trust.trust_file))
    cold.sync(opened.history.lines)
    assert (ledger.decisions, ledger.unverified) == (cold.decisions, cold.unverified)


def test_only_signed_human_claims_whose_signature_was_verified_are_remembered(session):
    """Every line of the history goes through `check_line` (the ledger, the history's verdicts): a line that claims
    no human, or is not signed, is never verified, so nothing is kept for it (memory grew by one entry per line)."""
    import json

    watched_with_decisions(session)
    checker = TrustChecker(session.root, session.trust.trust_file)
    claims = [line[0] for line in session.history.lines]
    agent = {"event": "engram_created", "actor": {"kind": "agent", "asserted_by": "claude"}, "data": {"id": "E"}}
    unsigned = json.loads(claims[0])
    del unsigned["signature"]
    others = [json.dumps(agent).encode(), json.dumps(unsigned).encode()]
    signed = set()
    for raw in [*claims, *others]:
        if checker.check_line(json.loads(raw), raw).counts_as_human:
            signed.add(hashlib.sha256(raw).digest())
    assert len(signed) == len(claims) == 2
    assert set(checker._verified) == signed
