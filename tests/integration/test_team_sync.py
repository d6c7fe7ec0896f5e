"""Team review over a git-synced store: real git (a bare remote, clones), the real PLUR writing and syncing on
each clone, plur_desk deciding on each; every clone converges, nothing is lost, every disagreement is listed."""

from __future__ import annotations

import pytest

from plur_desk.app.team import team_review
from plur_desk.domain.commands import ApproveDrafts, EditStatement, RejectDrafts, ResolveTension
from plur_desk.store.team import team_ledger

from support.team import Team, git

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
    ann.execute(ApproveDrafts(tuple(ann.writes.seen([draft]))))
    bob.execute(RejectDrafts(tuple(bob.writes.seen([draft])), "not true for the whole team"))
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

    team.plur("Ann", [{"op": "learn", "statement": "Ann: a write by PLUR rewrites the whole file", "options": TEAM}])
    kept = team.plur("Ann", [{"op": "load"}])[0]["engrams"][draft]  # PLUR's passthrough keeps both keys
    assert kept["reviews"] == record["reviews"] and kept["review_disagreements"] == record["review_disagreements"]


def test_plur_sync_diverges_without_the_driver_and_converges_once_installed(team: Team) -> None:
    team.seed("Ann", _drafts(2), driver=False)
    team.clone("Bob", driver=False)
    team.plur("Ann", [{"op": "learn", "statement": "Ann: builds use the shared cache", "options": TEAM}])
    team.plur("Bob", [{"op": "learn", "statement": "Bob: builds skip the shared cache", "options": TEAM}])
    team.sync("Ann")
    stuck = team.sync("Bob")
    assert "NOT pulled" in stuck["message"] or "push_error" in stuck, stuck  # PLUR alone: diverged
    assert "NOT pulled" in team.sync("Bob")["message"]  # and it stays so

    from plur_desk.app.team.git_repo import find_repo
    from plur_desk.app.team.merge_driver import install

    for name in ("Ann", "Bob"):
        install(find_repo(team.clones[name]))  # type: ignore[arg-type]
    healed = team.sync("Bob")
    assert "NOT pulled" not in healed["message"] and "push_error" not in healed, healed
    team.sync("Ann")
    engrams = team.assert_converged()
    texts = {e["statement"] for e in engrams.values()}
    assert {"Ann: builds use the shared cache", "Bob: builds skip the shared cache"} <= texts
    assert git(team.clones["Bob"], "rev-parse", "HEAD") == git(team.clones["Ann"], "rev-parse", "HEAD")


# -- plur-desk sync ---------------------------------------------------------------------------------------------


def _desk_sync(team: Team, name: str):
    from plur_desk.app.team.sync import run_sync

    report = run_sync(team.clones[name])
    assert report.error is None, report.to_text()
    return report


def test_two_winners_for_one_tension_are_listed_on_every_clone(team: Team) -> None:
    team.seed("Ann", [("Releases ship on Tuesdays", TEAM), ("Releases ship on Thursdays", TEAM)])
    ids = sorted(e["id"] for e in team.session("Ann").all_engrams())
    team.plur(
        "Ann",
        [
            {
                "op": "recordTensions",
                "pairs": [
                    {
                        "id_a": ids[0],
                        "id_b": ids[1],
                        "statement_a": "Releases ship on Tuesdays",
                        "statement_b": "Releases ship on Thursdays",
                        "confidence": 0.9,
                        "reason": "two release days",
                    }
                ],
            }
        ],
    )
    team.sync("Ann")
    team.clone("Bob")
    tension = next(iter(team.session("Ann").tensions())).id
    (_s := team.session("Ann")).execute(ResolveTension(_s.writes.seen_tension(tension), ids[0]))
    (_s := team.session("Bob")).execute(ResolveTension(_s.writes.seen_tension(tension), ids[1]))

    assert _desk_sync(team, "Ann").exit_code == 0
    bob = _desk_sync(team, "Bob")
    assert bob.exit_code == 1 and bob.converged
    ann = _desk_sync(team, "Ann")
    engrams = team.assert_converged()
    assert {engrams[i]["status"] for i in ids} == {"retired"}  # both retired: nobody's decision silently wins
    assert f"{ids[1]}: status active -> retired" in bob.incoming, bob.to_text()
    for report in (ann, bob):
        kinds = {(d.kind, d.record) for d in report.disagreements}
        assert ("two-winners", tension) in kinds, report.to_text()
    assert "Team disagreement" in bob.to_text()


