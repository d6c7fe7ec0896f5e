"""ReviewSession actions, their refusals, and audited undo/redo (no Qt, no Node)."""

from __future__ import annotations

import hashlib
import json

import pytest

from plur_desk.domain.commands import (
    ApproveDrafts,
    ConfirmTension,
    DismissTension,
    EditStatement,
    RejectDrafts,
    ResolveTension,
    SetValidity,
    SplitInTime,
)
from plur_desk.infra.errors import ActionRefused, ChangedSinceError
from plur_desk.store.lists.yaml_dump import dump_engrams_document

from support.sessions import engram as _engram
from support.sessions import events as _events
from support.sessions import on_disk as _disk


def test_drafts_queue_oldest_first(session):
    assert [r.id for r in session.queue.rows()] == [f"ENG-2026-11-0{i}-001" for i in range(1, 5)]


def test_approve_sets_commitment_review_and_event(session):
    session.execute(
        ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"])), level="decided", note="looks right")
    )
    disk = _disk(session, "ENG-2026-11-01-001")
    assert disk["commitment"] == "decided"
    assert disk["review"] == {
        "state": "approved",
        "by": "Ada Reviewer",
        "at": "2026-12-02T12:00:00.000Z",
        "level": "decided",
        "note": "looks right",
    }
    assert disk["updated_at"] == "2026-12-02T12:00:00.000Z"
    assert disk["x_custom"] == {"kept": True}
    (event,) = _events(session)
    assert event["event"] == "engram_updated"
    assert event["data"] == {
        "action": "approve",
        "field": "commitment",
        "from": "draft",
        "to": "decided",
        "note": "looks right",
        # what was decided, under the signature: the record, its content and the values the decision set
        "decided": {
            "file": "engrams",
            "id": "ENG-2026-11-01-001",
            "content_hash": disk["content_hash"],
            "statement_sha256": hashlib.sha256(disk["statement"].encode()).hexdigest(),
            "sets": {"commitment": "decided", "review": disk["review"]},
        },
    }
    assert event["actor"] == {
        "asserted_by": "Ada Reviewer",
        "kind": "human",
        "runtime": {"name": "plur-desk", "version": "0.1.0"},
    }


def test_approve_locked_sets_lock_fields(session):
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"])), level="locked", note="team rule"))
    disk = _disk(session, "ENG-2026-11-01-001")
    assert disk["locked_at"] == "2026-12-02T12:00:00.000Z" and disk["locked_reason"] == "team rule"


def test_bulk_approve_is_one_write_with_an_event_each(session):
    ids = [r.id for r in session.queue.rows()]
    before_inode = (session.store.root / "engrams.yaml").stat().st_ino
    change = session.execute(ApproveDrafts(tuple(session.writes.seen(ids))))
    assert change.engrams == set(ids) and change.events == len(ids)
    assert (session.store.root / "engrams.yaml").stat().st_ino != before_inode
    assert [e["engram_id"] for e in _events(session)] == ids
    assert session.queue.rows() == []


