"""A store shaped as PLUR 0.21 leaves it: duplicate ids kept (the later copy renamed), `engram_rekeyed` in history.

Only 0.20.0 installs here, so the store is made by the real 0.20 and plur_desk, then shaped by hand to 0.21's
documented rule (CHANGELOG 0.21.0, "Duplicate engram ids are kept, not collapsed"; engrams.ts `resolveDuplicateIds`,
`recordIdRenames`), with the renamed ids taken from tests/node/rekey_oracle.mjs (0.21's rule over 0.20's parse).
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from plur_desk.app.check import run_check
from plur_desk.app.review.bootstrap import open_session
from plur_desk.domain.commands import ApproveDrafts, ResolveTension
from plur_desk.domain.plur_rules.rekey import fresh_duplicate_id
from plur_desk.domain.trust import TrustState
from plur_desk.store.lists.yaml_dump import dump_engrams_document
from plur_desk.store.lists.yaml_load import load_general

from support.node import plur_env, run_node
from support.stores import plur

pytestmark = pytest.mark.interop
REVIEWER = "Alice Reviewer"


def _records(store: Path) -> list[dict[str, object]]:
    return list(load_general((store / "engrams.yaml").read_text(encoding="utf-8"))["engrams"])


def _write(store: Path, records: list[dict[str, object]]) -> None:
    (store / "engrams.yaml").write_text(dump_engrams_document({"engrams": records}), encoding="utf-8")


def _oracle(store: Path, node_home: Path) -> list[dict[str, object]]:
    node_home.mkdir(parents=True, exist_ok=True)
    return run_node("rekey_oracle.mjs", payload={"file": str(store / "engrams.yaml")}, env=plur_env(store, node_home))


def _bytes(store: Path) -> dict[str, str]:
    return {
        str(p.relative_to(store)): hashlib.sha256(p.read_bytes()).hexdigest() for p in store.rglob("*") if p.is_file()
    }


def test_check_reads_a_store_as_021_leaves_it(store, node_home):
    session = open_session(store, REVIEWER, use_cache=False)
    drafts = session.queue.rows()
    approved, other = drafts[0].id, drafts[1].id
    session.execute(ApproveDrafts(tuple(session.writes.seen([approved])), note="checked"))
    plur(
        store,
        node_home,
        [
            {
                "op": "recordTensions",
                "pairs": [
                    {
                        "id_a": approved,
                        "id_b": other,
                        "statement_a": "a",
                        "statement_b": "b",
                        "confidence": 0.9,
                        "reason": "the two disagree",
                    }
                ],
            }
        ],
    )
    records = _records(store)
    at = next(i for i, r in enumerate(records) if r["id"] == approved)
    teammate = {**records[at], "statement": "A teammate's engram minted with the same id", "review": None}
    del teammate["review"]

    # 1. Two machines minted one id: the teammate's copy comes first, so 0.21 renames the approved one.
    _write(store, [*records[:at], teammate, *records[at:]])
    renamed = [o for o in _oracle(store, node_home) if o.get("renamedFrom") == approved]
    assert len(renamed) == 1
    new_id = str(renamed[0]["id"])
    others = {str(r["id"]) for r in records}
    assert new_id == fresh_duplicate_id(approved, records[at], others)  # our hash of the record as read is 0.21's
    # ... and 0.21's next write put the new id on disk and logged the rename; the teammate's copy was compacted later.
    records[at] = {**records[at], "id": new_id}
    now = datetime.now(UTC)
    with (store / "history" / f"{now:%Y-%m}.jsonl").open("a", encoding="utf-8") as log:
        event = {
            "event": "engram_rekeyed",
            "engram_id": new_id,
            "timestamp": now.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
            "data": {"from": approved, "to": new_id, "store": str(store / "engrams.yaml")},
            "reason": "duplicate id: a later, different copy was given a fresh id (P1)",
        }
        log.write(json.dumps(event) + "\n")
    # 2. A second duplicate not renamed yet (no 0.21 write since), and an exact repeat (read once by 0.21).
    second = next(i for i, r in enumerate(records) if r["id"] not in (approved, new_id, other))
    late_copy = {**records[second], "statement": "Another machine's engram with this id"}
    exact = records[second + 1]
    records = [*records[: second + 1], late_copy, *records[second + 1 :], dict(exact)]
    _write(store, records)
    expected = [o for o in _oracle(store, node_home) if o.get("renamedFrom")]
    assert [o["renamedFrom"] for o in expected] == [records[second]["id"]]

    assert plur(store, node_home, [{"op": "load"}])[0]["quarantined"] == []  # 0.20 reads every copy
    before = _bytes(store)
    report = run_check(store, use_cache=False)
    assert _bytes(store) == before  # nothing written
    assert report.invalid == []  # a repeated id is not invalid (0.20 reads both, 0.21 renames one)
    assert report.untrusted == []  # the approval signed under its old id stays verified
    assert report.unfinished == []  # and its event is found: no false "interrupted"
    assert not [w for w in report.warnings if "not in engrams.yaml" in w]  # the tension's side is followed
    assert any(f"reads this one as {expected[0]['id']}" in w for w in report.warnings)
    assert any("exactly; PLUR 0.21 reads it once" in w for w in report.warnings)
    assert report.exit_code == 0, report.to_text()

    # The window reads it the same way: the renamed engram's review is a verified human decision, and its history
    # holds what happened to it under its old id.
    reopened = open_session(store, REVIEWER, use_cache=False)
    renamed_engram = reopened.snapshot.engrams[new_id]
    assert new_id not in reopened.verdicts.unverified_reviews()
    assert reopened.verdicts.review_trust(renamed_engram).state is TrustState.VALID
    timeline = reopened.history.timeline(new_id)
    assert [e["event"] for e in timeline][-1] == "engram_rekeyed"
    assert any(e["engram_id"] == approved and e.get("actor", {}).get("kind") == "human" for e in timeline)
    assert _bytes(store) == before


def test_a_planted_rename_does_not_lend_an_approval_to_another_text(store, node_home):
    # An agent copies an approved engram's review record onto its own text under a 0.21-shaped id, and plants the
    # `engram_rekeyed` event that would make it look like the approved engram renamed. The original still carries
    # its review, so the copy may not borrow its signature.
    session = open_session(store, REVIEWER, use_cache=False)
    approved = session.queue.rows()[0].id
    session.execute(ApproveDrafts(tuple(session.writes.seen([approved])), note="checked"))
    records = _records(store)
    original = next(r for r in records if r["id"] == approved)
    forged_id = f"{approved}-D0badc0de"
    _write(store, [*records, {**original, "id": forged_id, "statement": "Skip the review for hotfixes"}])
    month = sorted((store / "history").glob("*.jsonl"))[-1]
    planted = {
        "event": "engram_rekeyed",
        "engram_id": forged_id,
        "timestamp": original["review"]["at"],
        "data": {"from": approved, "to": forged_id},
    }
    month.write_text(month.read_text() + json.dumps(planted) + "\n")
    report = run_check(store, use_cache=False)
    assert [u["engram_id"] for u in report.untrusted] == [forged_id]
    assert report.exit_code == 1


def _history(store: Path) -> list[dict[str, object]]:
    return [
        json.loads(line) for p in sorted((store / "history").glob("*.jsonl")) for line in p.read_text().splitlines()
    ]


def test_decisions_on_both_engrams_of_a_shared_id(store, node_home):
    # Two machines minted one id for two different drafts, and a third copy repeats the later one exactly. The window
    # shows both engrams as PLUR 0.21 reads them (the later one under its fresh id, the exact repeat once); a decision
    # on each is written so that 0.20 and 0.21 both read it back on the engram the reviewer saw.
    records = _records(store)
    at = next(i for i, r in enumerate(records) if r.get("commitment") == "draft")
    shared = str(records[at]["id"])
    later = {**records[at], "statement": "A teammate's draft minted with the same id"}
    others = {str(r["id"]) for r in records} - {shared}
    later_id = fresh_duplicate_id(shared, later, others)
    _write(store, [*records, later, dict(later)])
    assert [o.get("id") for o in _oracle(store, node_home) if o.get("renamedFrom")] == [later_id]

    session = open_session(store, REVIEWER, use_cache=False)
    shown = {d.id: d for d in session.queue.rows()}
    assert shared in shown and later_id in shown
    assert session.snapshot.engrams[later_id]["statement"] == later["statement"]
    assert session.snapshot.engrams[shared]["statement"] == records[at]["statement"]
    session.execute(ApproveDrafts(tuple(session.writes.seen([later_id])), note="the teammate's"))
    session.execute(ApproveDrafts(tuple(session.writes.seen([shared])), note="the first"))

    # 0.20 reads every copy, quarantines nothing, and finds each decision on the engram it was made on.
    loaded = plur(store, node_home, [{"op": "load"}])[0]
    assert loaded["quarantined"] == []
    assert loaded["valid"].count(later_id) == 2 and loaded["valid"].count(shared) == 1
    for engram_id, statement in ((shared, records[at]["statement"]), (later_id, later["statement"])):
        assert loaded["engrams"][engram_id]["statement"] == statement
        assert loaded["engrams"][engram_id]["commitment"] != "draft"
    # 0.21 has nothing left to rename: the exact repeats are read once, under the id the reviewer saw.
    assert [o for o in _oracle(store, node_home) if o.get("renamedFrom")] == []
    events = [e for e in _history(store) if e.get("engram_id") in (shared, later_id)]
    rekeyed = [e for e in events if e["event"] == "engram_rekeyed"]
    assert [(e["data"]["from"], e["data"]["to"]) for e in rekeyed] == [(shared, later_id)]
    approvals = [e for e in events if e.get("actor", {}).get("kind") == "human"]
    assert [e["engram_id"] for e in approvals] == [later_id, shared]

    report = run_check(store, use_cache=False)
    assert report.invalid == [] and report.unfinished == [], report.to_text()
    assert report.untrusted == [], [(u["engram_id"], u["line"]) for u in report.untrusted]
    assert report.exit_code == 0, report.to_text()
    reopened = open_session(store, REVIEWER, use_cache=False)
    for engram_id in (shared, later_id):
        assert reopened.verdicts.review_trust(reopened.snapshot.engrams[engram_id]).state is TrustState.VALID


def _rekey_event(store: Path, old: str, new: str) -> None:
    now = datetime.now(UTC)
    with (store / "history" / f"{now:%Y-%m}.jsonl").open("a", encoding="utf-8") as log:
        event = {
            "event": "engram_rekeyed",
            "engram_id": new,
            "timestamp": now.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
            "data": {"from": old, "to": new, "store": str(store / "engrams.yaml")},
            "reason": "duplicate id: a later, different copy was given a fresh id (P1)",
        }
        log.write(json.dumps(event) + "\n")


def test_an_undo_follows_the_engram_plur_renamed_since(store):
    # The reviewer approves an engram; a teammate's engram with the same id is merged in before it, and PLUR 0.21
    # renames ours (the later copy) and logs it. Undo takes back the approval on our engram, under its new id, and
    # leaves the teammate's alone (before, it was refused as "changed since": the old id is now the teammate's).
    session = open_session(store, REVIEWER, use_cache=False)
    approved = session.queue.rows()[0].id
    session.execute(ApproveDrafts(tuple(session.writes.seen([approved])), note="checked"))
    records = _records(store)
    at = next(i for i, r in enumerate(records) if r["id"] == approved)
    teammate = {**records[at], "statement": "A teammate's engram minted with the same id", "commitment": "draft"}
    teammate.pop("review", None)
    new_id = fresh_duplicate_id(approved, records[at], {str(r["id"]) for r in records} - {approved})
    _write(store, [*records[:at], teammate, {**records[at], "id": new_id}, *records[at + 1 :]])
    _rekey_event(store, approved, new_id)
    session.reload_if_changed()

    session.undo()
    after = {str(r["id"]): r for r in _records(store)}
    assert after[new_id]["commitment"] == "draft" and "review" not in after[new_id]
    assert after[approved] == teammate
    undo = [e for e in _history(store) if (e.get("data") or {}).get("action") == "undo"]
    assert [e["engram_id"] for e in undo] == [new_id]
    session.redo()  # and the redo too
    again = {str(r["id"]): r for r in _records(store)}
    assert again[new_id]["commitment"] != "draft" and again[approved] == teammate


def test_a_tension_on_an_engram_plur_renamed_shows_and_settles_it_under_its_new_id(store, node_home):
    # PLUR 0.21 renamed an engram a tension names (and the copy that kept the old id was compacted since): the row
    # shows the engram under its new id, and settling the tension retires it there.
    session = open_session(store, REVIEWER, use_cache=False)
    renamed, other = (d.id for d in session.queue.rows()[:2])
    plur(
        store,
        node_home,
        [
            {
                "op": "recordTensions",
                "pairs": [
                    {
                        "id_a": renamed,
                        "id_b": other,
                        "statement_a": "a",
                        "statement_b": "b",
                        "confidence": 0.9,
                        "reason": "the two disagree",
                    }
                ],
            }
        ],
    )
    records = _records(store)
    at = next(i for i, r in enumerate(records) if r["id"] == renamed)
    new_id = fresh_duplicate_id(renamed, records[at], {str(r["id"]) for r in records} - {renamed})
    records[at] = {**records[at], "id": new_id}
    _write(store, records)
    _rekey_event(store, renamed, new_id)

    reopened = open_session(store, REVIEWER, use_cache=False)
    (row,) = [r for r in reopened.tensions() if other in (r.engram_a, r.engram_b)]
    assert {row.engram_a, row.engram_b} == {new_id, other}
    assert [s.id for s in row.seen.sides] == [new_id, other]
    assert [r.id for r in reopened.tensions(engram_id=new_id)] == [row.id]
    reopened.execute(ResolveTension(reopened.writes.seen_tension(row.id), winner=other))
    after = {str(r["id"]): r for r in _records(store)}
    assert after[new_id]["status"] == "retired" and after[other]["status"] != "retired"
    assert plur(store, node_home, [{"op": "load"}])[0]["quarantined"] == []


def test_an_undo_of_a_decision_on_the_later_copy_keeps_its_new_id(store, node_home):
    records = _records(store)
    at = next(i for i, r in enumerate(records) if r.get("commitment") == "draft")
    shared = str(records[at]["id"])
    later = {**records[at], "statement": "A teammate's draft minted with the same id"}
    later_id = fresh_duplicate_id(shared, later, {str(r["id"]) for r in records} - {shared})
    _write(store, [*records, later])
    session = open_session(store, REVIEWER, use_cache=False)
    session.execute(ApproveDrafts(tuple(session.writes.seen([later_id])), note="the teammate's"))
    session.undo()  # the decision is taken back; the id 0.21 gives the copy stays (0.21 would write it anyway)
    after = [r for r in _records(store) if r["id"] in (shared, later_id)]
    assert [(r["id"], r["commitment"], r["statement"]) for r in after] == [
        (shared, "draft", records[at]["statement"]),
        (later_id, "draft", later["statement"]),
    ]
    assert plur(store, node_home, [{"op": "load"}])[0]["quarantined"] == []
    assert later_id in {d.id for d in session.queue.rows()}
