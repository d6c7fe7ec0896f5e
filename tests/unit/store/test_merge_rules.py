"""Field and record rules of the three-way merge (PLUR-SYNC.md §5), each checked in both directions."""

from __future__ import annotations

import pytest

from plur_desk.domain.merge.merge_engram import merge_engram
from plur_desk.domain.merge.merge_tension import merge_tension, pair_key
from plur_desk.store.lists.list_file import ENGRAMS, TENSIONS
from plur_desk.store.lists.yaml_dump import dump_engrams_document, dump_tensions_document
from plur_desk.store.team.merge import merge_engram_files, merge_tension_files, read_side

BASE = {
    "id": "ENG-2026-12-01-001",
    "status": "active",
    "type": "behavioral",
    "scope": "project:team",
    "visibility": "public",
    "statement": "Deploys freeze on Fridays",
    "content_hash": "a" * 64,
    "commitment": "draft",
    "updated_at": "2026-12-01T08:00:00.000Z",
    "tags": ["ops"],
    "write_count": 2,
    "feedback_signals": {"positive": 1, "negative": 0, "neutral": 0},
    "activation": {"retrieval_strength": 0.7, "storage_strength": 1, "frequency": 3, "last_accessed": "2026-12-01"},
}


def both(base, a, b):
    one = merge_engram(base, a, b)
    two = merge_engram(base, b, a)
    assert one == two, "the merge depends on which side is ours"
    return one


def edit(**changes):
    return {**BASE, **changes}


def test_counters_add_and_strengths_take_the_larger() -> None:
    a = edit(write_count=3, activation={**BASE["activation"], "frequency": 5, "retrieval_strength": 0.9})
    b = edit(
        write_count=4,
        feedback_signals={"positive": 2, "negative": 1, "neutral": 0},
        activation={**BASE["activation"], "frequency": 4, "last_accessed": "2026-12-03"},
    )
    merged, flags = both(BASE, a, b)
    assert merged["write_count"] == 5  # 2 + 1 + 2
    assert merged["feedback_signals"] == {"positive": 2, "negative": 1, "neutral": 0}
    assert merged["activation"] == {
        "retrieval_strength": 0.9,
        "storage_strength": 1,
        "frequency": 6,
        "last_accessed": "2026-12-03",
    }
    assert flags == []


def test_lists_merge_as_sets_and_keep_removals() -> None:
    merged, _ = both(BASE, edit(tags=["ops", "deploy"]), edit(tags=["release"]))
    assert merged["tags"] == ["deploy", "release"]  # b removed "ops"; both additions kept


def test_statement_and_hash_move_together_and_two_edits_are_flagged() -> None:
    a = edit(statement="Freeze on Fridays after noon", content_hash="b" * 64, updated_at="2026-12-01T09:00:00.000Z")
    b = edit(statement="Freeze on Thursdays", content_hash="c" * 64, updated_at="2026-12-01T10:00:00.000Z")
    merged, flags = both(BASE, a, b)
    assert (merged["statement"], merged["content_hash"]) == ("Freeze on Thursdays", "c" * 64)
    assert merged["updated_at"] == "2026-12-01T10:00:00.000Z"
    assert flags[0]["kind"] == "two-edits" and flags[0]["field"] == "statement"
    assert merged["review_disagreements"] == flags


def test_approve_against_reject_keeps_both_decisions_and_the_non_injecting_state() -> None:
    ann = {"state": "approved", "by": "Ann", "at": "2026-12-01T09:00:00.000Z", "level": "decided"}
    bob = {"state": "rejected", "by": "Bob", "at": "2026-12-01T09:30:00.000Z", "reason": "wrong"}
    a = edit(commitment="decided", review=ann, updated_at=ann["at"])
    b = edit(status="retired", review=bob, updated_at=bob["at"], rationale="Retired: rejected in review: wrong")
    merged, flags = both(BASE, a, b)
    assert merged["status"] == "retired"
    assert merged["review"] == bob
    assert merged["reviews"] == [ann, bob]
    assert [f["kind"] for f in flags] == ["approve-vs-reject"]


def test_unapprove_racing_an_approval_keeps_the_draft() -> None:
    base = edit(commitment="leaning")
    merged, flags = both(base, edit(commitment="draft"), edit(commitment="locked", locked_at="x", locked_reason="y"))
    assert merged["commitment"] == "draft" and "locked_at" not in merged
    assert flags[0]["kind"] == "approve-vs-unapprove"


def test_two_approvals_take_the_higher_level_without_a_disagreement() -> None:
    merged, flags = both(BASE, edit(commitment="leaning"), edit(commitment="decided"))
    assert merged["commitment"] == "decided" and flags == []


