"""Settling team disagreements: an ordinary audited decision on one clone clears the list on every clone."""

from __future__ import annotations

import pytest

from plur_desk import cli
from plur_desk.app.team import team_review
from plur_desk.app.team.sync import run_sync
from plur_desk.domain.commands import ApproveDrafts, RejectDrafts, ResolveTension

from support.team import Team

pytestmark = pytest.mark.interop
TEAM = {"scope": "project:team", "visibility": "public"}


def _sync(team: Team, *names: str) -> None:
    for name in names:
        report = run_sync(team.clones[name])
        assert report.error is None, report.to_text()


def test_settling_approve_vs_reject_clears_it_everywhere(tmp_path) -> None:
    team = Team(tmp_path)
    team.seed("Ann", [("Use the blue-green rollout for the API", {**TEAM, "commitment": "draft"})])
    team.clone("Bob")
    draft = next(iter(team.session("Ann").all_engrams()))["id"]
    (_s := team.session("Ann")).execute(ApproveDrafts(tuple(_s.writes.seen([draft]))))
    (_s := team.session("Bob")).execute(RejectDrafts(tuple(_s.writes.seen([draft])), "we moved to canaries"))
    _sync(team, "Ann", "Bob", "Ann")
    for name in ("Ann", "Bob"):
        listed = team_review.disagreements(team.session(name))
        assert [(d.kind, d.record) for d in listed] == [("approve-vs-reject", draft)]
        assert "Ann approved" in listed[0].summary and "Bob rejected" in listed[0].summary

    assert cli.main(["disagreements", str(team.clones["Bob"])]) == 1
    ann = team.session("Ann")
    team_review.settle_decision(ann, draft, "approved", note="canaries are for the web tier only")
    assert team_review.disagreements(ann) == []
    ann.undo()  # an audited undo, as for any decision
    assert [d.kind for d in team_review.disagreements(ann)] == ["approve-vs-reject"]
    ann.redo()
    assert team_review.disagreements(ann) == []
    who = [(d["by"], d["state"]) for d in team_review.decisions(ann, draft)]
    assert who == [("Ann", "approved"), ("Bob", "rejected"), ("Ann", "approved")]
    _sync(team, "Ann", "Bob")
    engrams = team.assert_converged()
    assert engrams[draft]["status"] == "active" and engrams[draft]["commitment"] == "decided"
    assert team_review.disagreements(team.session("Bob")) == []
    assert cli.main(["disagreements", str(team.clones["Bob"])]) == 0
    history = team.plur("Ann", [{"op": "history"}])[0]
    settled = [e for e in history if e["data"].get("action") == "settle_disagreement"]
    assert settled and all(e.get("signature") for e in settled)  # audited and signed


def test_settling_two_winners_reinstates_one(tmp_path) -> None:
    team = Team(tmp_path)
    team.seed("Ann", [("Backups run at 02:00", TEAM), ("Backups run at 04:00", TEAM)])
    ids = sorted(e["id"] for e in team.session("Ann").all_engrams())
    pair = {
        "id_a": ids[0],
        "id_b": ids[1],
        "statement_a": "Backups run at 02:00",
        "statement_b": "Backups run at 04:00",
        "confidence": 0.9,
        "reason": "two times",
    }
    team.plur("Ann", [{"op": "recordTensions", "pairs": [pair]}])
    team.sync("Ann")
    team.clone("Bob")
    tension = next(iter(team.session("Ann").all_tensions()))["id"]
    (_s := team.session("Ann")).execute(ResolveTension(_s.writes.seen_tension(tension), ids[0]))
    (_s := team.session("Bob")).execute(ResolveTension(_s.writes.seen_tension(tension), ids[1]))
    _sync(team, "Ann", "Bob", "Ann")
    assert [d.kind for d in team_review.disagreements(team.session("Bob"))] == ["two-winners"]

    team_review.settle_two_winners(team.session("Bob"), tension, ids[1])
    _sync(team, "Bob", "Ann")
    engrams = team.assert_converged()
    assert (engrams[ids[0]]["status"], engrams[ids[1]]["status"]) == ("retired", "active")
    assert team_review.disagreements(team.session("Ann")) == []
    assert team.plur("Ann", [{"op": "tensions"}])[0][0]["resolved_by"] == ids[1]
    history = team.plur("Bob", [{"op": "history"}])[0]
    settled = [e for e in history if (e.get("data") or {}).get("action") == "settle_two_winners"]
    assert len(settled) == 2 and all(e.get("signature") for e in settled)  # tension step and winner: both signed