def test_private_record_stays_local_during_a_team_pull_and_decisions_merge(team: Team) -> None:
    team.seed("Ann", _drafts(3))
    team.clone("Bob")
    for name in ("Ann", "Bob"):
        (team.clones[name] / "config.yaml").write_text("sync:\n  remote_type: shared\n")
    secret = "Bob's private note: the staging password rotates monthly"
    team.plur("Bob", [{"op": "learn", "statement": secret, "options": {"scope": "project:team"}}])  # private default
    drafts = sorted(e["id"] for e in team.session("Ann").all_engrams() if e.get("commitment") == "draft")
    (_s := team.session("Ann")).execute(ApproveDrafts(tuple(_s.writes.seen([drafts[0]]))))
    bob_session = team.session("Bob")
    private = [e["id"] for e in bob_session.all_engrams() if e["statement"] == secret]
    warnings = team_review.visibility_warnings(bob_session, [drafts[1], *private])
    assert len(warnings) == 1 and "private" in warnings[0] and warnings[0].startswith(private[0])
    bob_session.execute(ApproveDrafts(tuple(bob_session.writes.seen([drafts[1]]))))

    _desk_sync(team, "Ann")
    bob = _desk_sync(team, "Bob")
    _desk_sync(team, "Ann")
    assert bob.held_local == 1
    assert any(line.startswith(f"Ann approved {drafts[0]}") for line in bob.incoming), bob.to_text()
    assert any(line.startswith(f"Bob approved {drafts[1]}") for line in bob.outgoing), bob.to_text()
    assert "Kept on this machine: 1 engram(s)" in bob.to_text()
    bob_tree = (team.clones["Bob"] / "engrams.yaml").read_text()
    assert secret in bob_tree  # still on Bob's machine
    assert secret not in git(team.clones["Bob"], "show", "origin/main:engrams.yaml")  # never pushed
    assert secret not in (team.clones["Ann"] / "engrams.yaml").read_text()
    ann_records = team.plur("Ann", [{"op": "load"}])[0]["engrams"]
    bob_records = team.plur("Bob", [{"op": "load"}])[0]["engrams"]
    assert team.plur("Bob", [{"op": "load"}])[0]["quarantined"] == []
    assert {k: v for k, v in bob_records.items() if v["statement"] != secret} == ann_records
    assert ann_records[drafts[0]]["commitment"] == ann_records[drafts[1]]["commitment"] == "decided"
    assert git(team.clones["Bob"], "stash", "list") == ""
    again = team.sync("Bob")  # PLUR's own sync afterwards: nothing diverged
    assert "NOT pulled" not in again["message"] and "push_error" not in again, again


def test_desk_sync_repairs_plur_diverged_not_pulled_state(team: Team) -> None:
    from plur_desk import cli

    team.seed("Ann", _drafts(2), driver=False)
    team.clone("Bob", driver=False)
    drafts = sorted(e["id"] for e in team.session("Ann").all_engrams() if e.get("commitment") == "draft")
    (_s := team.session("Ann")).execute(ApproveDrafts(tuple(_s.writes.seen([drafts[0]]))))
    (_s := team.session("Bob")).execute(RejectDrafts(tuple(_s.writes.seen([drafts[0]])), "duplicate of an older rule"))
    team.plur("Ann", [{"op": "learn", "statement": "Ann: nightly builds are kept a week", "options": TEAM}])
    team.plur("Bob", [{"op": "learn", "statement": "Bob: nightly builds are kept a month", "options": TEAM}])
    team.sync("Ann")
    assert "NOT pulled" in team.sync("Bob")["message"]  # PLUR leaves Bob diverged

    assert cli.main(["sync", str(team.clones["Bob"])]) == 1  # converged, one disagreement waits
    assert cli.main(["sync", str(team.clones["Ann"])]) == 1
    engrams = team.assert_converged()
    assert {(r["by"], r["state"]) for r in engrams[drafts[0]]["reviews"]} == {("Ann", "approved"), ("Bob", "rejected")}
    texts = {e["statement"] for e in engrams.values()}
    assert {"Ann: nightly builds are kept a week", "Bob: nightly builds are kept a month"} <= texts
    assert "NOT pulled" not in team.sync("Ann")["message"]  # PLUR's sync is happy again, with the driver installed


