"""Property: whatever an agent writes to the files it can write (engrams.yaml, history/, keys.yaml,
.plur-desk/endorsements.jsonl), no event it made verifies as a human's, and no review record shows as a valid human
decision unless it is exactly what the reviewer's own verified decisions left on that content.

The agent's writes are made to the files directly (a superset of what PLUR's API lets it do: updateEngram and
appendHistory are among them; the interop tests drive those through the real PLUR)."""

from __future__ import annotations

import copy
import json
import shutil

import yaml
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plur_desk.app.check import run_check
from plur_desk.app.review.bootstrap import open_session
from plur_desk.domain.commands import ApproveDrafts, EditStatement, RejectDrafts
from plur_desk.domain.review import Reviewer
from plur_desk.infra.clock import FixedClock
from plur_desk.store.keys.endorsements import append_endorsement, endorsement
from plur_desk.store.keys.signatures import public_key_b64, sign
from plur_desk.store.lists.yaml_dump import dump_engrams_document

from support.moments import NOW
from support.sessions import small_session

AGENT = Ed25519PrivateKey.generate()
IDS = [f"ENG-2026-11-0{i}-001" for i in range(1, 7)]
NAMES = ["Ada Reviewer", "ada reviewer", "Ada  Reviewer", "\u0410da Reviewer", "Bob", "agent:codex"]


class TickingClock(FixedClock):
    """A second later at each reading: every decision has its own instant, as a person's do."""

    def now(self):
        moment = super().now()
        self.advance(1)
        return moment


def _genuine_store(tmp_path):
    """Ada's real decisions: approve 1, reject 2, approve 3 then undo it, edit 4 then approve it."""
    session = small_session(tmp_path)
    root = session.store.root
    ada = open_session(root, "Ada Reviewer", clock=TickingClock(NOW), use_cache=False)
    ada.execute(ApproveDrafts(tuple(ada.writes.seen([IDS[0]]))))
    ada.execute(RejectDrafts(tuple(ada.writes.seen([IDS[1]])), "wrong"))
    ada.execute(ApproveDrafts(tuple(ada.writes.seen([IDS[2]]))))
    ada.undo()
    ada.execute(EditStatement(ada.writes.seen([IDS[3]])[0], "Statement number 4, as Ada wrote it"))
    ada.execute(ApproveDrafts(tuple(ada.writes.seen([IDS[3]]))))
    engrams = {e["id"]: copy.deepcopy(e) for e in _engrams(root)}
    signatures = {e["signature"] for e in _events(root) if "signature" in e}
    return root, engrams, signatures


def _engrams(root):
    return yaml.safe_load((root / "engrams.yaml").read_text())["engrams"]


def _events(root):
    path = root / "history" / "2026-12.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write_engrams(root, engrams):
    (root / "engrams.yaml").write_text(dump_engrams_document({"engrams": engrams}))


def _append(root, event):
    with open(root / "history" / "2026-12.jsonl", "a") as handle:
        handle.write(json.dumps(event, ensure_ascii=False) + "\n")


values = st.one_of(st.none(), st.sampled_from(["draft", "decided", "locked", "active", "retired"]), st.text(max_size=8))
op = st.one_of(
    st.tuples(st.just("record"), st.sampled_from(IDS), st.integers(0, 20), st.sampled_from(NAMES)),
    st.tuples(st.just("field"), st.sampled_from(IDS), st.sampled_from(["commitment", "status", "statement"]), values),
    st.tuples(st.just("copy_record"), st.sampled_from(IDS), st.sampled_from(IDS)),
    st.tuples(st.just("replay"), st.integers(0, 20), st.sampled_from(IDS), st.booleans()),
    st.tuples(
        st.just("tamper"), st.integers(0, 20), st.sampled_from(["to", "content_hash", "sets", "id", "timestamp"])
    ),
    st.tuples(st.just("own_key_event"), st.sampled_from(IDS), st.sampled_from(NAMES), st.booleans()),
    st.tuples(st.just("keys"), st.sampled_from(NAMES), st.booleans()),
    st.tuples(st.just("endorse"), st.sampled_from(NAMES), st.booleans()),
    st.tuples(st.just("truncate_history"), st.integers(0, 20)),
)


def _record(root, engrams, genuine_events, step):
    _, engram_id, n, name = step
    source = genuine_events[n % len(genuine_events)]
    sets = ((source.get("data") or {}).get("decided") or {}).get("sets") or {}
    record = sets.get("review") or {"state": "approved", "by": name, "at": source["timestamp"]}
    engrams[engram_id]["review"] = copy.deepcopy(record)
    engrams[engram_id]["commitment"] = "decided"


def _field(root, engrams, genuine_events, step):
    _, engram_id, field, value = step
    engrams[engram_id][field] = value


def _copy_record(root, engrams, genuine_events, step):
    _, to, source = step
    for key in ("review", "commitment", "status", "statement", "content_hash"):
        if key in engrams[source]:
            engrams[to][key] = copy.deepcopy(engrams[source][key])