def test_scope_changes_on_both_sides_prefer_the_less_shared() -> None:
    merged, flags = both(BASE, edit(scope="global"), edit(scope="group:acme"))
    assert merged["scope"] == "global"
    assert flags[0]["field"] == "scope"


def test_retirement_dominates_and_write_count_zero_retires() -> None:
    merged, _ = both(BASE, edit(status="retired"), edit(tags=["x"]))
    assert merged["status"] == "retired"
    merged, _ = both(BASE, edit(write_count=1), edit(write_count=1))
    assert merged["write_count"] == 1  # both made the same change: taken once, not added twice
    merged, _ = both(BASE, edit(write_count=1, tags=["a"]), edit(write_count=0, status="retired"))
    assert merged["write_count"] == 0 and merged["status"] == "retired"


def _file(*records):
    return dump_engrams_document({"engrams": list(records)}).encode()


def test_same_id_collision_renumbers_the_side_not_on_the_remote() -> None:
    base = _file(BASE)
    mine = {**BASE, "id": "ENG-2026-12-02-001", "statement": "Mine", "content_hash": "d" * 64}
    theirs = {**BASE, "id": "ENG-2026-12-02-001", "statement": "Theirs", "content_hash": "e" * 64}
    ref = edit(
        relations={
            "broader": [],
            "narrower": [],
            "related": ["ENG-2026-12-02-001"],
            "conflicts": [],
            "supersedes": [],
            "superseded_by": [],
        }
    )
    a, b = _file(ref, mine), _file(BASE, theirs)
    one = merge_engram_files(base, a, b, pushed=(b,))
    two = merge_engram_files(base, b, a, pushed=(b,))
    assert one.data == two.data
    assert one.renumbered == [
        {"old": "ENG-2026-12-02-001", "new": "ENG-2026-12-02-002", "statement": "Mine", "content_hash": "d" * 64}
    ]
    records = read_side(one.data, ENGRAMS, lambda v: v["id"]).records
    assert records["ENG-2026-12-02-001"]["statement"] == "Theirs"  # the pushed id never moves
    assert records["ENG-2026-12-02-002"]["statement"] == "Mine"
    assert records[BASE["id"]]["relations"]["related"] == ["ENG-2026-12-02-002"]  # the reference moved with it


def test_same_statement_learned_on_both_sides_folds_into_one_record() -> None:
    new = {
        **BASE,
        "id": "ENG-2026-12-02-001",
        "write_count": 1,
        "sources": [{"scope": "project:team", "session_id": None, "stored_at": "2026-12-02T08:00:00.000Z"}],
    }
    other = {**new, "sources": [{"scope": "project:team", "session_id": None, "stored_at": "2026-12-02T09:00:00.000Z"}]}
    merged = merge_engram_files(_file(BASE), _file(BASE, new), _file(BASE, other))
    records = read_side(merged.data, ENGRAMS, lambda v: v["id"]).records
    assert len(records) == 2 and merged.renumbered == []
    assert records["ENG-2026-12-02-001"]["write_count"] == 1  # equal on both sides: never counted twice
    assert len(records["ENG-2026-12-02-001"]["sources"]) == 2


def test_untouched_records_keep_their_bytes_and_quarantined_entries_survive() -> None:
    odd = b"  - id: ENG-2026-12-01-009\n    status: active\n    type: behavioral\n    scope: x\n    statement: s\n    temporal:\n      learned_at: 2026-01-01\n"
    base = _file(BASE) + odd
    a = _file(edit(tags=["a"])) + odd
    b = _file(edit(commitment="decided")) + odd
    merged = merge_engram_files(base, a, b)
    assert merged.data.endswith(odd)  # PLUR quarantines it (an unquoted date); kept byte for byte, at the end
    assert merged.data == merge_engram_files(base, b, a).data


def _tension(**changes):
    record = {
        "id": "T-2026-1201-001",
        "engram_a": "ENG-A",
        "engram_b": "ENG-B",
        "statement_a": "x",
        "statement_b": "y",
        "confidence": 0.9,
        "reason": "r",
        "detected_at": "2026-12-01T08:00:00.000Z",
        "status": "detected",
        "resolved_by": None,
        "resolved_at": None,
        "category": "factual",
    }
    record.update(changes)
    return record