def test_three_reviewers_on_one_engram_converge(team: Team) -> None:
    team.seed("Ann", _drafts(2))
    team.clone("Bob")
    team.clone("Cid")
    draft = sorted(e["id"] for e in team.session("Ann").all_engrams() if e.get("commitment") == "draft")[0]
    (_s := team.session("Ann")).execute(ApproveDrafts(tuple(_s.writes.seen([draft])), "leaning"))
    (_s := team.session("Bob")).execute(ApproveDrafts(tuple(_s.writes.seen([draft])), "locked"))
    (_s := team.session("Cid")).execute(
        EditStatement(_s.writes.seen([draft])[0], "Deploys freeze on Fridays after 14:00")
    )
    for name in ("Ann", "Bob", "Cid", "Ann", "Bob"):
        _desk_sync(team, name)
    engrams = team.assert_converged()
    record = engrams[draft]
    assert record["statement"] == "Deploys freeze on Fridays after 14:00"
    assert record["commitment"] == "locked"  # the higher approval; both approvals are kept
    assert {(r["by"], r["level"]) for r in record["reviews"]} == {("Ann", "leaning"), ("Bob", "locked")}


def test_plur_sync_pulls_over_a_private_record_through_the_autostash_pop(team: Team) -> None:
    team.seed("Ann", _drafts(2))
    team.clone("Bob")
    for name in ("Ann", "Bob"):
        (team.clones[name] / "config.yaml").write_text("sync:\n  remote_type: shared\n")
    secret = "Bob keeps this to himself: the pager rota is unfair"
    team.plur("Bob", [{"op": "learn", "statement": secret, "options": {"scope": "project:team"}}])
    assert "NOT pulled" not in team.sync("Bob")["message"]  # Bob's tree is now dirty for good (the strip)
    team.plur("Ann", [{"op": "learn", "statement": "Ann: the pager rota changes on Mondays", "options": TEAM}])
    team.sync("Ann")

    result = team.sync("Bob")  # pull --rebase over the dirty tree: autostash, then the pop goes through the driver
    assert "NOT pulled" not in result["message"], result
    bob = team.plur("Bob", [{"op": "load"}])[0]
    assert bob["quarantined"] == []
    texts = {e["statement"] for e in bob["engrams"].values()}
    assert {secret, "Ann: the pager rota changes on Mondays"} <= texts
    data = (team.clones["Bob"] / "engrams.yaml").read_bytes()
    assert b"<<<<<<<" not in data
    assert git(team.clones["Bob"], "stash", "list") == ""
    assert secret not in git(team.clones["Bob"], "show", "origin/main:engrams.yaml")


def test_a_tension_on_a_renumbered_engram_follows_it(team: Team) -> None:
    team.seed("Ann", [("Staging deploys need a ticket", TEAM)])
    team.clone("Bob")
    old = next(iter(team.session("Ann").all_engrams()))["id"]
    team.plur("Ann", [{"op": "learn", "statement": "Ann: the ticket queue is triaged daily", "options": TEAM}])
    (bob_new,) = team.plur("Bob", [{"op": "learn", "statement": "Staging deploys need no ticket", "options": TEAM}])
    pair = {
        "id_a": old,
        "id_b": bob_new["id"],
        "statement_a": "Staging deploys need a ticket",
        "statement_b": "Staging deploys need no ticket",
        "confidence": 0.9,
        "reason": "ticket or not",
    }
    team.plur("Bob", [{"op": "recordTensions", "pairs": [pair]}])
    _desk_sync(team, "Ann")
    report = _desk_sync(team, "Bob")
    _desk_sync(team, "Ann")
    engrams = team.assert_converged()
    assert [m["old"] for m in report.renumbered] == [bob_new["id"]]
    moved_to = report.renumbered[0]["new"]
    assert engrams[moved_to]["statement"] == "Staging deploys need no ticket"
    (tensions,) = team.plur("Ann", [{"op": "tensions"}])
    assert [(t["engram_a"], t["engram_b"]) for t in tensions] == [(old, moved_to)]