def test_refusals(session):
    with pytest.raises(ActionRefused, match="not a draft"):
        session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-05-001"]))))
    with pytest.raises(ActionRefused, match="needs a reason"):
        session.execute(RejectDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"])), ""))
    with pytest.raises(ActionRefused, match="not a commitment level"):
        session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"])), level="maybe"))
    with pytest.raises(ActionRefused, match="after valid_until"):
        session.execute(SetValidity(tuple(session.writes.seen(["ENG-2026-11-01-001"])), "2027-01-02", "2027-01-01"))
    with pytest.raises(ActionRefused, match="must be a date"):
        session.execute(SetValidity(tuple(session.writes.seen(["ENG-2026-11-01-001"])), "next week", None))
    with pytest.raises(ActionRefused, match="not one of the two"):
        session.execute(ResolveTension(session.writes.seen_tension("T-2026-1201-001"), "ENG-2026-11-01-001"))
    assert _events(session) == []


def test_changed_since_you_looked(session):
    engram_id = "ENG-2026-11-01-001"
    path = session.store.root / "engrams.yaml"
    path.write_text(path.read_text().replace("Statement number 1\n", "Statement number 1, edited by an agent\n"))
    with pytest.raises(ChangedSinceError, match="statement"):
        session.execute(ApproveDrafts(tuple(session.writes.seen([engram_id]))))
    # a routine PLUR rewrite (counters) is not a conflict
    session.reload_if_changed()
    path.write_text(path.read_text().replace("    x_custom:", "    injection_count: 3\n    x_custom:", 1))
    session.execute(ApproveDrafts(tuple(session.writes.seen([engram_id]))))
    assert _disk(session, engram_id)["injection_count"] == 3


def test_reject_retires_flags_reassertions_and_undo_clears_it(session):
    session.execute(RejectDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"])), "not true"))
    disk = _disk(session, "ENG-2026-11-01-001")
    assert disk["status"] == "retired" and disk["rationale"] == "Retired: rejected in review: not true"
    path = session.store.root / "engrams.yaml"
    again = _engram(7, statement="Statement number 1", content_hash="1" * 64)
    path.write_text(path.read_text() + dump_engrams_document({"engrams": [again]}).split("\n", 1)[1])
    session.reload_if_changed()
    row = next(r for r in session.queue.rows() if r.id == again["id"])
    assert "rejected before" in row.flags
    assert row.rejected_before.reason == "not true" and row.rejected_before.by == "Ada Reviewer"
    session.undo()
    row = next(r for r in session.queue.rows() if r.id == again["id"])
    assert "rejected before" not in row.flags


def test_edit_keeps_old_text_in_history_and_bumps_version(session):
    session.execute(
        EditStatement(session.writes.seen(["ENG-2026-11-01-001"])[0], "A clearer statement about the build")
    )
    disk = _disk(session, "ENG-2026-11-01-001")
    assert disk["engram_version"] == 2
    from plur_desk.domain.plur_rules.derived import content_hash

    assert disk["content_hash"] == content_hash("A clearer statement about the build")
    (event,) = _events(session)
    assert event["data"]["from"] == "Statement number 1"
    assert event["data"]["to"] == "A clearer statement about the build"


def test_validity_creates_temporal_with_learned_at(session):
    session.execute(
        SetValidity(tuple(session.writes.seen(["ENG-2026-11-02-001"])), "2026-01-01", "2027-06-30T12:00:00Z")
    )
    disk = _disk(session, "ENG-2026-11-02-001")
    assert disk["temporal"] == {
        "learned_at": "2026-12-02T12:00:00.000Z",
        "valid_from": "2026-01-01",
        "valid_until": "2027-06-30T12:00:00Z",
    }


def test_undo_redo_are_audited_and_refuse_when_changed(session):
    engram_id = "ENG-2026-11-01-001"
    session.execute(ApproveDrafts(tuple(session.writes.seen([engram_id]))))
    session.undo()
    assert _disk(session, engram_id)["commitment"] == "draft"
    assert "review" not in _disk(session, engram_id)
    session.redo()
    assert _disk(session, engram_id)["commitment"] == "decided"
    kinds = [(e["data"]["action"], e["data"].get("undos") or e["data"].get("redos")) for e in _events(session)]
    assert kinds == [("approve", None), ("undo", "approve"), ("redo", "approve")]
    path = session.store.root / "engrams.yaml"
    path.write_text(path.read_text().replace("commitment: decided\n", "commitment: locked\n", 1))
    session.reload_if_changed()
    with pytest.raises(ChangedSinceError):
        session.undo()
    assert _disk(session, engram_id)["commitment"] == "locked"


def test_resolve_retires_loser_and_undo_restores_both(session):
    session.execute(ResolveTension(session.writes.seen_tension("T-2026-1201-001"), "ENG-2026-11-06-001"))
    loser = _disk(session, "ENG-2026-11-05-001")
    assert loser["status"] == "retired"
    assert loser["rationale"] == "Retired: tension T-2026-1201-001 resolved in favor of ENG-2026-11-06-001"
    record = session.tension("T-2026-1201-001")
    assert record["status"] == "resolved" and record["resolved_by"] == "ENG-2026-11-06-001"
    session.undo()
    assert _disk(session, "ENG-2026-11-05-001")["status"] == "active"
    assert session.tension("T-2026-1201-001")["status"] == "detected"
    assert session.tension("T-2026-1201-001")["resolved_by"] is None


def test_resolve_refused_before_any_file_when_the_loser_changed(session):
    path = session.store.root / "engrams.yaml"
    path.write_text(path.read_text().replace("Statement number 5\n", "Statement number 5 (changed)\n"))
    files = _snapshot_files(session.store.root)
    with pytest.raises(ChangedSinceError, match="Nothing was written"):
        session.execute(ResolveTension(session.writes.seen_tension("T-2026-1201-001"), "ENG-2026-11-06-001"))
    assert _snapshot_files(session.store.root) == files


def test_resolve_rolls_back_the_record_when_retiring_fails(session, monkeypatch):
    """The loser changes between the two steps: the record is set back, and the message says so (not "nothing
    was written")."""
    path = session.store.root / "engrams.yaml"
    real = session.store.write_tensions

    def racing(*args, **kwargs):
        result = real(*args, **kwargs)
        if not path.read_text().count("(changed)"):
            path.write_text(path.read_text().replace("Statement number 5\n", "Statement number 5 (changed)\n"))
        return result

    monkeypatch.setattr(session.store, "write_tensions", racing)
    with pytest.raises(ChangedSinceError) as caught:
        session.execute(ResolveTension(session.writes.seen_tension("T-2026-1201-001"), "ENG-2026-11-06-001"))
    assert "nothing was written" not in str(caught.value)
    assert "tensions.yaml had already been changed and was set back" in str(caught.value)
    assert session.tension("T-2026-1201-001")["status"] == "detected"
    actions = [e["data"]["action"] for e in _events(session)]
    assert actions == ["resolve", "rollback_resolve"]
    assert not list((session.store.root / ".plur-desk" / "journal").glob("*.json"))


def test_resolve_refuses_a_winner_missing_from_the_store(session):
    path = session.store.root / "tensions.yaml"
    path.write_text(path.read_text().replace("engram_b: ENG-2026-11-06-001", "engram_b: ENG-1999-01-01-001"))
    session.reload_if_changed()
    files = _snapshot_files(session.store.root)
    with pytest.raises(ActionRefused, match="not in the store"):
        session.execute(ResolveTension(session.writes.seen_tension("T-2026-1201-001"), "ENG-1999-01-01-001"))
    assert _snapshot_files(session.store.root) == files


def _snapshot_files(root):
    return {p.relative_to(root): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_split_in_time(session):
    session.execute(SplitInTime(session.writes.seen_tension("T-2026-1201-001"), "2026-11-06"))
    earlier, later = _disk(session, "ENG-2026-11-05-001"), _disk(session, "ENG-2026-11-06-001")
    assert earlier["temporal"]["valid_until"] == "2026-11-05"
    assert later["temporal"]["valid_from"] == "2026-11-06"
    assert earlier["status"] == later["status"] == "active"
    assert session.tension("T-2026-1201-001")["status"] == "dismissed"


def test_confirm_and_dismiss_write_events(session):
    session.execute(ConfirmTension(session.writes.seen_tension("T-2026-1201-001")))
    session.execute(DismissTension(session.writes.seen_tension("T-2026-1201-001"), "not a real conflict"))
    events = _events(session)
    assert [e["data"]["action"] for e in events] == ["confirm", "dismiss"]
    assert events[1]["data"]["reason"] == "not a real conflict"
    assert all(e["actor"]["kind"] == "human" for e in events)


def test_timeline_and_history_filters(session):
    from plur_desk.app.history.history_index import HistoryFilter

    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"]))))
    session.execute(RejectDrafts(tuple(session.writes.seen(["ENG-2026-11-02-001"])), "nope"))
    timeline = session.history.timeline("ENG-2026-11-01-001")
    assert [e["data"]["action"] for e in timeline] == ["approve"]
    page = session.history.page(HistoryFilter(types=frozenset({"engram_retired"})), 0, 10)
    assert [e["engram_id"] for e in page] == ["ENG-2026-11-02-001"]
    assert session.history.page(HistoryFilter(actor_kinds=frozenset({"agent"})), 0, 10) == []
    assert len(session.history.page(HistoryFilter(reviewer="ada"), 0, 10)) == 2


def test_a_review_without_its_event_is_reported(session):
    from plur_desk.app.check import run_check

    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"]))))
    assert session.unlogged_reviews() == []
    (session.store.root / "history" / "2026-12.jsonl").write_text("")  # as if we crashed before the append
    session.history.load()
    assert session.unlogged_reviews() == ["ENG-2026-11-01-001"]
    report = run_check(session.store.root)
    assert any("no history event" in u for u in report.unfinished)
    assert report.exit_code == 1


def test_undo_history_is_bounded_and_a_new_action_clears_redo() -> None:
    from plur_desk.app.review.undo import UndoHistory
    from plur_desk.domain.review import Operation

    history = UndoHistory(limit=3)
    for n in range(5):
        history.done(Operation("approve", f"approve {n}"))
    labels = []
    while history.can_undo:
        labels.append(history.next_undo().label)
        history.undone()
    assert labels == ["approve 4", "approve 3", "approve 2"]  # the oldest two were forgotten
    assert history.redo_label() == "approve 2"
    history.done(Operation("reject", "reject 9"))
    assert not history.can_redo and history.undo_label() == "reject 9"


def test_a_refused_second_step_keeps_its_plan_on_disk_until_the_set_back_replaces_it(session, monkeypatch):
    """Between the refused engrams step and the set-back's own step, the journal on disk still plans the whole
    action: a crash there leaves recovery the plan, never a record of the tension step alone that it would report
    as a completed resolve (tension resolved, loser still active, no rollback event)."""
    path = session.store.root / "engrams.yaml"
    real_tensions, real_rollback = session.store.write_tensions, session.writes._rollback
    on_disk: list[int] = []

    def racing(*args, **kwargs):
        result = real_tensions(*args, **kwargs)
        if not path.read_text().count("(changed)"):
            path.write_text(path.read_text().replace("Statement number 5\n", "Statement number 5 (changed)\n"))
        return result

    def set_back(*args, **kwargs):
        records = list((session.store.root / ".plur-desk" / "journal").glob("*.json"))
        on_disk.extend(len(json.loads(r.read_text())["steps"]) for r in records)
        return real_rollback(*args, **kwargs)

    monkeypatch.setattr(session.store, "write_tensions", racing)
    monkeypatch.setattr(session.writes, "_rollback", set_back)
    with pytest.raises(ChangedSinceError):
        session.execute(ResolveTension(session.writes.seen_tension("T-2026-1201-001"), "ENG-2026-11-06-001"))
    assert on_disk == [2]  # the tension step done and the engrams step planned, as recovery must find them
    assert [e["data"]["action"] for e in _events(session)] == ["resolve", "rollback_resolve"]