@pytest.mark.parametrize(
    ("a", "b", "kept", "kind"),
    [
        ({"status": "confirmed"}, {"status": "detected", "confidence": 0.8}, "confirmed", None),
        ({"status": "dismissed"}, {"status": "confirmed"}, "dismissed", None),
        (
            {"status": "dismissed"},
            {"status": "resolved", "resolved_by": "ENG-A", "resolved_at": "t1"},
            "resolved",
            "dismissed-vs-resolved",
        ),
    ],
)
def test_tension_status_only_moves_forward(a, b, kept, kind) -> None:
    base = _tension()
    one, flags = merge_tension(base, _tension(**a), _tension(**b))
    assert one == merge_tension(base, _tension(**b), _tension(**a))[0]
    assert one["status"] == kept
    assert [f["kind"] for f in flags] == ([kind] if kind else [])


def test_two_winners_keep_the_first_resolution_whole_and_are_reported() -> None:
    base = _tension()
    a = _tension(status="resolved", resolved_by="ENG-A", resolved_at="2026-12-01T09:00:00.000Z")
    b = _tension(status="resolved", resolved_by="ENG-B", resolved_at="2026-12-01T08:30:00.000Z")
    merged, flags = merge_tension(base, a, b)
    assert (merged["resolved_by"], merged["resolved_at"]) == ("ENG-B", "2026-12-01T08:30:00.000Z")
    assert flags[0]["kind"] == "two-winners"


def test_one_pair_detected_on_both_machines_becomes_one_record() -> None:
    a = dump_tensions_document([_tension(id="T-2026-1202-001", detected_at="2026-12-02T09:00:00.000Z")]).encode()
    b = dump_tensions_document(
        [_tension(id="T-2026-1202-004", engram_a="ENG-B", engram_b="ENG-A", detected_at="2026-12-02T08:00:00.000Z")]
    ).encode()
    merged = merge_tension_files(b"[]\n", a, b)
    assert merged.data == merge_tension_files(b"[]\n", b, a).data
    records = read_side(merged.data, TENSIONS, pair_key).records
    assert [r["id"] for r in records.values()] == ["T-2026-1202-004"]  # the earlier detection


def test_one_tension_id_on_two_pairs_is_renumbered() -> None:
    a = dump_tensions_document([_tension(id="T-2026-1202-001")]).encode()
    b = dump_tensions_document([_tension(id="T-2026-1202-001", engram_a="ENG-C", engram_b="ENG-D")]).encode()
    merged = merge_tension_files(b"[]\n", a, b, pushed=(b,))
    records = read_side(merged.data, TENSIONS, pair_key).records
    assert records["ENG-C:ENG-D"]["id"] == "T-2026-1202-001"  # on the remote already
    assert records["ENG-A:ENG-B"]["id"] == "T-2026-1202-002"


def test_a_teammates_scope_strip_never_deletes_records_but_compact_does() -> None:
    retired = {**BASE, "id": "ENG-2026-12-01-002", "status": "retired"}
    base = _file(BASE, retired)
    stripped = b"engrams: []\n"  # a teammate switched to a shared remote: their commit no longer holds these
    kept = merge_engram_files(base, base, stripped)
    records = read_side(kept.data, ENGRAMS, lambda v: v["id"]).records
    assert list(records) == [BASE["id"]]  # the active record stays; the retired one was compacted away
    assert kept.data == merge_engram_files(base, stripped, base).data


def test_a_renumbering_from_an_earlier_replayed_commit_is_followed() -> None:
    """A rebase replays two local commits: the first merge moved Bob's record to -002; the second commit still
    calls it -001. Bob's later edit must land on his record, never on Ann's record that now holds -001."""
    bob = {
        **BASE,
        "id": "ENG-2026-12-02-001",
        "statement": "Bob's",
        "content_hash": "b" * 64,
        "created_at": "2026-12-02T09:00:00.000Z",
    }
    ann = {
        **BASE,
        "id": "ENG-2026-12-02-001",
        "statement": "Ann's",
        "content_hash": "c" * 64,
        "created_at": "2026-12-02T08:00:00.000Z",
    }
    base = _file(BASE, bob)  # Bob's first commit
    ours = _file(BASE, ann, {**bob, "id": "ENG-2026-12-02-002"})  # upstream plus the first replayed commit
    theirs = _file(BASE, {**bob, "commitment": "decided", "updated_at": "2026-12-02T10:00:00.000Z"})  # Bob's second
    one = merge_engram_files(base, ours, theirs)
    assert one.data == merge_engram_files(base, theirs, ours).data
    records = read_side(one.data, ENGRAMS, lambda v: v["id"]).records
    assert records["ENG-2026-12-02-001"]["statement"] == "Ann's"
    assert records["ENG-2026-12-02-001"]["commitment"] == "draft"
    assert records["ENG-2026-12-02-002"]["statement"] == "Bob's"
    assert records["ENG-2026-12-02-002"]["commitment"] == "decided"
    assert one.disagreements == []
