"""`plur-desk sync` between two clones (plain git, no Node) where PLUR 0.21 renamed a repeated id on one of them.

Two machines minted one id; Ann's PLUR 0.21 renamed the later copy to `<id>-D<8 hex>` (CHANGELOG 0.21.0, P1), while
on Bob's clone the copy still sits under the shared id. Both clones must end with one record per engram, every
decision kept, and tensions naming engrams that exist.
"""

from __future__ import annotations

from pathlib import Path

from plur_desk.app.check import run_check
from plur_desk.app.review.bootstrap import open_session
from plur_desk.app.team.sync import run_sync
from plur_desk.domain.commands import ApproveDrafts
from plur_desk.store.lists.yaml_dump import dump_tensions_document
from plur_desk.store.lists.yaml_load import load_general

from support.plain_team import FIRST, LATER, NEW, OTHER, K, engrams_in, git, two_clones, write_engrams


def _tension(a: dict[str, object], b: dict[str, object], n: int) -> dict[str, object]:
    return {
        "id": f"T-2026-12-02-00{n}",
        "engram_a": a["id"],
        "engram_b": b["id"],
        "statement_a": a["statement"],
        "statement_b": b["statement"],
        "confidence": 0.9,
        "status": "detected",
        "reason": "the two disagree",
        "detected_at": f"2026-12-02T08:10:0{n}.000Z",
    }


def _team(tmp_path: Path) -> tuple[Path, Path]:
    def seed(ann: Path) -> None:  # two machines minted K the same day; a plain merge kept both copies
        write_engrams(ann, FIRST, LATER, OTHER)
        (ann / "tensions.yaml").write_text(dump_tensions_document([_tension(FIRST, OTHER, 1)]))

    return two_clones(tmp_path, seed)


def _sync_all(ann: Path, bob: Path) -> None:
    for store in (ann, bob, ann):
        report = run_sync(store)
        assert report.exit_code == 0, report.to_text() if hasattr(report, "to_text") else report


def test_bobs_decision_under_the_new_id_meets_anns_021_rename_and_agent_edit(tmp_path: Path) -> None:
    ann, bob = _team(tmp_path)
    # Ann: her PLUR 0.21 wrote the rename, an agent then rated the engram, and a tension was found on it.
    renamed = {**LATER, "id": NEW, "feedback_signals": {"positive": 1, "negative": 0, "neutral": 0}}
    write_engrams(ann, FIRST, renamed, OTHER)
    tensions = [_tension(FIRST, OTHER, 1), _tension(renamed, OTHER, 2)]
    (ann / "tensions.yaml").write_text(dump_tensions_document(tensions))
    # Bob (PLUR 0.20): the review console shows the later copy under 0.21's id and he approves it there.
    session = open_session(bob, "Bob Reviewer", load_history=False, use_cache=False)
    assert {d.id for d in session.queue.rows()} >= {K, NEW}
    session.execute(ApproveDrafts(tuple(session.writes.seen([NEW])), note="checked"))
    _sync_all(ann, bob)

    assert (ann / "engrams.yaml").read_bytes() == (bob / "engrams.yaml").read_bytes()
    assert (ann / "tensions.yaml").read_bytes() == (bob / "tensions.yaml").read_bytes()
    records = engrams_in(bob)
    assert [r["id"] for r in records] == [K, NEW, OTHER["id"]]  # no second copy under the old id
    assert records[0]["statement"] == FIRST["statement"] and records[0]["commitment"] == "draft"
    later = records[1]
    assert later["statement"] == LATER["statement"] and later["commitment"] != "draft"  # Bob's decision
    assert later["feedback_signals"] == renamed["feedback_signals"]  # and Ann's agent's rating
    ids = {str(r["id"]) for r in records}
    sides = [(t["engram_a"], t["statement_a"]) for t in load_general((bob / "tensions.yaml").read_text())]
    assert sides == [(K, FIRST["statement"]), (NEW, LATER["statement"])]
    assert all(engram_id in ids for engram_id, _ in sides)
    report = run_check(bob, use_cache=False)  # Bob's signed approval still stands on the merged record
    assert report.untrusted == [] and report.unfinished == [] and report.invalid == [], report.to_text()


def test_anns_021_rename_meets_bobs_agent_edit_under_the_old_id(tmp_path: Path) -> None:
    ann, bob = _team(tmp_path)
    write_engrams(ann, FIRST, {**LATER, "id": NEW}, OTHER)
    write_engrams(bob, FIRST, {**LATER, "tags": ["ops"], "updated_at": "2026-12-02T09:00:00.000Z"}, OTHER)
    _sync_all(ann, bob)
    assert (ann / "engrams.yaml").read_bytes() == (bob / "engrams.yaml").read_bytes()
    records = engrams_in(ann)
    assert [r["id"] for r in records] == [K, NEW, OTHER["id"]]
    assert records[1]["tags"] == ["ops"] and records[1]["statement"] == LATER["statement"]


def test_tensions_follow_a_rename_only_where_0_21_rewrote_them(tmp_path: Path) -> None:
    # 0.21's loader rename (P1) leaves tensions as they are: one naming the shared id still names the first copy.
    # Its sync-pull rename (P1b, CHANGELOG 0.21.0: "local episode/tension references follow it") rewrites them, and
    # the merge carries that rewrite to the other clone instead of keeping the old reference beside it.
    ann, bob = _team(tmp_path)
    (ann / "tensions.yaml").write_text(dump_tensions_document([_tension(FIRST, OTHER, 1), _tension(LATER, OTHER, 2)]))
    git(ann, "commit", "-q", "-am", "two tensions on the shared id")
    git(ann, "push", "-q")
    git(bob, "pull", "-q")
    renamed = {**LATER, "id": NEW}
    write_engrams(ann, FIRST, renamed, OTHER)
    (ann / "tensions.yaml").write_text(dump_tensions_document([_tension(FIRST, OTHER, 1), _tension(renamed, OTHER, 2)]))
    write_engrams(bob, FIRST, LATER, {**OTHER, "tags": ["ops"]})
    _sync_all(ann, bob)
    assert (ann / "tensions.yaml").read_bytes() == (bob / "tensions.yaml").read_bytes()
    tensions = load_general((bob / "tensions.yaml").read_text())
    assert [(t["id"], t["engram_a"]) for t in tensions] == [("T-2026-12-02-001", K), ("T-2026-12-02-002", NEW)]
    assert [r["id"] for r in engrams_in(bob)] == [K, NEW, OTHER["id"]]