def test_a_teammate_switching_to_a_shared_remote_deletes_nothing_here(team: Team) -> None:
    note = "A private note that was pushed while the remote was personal"
    team.seed("Ann", [*_drafts(1), (note, {"scope": "project:team"})])
    team.clone("Bob")
    (team.clones["Ann"] / "config.yaml").write_text("sync:\n  remote_type: shared\n")
    (_s := team.session("Ann")).execute(
        ApproveDrafts(
            tuple(
                _s.writes.seen([e["id"] for e in team.session("Ann").all_engrams() if e.get("commitment") == "draft"])
            )
        )
    )
    _desk_sync(team, "Ann")  # Ann's commit now strips the private note: the remote loses it
    assert note not in git(team.clones["Ann"], "show", "origin/main:engrams.yaml")
    _desk_sync(team, "Bob")
    bob = team.plur("Bob", [{"op": "load"}])[0]
    assert note in {e["statement"] for e in bob["engrams"].values()}  # Bob's copy was not deleted by Ann's strip
    assert note in (team.clones["Ann"] / "engrams.yaml").read_text()  # nor Ann's own


def test_plur_rebase_of_several_local_commits_keeps_each_record_whole(team: Team) -> None:
    team.seed("Ann", _drafts(1), driver=False)
    team.clone("Bob", driver=False)
    team.plur("Ann", [{"op": "learn", "statement": "Ann: canaries take ten minutes", "options": TEAM}])
    (bob_new,) = team.plur("Bob", [{"op": "learn", "statement": "Bob: canaries take an hour", "options": TEAM}])
    team.sync("Ann")
    assert "NOT pulled" in team.sync("Bob")["message"]  # Bob's first local commit
    team.plur("Bob", [{"op": "update", "id": bob_new["id"], "fields": {"commitment": "decided"}}])
    assert "NOT pulled" in team.sync("Bob")["message"]  # and a second one, editing the same record
    assert git(team.clones["Bob"], "rev-list", "--count", "origin/main..HEAD") == "2"

    from plur_desk.app.team.git_repo import find_repo
    from plur_desk.app.team.merge_driver import install

    for name in ("Ann", "Bob"):
        install(find_repo(team.clones[name]))  # type: ignore[arg-type]
    healed = team.sync("Bob")  # pull --rebase replays both commits through the driver
    assert "NOT pulled" not in healed["message"] and "push_error" not in healed, healed
    team.sync("Ann")
    engrams = team.assert_converged()
    by_text = {e["statement"]: e for e in engrams.values()}
    assert by_text["Ann: canaries take ten minutes"]["commitment"] == "leaning"  # untouched by Bob's edit
    assert by_text["Bob: canaries take an hour"]["commitment"] == "decided"
    assert by_text["Ann: canaries take ten minutes"]["id"] == bob_new["id"]  # Ann's was pushed first: it keeps it
    assert not any(e.get("review_disagreements") for e in engrams.values())


def test_with_plurs_own_sync_a_tension_follows_its_renumbered_engram(team: Team) -> None:
    team.seed("Ann", [("Staging deploys need a ticket", TEAM)])
    team.clone("Bob")
    old = next(iter(team.session("Ann").all_engrams()))["id"]
    team.plur("Ann", [{"op": "learn", "statement": "Ann: the ticket queue is triaged daily", "options": TEAM}])
    (bob_new,) = team.plur("Bob", [{"op": "learn", "statement": "Staging deploys need no ticket", "options": TEAM}])
    pair = {
        "id_a": old,
        "id_b": bob_new["id"],
        "statement_a": "Staging deploys need a ticket",
        "statement_b": "Staging deploys need no ticket",
        "confidence": 0.9,
        "reason": "ticket or not",
    }
    team.plur("Bob", [{"op": "recordTensions", "pairs": [pair]}])
    team.sync("Ann")
    team.sync("Bob")  # rebase: the driver moves Bob's engram; the post-rewrite hook moves his tension with it
    team.sync("Bob")  # commits that
    team.sync("Ann")
    engrams = team.assert_converged()
    moved_to = next(i for i, e in engrams.items() if e["statement"] == "Staging deploys need no ticket")
    assert moved_to != bob_new["id"]
    (tensions,) = team.plur("Ann", [{"op": "tensions"}])
    assert [(t["engram_a"], t["engram_b"]) for t in tensions] == [(old, moved_to)]
