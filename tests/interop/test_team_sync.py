"""Team review over a git-synced store: real git (a bare remote, clones), the real PLUR writing and syncing on
each clone, plur_desk deciding on each; every clone converges, nothing is lost, every disagreement is listed."""

from __future__ import annotations

import pytest

from support.team import Team, git

from plur_desk.store import team_ledger

pytestmark = pytest.mark.interop
TEAM = {"scope": "project:team", "visibility": "public"}


def _drafts(n: int) -> list[tuple[str, dict]]:
    return [(f"Team draft {i}: deploys freeze on day {i}", {**TEAM, "commitment": "draft"}) for i in range(n)]


@pytest.fixture
def team(tmp_path) -> Team:
    return Team(tmp_path)


def _ids(engrams: dict, text: str) -> list[str]:
    return [i for i, e in engrams.items() if e["statement"] == text]


def test_same_draft_approved_and_rejected_and_same_day_learns_converge(team: Team) -> None:
    team.seed("Ann", _drafts(3))
    team.clone("Bob")
    assert team.sync("Bob")["action"] in ("up-to-date", "synced")
    ann, bob = team.session("Ann"), team.session("Bob")
    draft = sorted(e["id"] for e in ann.all_engrams() if e.get("commitment") == "draft")[0]
    ann.approve([draft])
    bob.reject([draft], "not true for the whole team")
    team.plur("Ann", [{"op": "learn", "statement": "Ann learned the cache is warmed at night", "options": TEAM}])
    team.plur("Bob", [{"op": "learn", "statement": "Bob learned the queue drains at noon", "options": TEAM}])

    team.sync("Ann")
    result = team.sync("Bob")
    assert "NOT pulled" not in result["message"], result
    assert "push_error" not in result, result
    team.sync("Ann")
    engrams = team.assert_converged()

    record = engrams[draft]
    decisions = {(r["by"], r["state"]) for r in record["reviews"]}
    assert decisions == {("Ann", "approved"), ("Bob", "rejected")}
    assert record["status"] == "retired"  # the non-injecting state until someone settles it
    assert [d["kind"] for d in record["review_disagreements"]] == ["approve-vs-reject"]
    ann_new = _ids(engrams, "Ann learned the cache is warmed at night")
    bob_new = _ids(engrams, "Bob learned the queue drains at noon")
    assert len(ann_new) == len(bob_new) == 1 and ann_new != bob_new
    moved = team_ledger.read(team.clones["Bob"], team_ledger.RENUMBERED)
    assert [m["new"] for m in moved] == bob_new  # Bob's id was not on the remote yet: Bob's record moved


def test_plur_sync_diverges_without_the_driver_and_converges_once_installed(team: Team) -> None:
    team.seed("Ann", _drafts(2), driver=False)
    team.clone("Bob", driver=False)
    team.plur("Ann", [{"op": "learn", "statement": "Ann: builds use the shared cache", "options": TEAM}])
    team.plur("Bob", [{"op": "learn", "statement": "Bob: builds skip the shared cache", "options": TEAM}])
    team.sync("Ann")
    stuck = team.sync("Bob")
    assert "NOT pulled" in stuck["message"] or "push_error" in stuck, stuck  # PLUR alone: diverged
    assert "NOT pulled" in team.sync("Bob")["message"]  # and it stays so

    from plur_desk.app.git_repo import find_repo
    from plur_desk.app.merge_driver import install

    for name in ("Ann", "Bob"):
        install(find_repo(team.clones[name]))  # type: ignore[arg-type]
    healed = team.sync("Bob")
    assert "NOT pulled" not in healed["message"] and "push_error" not in healed, healed
    team.sync("Ann")
    engrams = team.assert_converged()
    texts = {e["statement"] for e in engrams.values()}
    assert {"Ann: builds use the shared cache", "Bob: builds skip the shared cache"} <= texts
    assert git(team.clones["Bob"], "rev-parse", "HEAD") == git(team.clones["Ann"], "rev-parse", "HEAD")