def _replay(root, engrams, genuine_events, step):
    _, n, engram_id, retarget = step
    event = copy.deepcopy(genuine_events[n % len(genuine_events)])
    if retarget:
        event["engram_id"] = engram_id
    _append(root, event)


def _tamper(root, engrams, genuine_events, step):
    _, n, what = step
    event = copy.deepcopy(genuine_events[n % len(genuine_events)])
    data = event["data"]
    decided = data.setdefault("decided", {"sets": {}})
    if what == "to":
        data["to"] = "locked"
    elif what == "content_hash":
        decided["content_hash"] = "f" * 64
    elif what == "sets":
        decided["sets"] = {"commitment": "decided", "review": {"state": "approved", "by": "Ada Reviewer"}}
    elif what == "id":
        decided["id"] = IDS[(n + 1) % len(IDS)]
    else:
        event["timestamp"] = "2026-12-31T00:00:00.000Z"
    _append(root, event)


def _own_key_event(root, engrams, genuine_events, step):
    _, engram_id, name, bound = step
    engram = engrams[engram_id]
    review = {"state": "approved", "by": name, "at": "2026-12-30T00:00:00.000Z"}
    data: dict = {"action": "approve", "field": "commitment", "from": "draft", "to": "decided"}
    if bound:
        data["decided"] = {
            "file": "engrams",
            "id": engram_id,
            "content_hash": engram.get("content_hash"),
            "sets": {"commitment": "decided", "review": review},
        }
    event = {
        "event": "engram_updated",
        "engram_id": engram_id,
        "timestamp": review["at"],
        "data": data,
        "actor": Reviewer(name).actor(),
    }
    _append(root, sign(event, AGENT, "human:" + name.strip()))
    engram["review"], engram["commitment"] = review, "decided"


def _keys(root, engrams, genuine_events, step):
    _, name, first = step
    path = root / "keys.yaml"
    doc = yaml.safe_load(path.read_text()) if path.exists() else {"keys": []}
    entry = {"identity": "human:" + name.strip(), "public_key": public_key_b64(AGENT), "added_at": "x"}
    doc["keys"] = [entry, *doc["keys"]] if first else [*doc["keys"], entry]
    path.write_text(yaml.safe_dump(doc))


def _endorse(root, engrams, genuine_events, step):
    _, name, as_ada = step
    doc = endorsement("human:" + name.strip(), public_key_b64(AGENT), "human:Ada Reviewer", "x", AGENT)
    if not as_ada:
        doc["by"] = "human:" + name.strip()
    append_endorsement(root, doc)


def _truncate_history(root, engrams, genuine_events, step):
    _, n = step
    path = root / "history" / "2026-12.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    keep = n % (len(lines) + 1)
    path.write_text("".join(lines[:keep]))


APPLY = {
    "record": _record,
    "field": _field,
    "copy_record": _copy_record,
    "replay": _replay,
    "tamper": _tamper,
    "own_key_event": _own_key_event,
    "keys": _keys,
    "endorse": _endorse,
    "truncate_history": _truncate_history,
}


def _apply(root, engrams, genuine_events, step):
    APPLY[step[0]](root, engrams, genuine_events, step)


def test_agent_writes_never_make_an_agents_claim_a_valid_human_decision(tmp_path_factory):
    base = tmp_path_factory.mktemp("genuine")
    root, genuine_engrams, genuine_signatures = _genuine_store(base)
    genuine_events = [e for e in _events(root) if e.get("signature")]
    runs = iter(range(10_000))

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(st.lists(op, min_size=1, max_size=6))
    def check(steps):
        store = base / f"run-{next(runs)}"
        shutil.copytree(root, store)
        engrams = {e["id"]: e for e in _engrams(store)}
        for step in steps:
            _apply(store, engrams, genuine_events, step)
        _write_engrams(store, list(engrams.values()))

        session = open_session(store, "Ada Reviewer", clock=FixedClock(NOW), use_cache=False)
        for event in _events(store):
            if session.trust(event).counts_as_human:
                assert event.get("signature") in genuine_signatures, event  # only Ada's own bytes verify
        shown = {i: session.engram(i) for i in IDS if session.engram(i) is not None}  # (not an invalid entry)
        for engram_id, engram in shown.items():
            if session.verdicts.review_trust(engram).counts_as_human:
                # the record stands only as Ada's decisions left it: her record, her content, the value she set
                genuine = genuine_engrams[engram_id]
                decided = "commitment" if genuine["review"]["state"] == "approved" else "status"
                for key in ("review", "statement", "content_hash", decided):
                    assert engram.get(key) == genuine.get(key), (engram_id, key, steps)
        report = run_check(store, use_cache=False)
        listed = {c["engram_id"] for c in report.untrusted if c["file"] == "engrams.yaml"}
        for engram_id, engram in shown.items():
            if isinstance(engram.get("review"), dict) and not session.verdicts.review_trust(engram).counts_as_human:
                assert engram_id in listed, (engram_id, steps)
        shutil.rmtree(store)

    check()  # hypothesis raises on the first counterexample, shrunk
    assert next(runs) >= 60  # every example was run
