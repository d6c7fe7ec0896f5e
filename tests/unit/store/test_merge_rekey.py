"""The three-way merge of engrams.yaml follows PLUR 0.21's renames of a repeated id (store/team/merge_rekey.py).

Two machines minted one id; 0.21 renames the later, different copy to `<id>-D<8 hex>` on its next write, and
plur_desk writes that id onto it when the reviewer decides on it. One clone may hold the copy renamed, the other
under the shared id; every case is merged in both directions.
"""

from __future__ import annotations

from plur_desk.domain.plur_rules.rekey import fresh_duplicate_id
from plur_desk.store.lists.yaml_load import load_general
from plur_desk.store.team.merge import merge_engram_files

from support.plain_team import FIRST, LATER, NEW, OTHER, K, engrams_document


def _doc(*records: dict[str, object]) -> bytes:
    return engrams_document(*records).encode()


BASE = _doc(FIRST, LATER, OTHER)


def _both(a: bytes, b: bytes) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    one, two = merge_engram_files(BASE, a, b), merge_engram_files(BASE, b, a)
    assert one.data == two.data, "the merge depends on which side is ours"
    assert one.renumbered == []
    return list(load_general(one.data.decode())["engrams"]), one.disagreements


def test_a_rename_on_one_side_meets_an_edit_under_the_old_id_on_the_other() -> None:
    renamed = _doc(FIRST, {**LATER, "id": NEW}, OTHER)
    edited = _doc(FIRST, {**LATER, "tags": ["ops"]}, {**OTHER, "status": "retired"})
    records, flags = _both(renamed, edited)
    assert [r["id"] for r in records] == [K, NEW, OTHER["id"]]  # the old copy is not back as a second record
    assert records[1]["statement"] == LATER["statement"] and records[1]["tags"] == ["ops"]
    assert records[0] == FIRST and records[2]["status"] == "retired" and flags == []


def test_a_decision_under_the_new_id_meets_plurs_rename_and_an_agents_edit() -> None:
    decided = _doc(FIRST, {**LATER, "id": NEW, "commitment": "decided", "review": {"by": "Ann"}}, OTHER)
    agent = _doc(FIRST, {**LATER, "id": NEW, "feedback_signals": {"positive": 1}}, OTHER)
    records, flags = _both(decided, agent)
    assert [r["id"] for r in records] == [K, NEW, OTHER["id"]]
    assert records[1]["commitment"] == "decided" and records[1]["review"] == {"by": "Ann"}  # the decision kept
    assert records[1]["feedback_signals"] == {"positive": 1} and flags == []


def test_a_decision_under_the_new_id_meets_an_edit_under_the_old_one() -> None:
    decided = _doc(FIRST, {**LATER, "id": NEW, "commitment": "decided"}, OTHER)
    agent = _doc(FIRST, {**LATER, "updated_at": "2026-12-02T09:00:00.000Z", "tags": ["x"]}, OTHER)
    records, _ = _both(decided, agent)
    assert [r["id"] for r in records] == [K, NEW, OTHER["id"]]
    assert records[1]["commitment"] == "decided" and records[1]["tags"] == ["x"]


def test_opposite_decisions_on_the_renamed_copy_are_a_disagreement_not_two_records() -> None:
    approved = _doc(FIRST, {**LATER, "id": NEW, "commitment": "decided"}, OTHER)
    rejected = _doc(FIRST, {**LATER, "id": NEW, "status": "retired"}, OTHER)
    records, flags = _both(approved, rejected)
    assert [r["id"] for r in records] == [K, NEW, OTHER["id"]]
    assert [(f["record"], f["kind"]) for f in flags] == [(NEW, "approve-vs-reject")]


def test_nobody_renamed_it_edits_merge_and_the_merge_renames_nothing() -> None:
    # Neither clone runs 0.21: both copies stay under the shared id, each copy's edits merged into it.
    one = _doc(FIRST, {**LATER, "commitment": "decided"}, OTHER)
    two = _doc({**FIRST, "tags": ["first"]}, {**LATER, "tags": ["later"]}, OTHER)
    records, flags = _both(one, two)
    assert [r["id"] for r in records] == [K, K, OTHER["id"]]
    assert records[0]["tags"] == ["first"] and records[0]["statement"] == FIRST["statement"]
    assert records[1]["tags"] == ["later"] and records[1]["commitment"] == "decided" and flags == []


def test_an_exact_repeat_is_read_once_as_021_reads_it() -> None:
    # plur_desk's decision on a copy with an exact repeat renames both (store/lists/entry_lookup.py).
    decided = {**LATER, "id": NEW, "commitment": "decided"}
    one = _doc(FIRST, decided, decided, OTHER)
    two = _doc(FIRST, LATER, {**OTHER, "tags": ["t"]})
    records, _ = _both(one, two)
    assert [r["id"] for r in records] == [K, NEW, OTHER["id"]]
    assert records[1]["commitment"] == "decided" and records[2]["tags"] == ["t"]


def test_a_copy_two_clones_renamed_apart_is_kept_under_both_names_whichever_side_is_ours() -> None:
    # One clone's 0.20 edited the later copy before its 0.21 renamed it (the hash, so the id, differs from the other
    # clone's). Neither rename can be taken back without breaking that clone's trail: both stay, nothing is lost.
    edited = {**LATER, "commitment": "decided"}
    apart = fresh_duplicate_id(K, edited, {K, str(OTHER["id"])})
    assert apart != NEW
    records, _ = _both(_doc(FIRST, {**edited, "id": apart}, OTHER), _doc(FIRST, {**LATER, "id": NEW}, OTHER))
    assert sorted(str(r["id"]) for r in records) == sorted([K, NEW, apart, str(OTHER["id"])])
    assert next(r for r in records if r["id"] == apart)["commitment"] == "decided"
