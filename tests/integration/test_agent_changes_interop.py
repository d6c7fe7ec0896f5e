"""Agent changes around the draft gate, made by the real PLUR (@plur-ai/core 0.20.0), found against the watched
baseline: each listed once with its kind, writer and `silent` flag, nothing untouched listed."""

from __future__ import annotations

import json

import pytest

from plur_desk.app.bootstrap import open_session
from plur_desk.app.changes_cli import main as changes_main
from plur_desk.infra.errors import ChangedSinceError

from support.stores import plur

pytestmark = pytest.mark.interop

AGENT = "agent:claude-code"


def _store(tmp_path):
    """A small store PLUR wrote, with an agent identity: a draft, six active engrams, three tensions."""
    store, home = tmp_path / "store", tmp_path / "node-home"
    store.mkdir()
    (store / "config.yaml").write_text(f'provenance:\n  identity: "{AGENT}"\n', encoding="utf-8")
    texts = [
        ("Deploy freezes happen every Friday afternoon", "draft"),
        ("The CI pipeline uses Node 20 for all builds", None),
        ("Release notes are written by the on-call engineer", None),
        ("Database migrations run before the deploy step", None),
        ("Feature flags are removed within two sprints", None),
        ("The staging cluster runs on three nodes", None),
        ("The staging cluster runs on five nodes", None),
        ("Logs are kept for thirty days", None),
        ("Logs are kept for ninety days", None),
        ("Code review needs one approval", None),
        ("Code review needs two approvals", None),
    ]
    ops = []
    for text, commitment in texts:
        options = {"scope": "project:demo", "session_episode_id": "sess-setup"}
        if commitment:
            options["commitment"] = commitment
        ops.append({"op": "learn", "statement": text, "options": options})
    made = plur(store, home, ops)
    ids = [e["id"] for e in made]
    pairs = [(ids[5], ids[6]), (ids[7], ids[8]), (ids[9], ids[10])]
    recorded = plur(
        store,
        home,
        [
            {
                "op": "recordTensions",
                "pairs": [
                    {"id_a": a, "id_b": b, "statement_a": "a", "statement_b": "b", "confidence": 0.9, "reason": "r"}
                    for a, b in pairs
                ],
            },
            {"op": "tensions"},
        ],
    )
    tension_ids = {(t["engram_a"], t["engram_b"]): t["id"] for t in recorded[1]}
    return store, home, ids, [tension_ids[p] for p in pairs]


def _changes(store, capsys) -> tuple[int, dict]:
    capsys.readouterr()
    code = changes_main([str(store), "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_each_agent_path_is_listed_once_with_kind_writer_and_silence(tmp_path, capsys):
    store, home, ids, tensions = _store(tmp_path)
    assert changes_main([str(store), "--start", "--reviewer", "Alice Reviewer"]) == 0
    code, listed = _changes(store, capsys)
    assert (code, listed["changes"], listed["watched"]) == (0, [], True)

    draft, rewritten, forgotten, pinned, untouched = ids[0], ids[1], ids[2], ids[3], ids[4]
    resolved, dismissed, confirmed = tensions
    plur(
        store,
        home,
        [
            {"op": "update", "id": draft, "fields": {"commitment": "decided"}},
            {"op": "update", "id": rewritten, "fields": {"statement": "The CI pipeline uses Node 22 for all builds"}},
            {"op": "forget", "id": forgotten, "reason": "outdated"},
            {"op": "setPinned", "id": pinned, "pinned": True},
            {
                "op": "learn",
                "statement": "Hotfixes skip the staging cluster",
                "options": {"scope": "project:demo", "session_episode_id": "sess-agent"},
            },
            {"op": "resolve", "id": resolved, "winner": ids[6]},
            {"op": "dismiss", "id": dismissed},
            {"op": "confirm", "id": confirmed},
        ],
    )
    code, listed = _changes(store, capsys)
    assert code == 1
    by_id = {}
    for change in listed["changes"]:
        assert change["id"] not in by_id, f"{change['id']} listed twice"
        by_id[change["id"]] = change
    created = [c["id"] for c in listed["changes"] if c["kind"] == "created_active"]
    assert len(created) == 1
    expected = {
        draft: ("promoted", True),
        rewritten: ("rewritten", True),
        forgotten: ("retired", False),
        pinned: ("pinned", True),
        created[0]: ("created_active", False),
        resolved: ("tension_resolved", False),
        dismissed: ("tension_dismissed", True),
        confirmed: ("tension_confirmed", True),
    }
    assert {i: (c["kind"], c["silent"]) for i, c in by_id.items()} == expected
    assert untouched not in by_id and ids[5] not in by_id  # the resolution's loser is part of the tension's change
    assert by_id[resolved]["also"] == [ids[5]]
    for ident, change in by_id.items():  # PLUR records no actor for a confirm or a dismiss: no writer is made up
        assert change["writer"] == ("(unknown writer)" if ident in (dismissed, confirmed) else AGENT), ident
    assert by_id[created[0]]["session"] == "sess-agent"
    assert by_id[draft]["before"]["commitment"] == "draft" and by_id[draft]["after"]["commitment"] == "decided"
    assert by_id[rewritten]["before"]["statement"] == "The CI pipeline uses Node 20 for all builds"
    assert by_id[resolved]["before"] == {"status": "detected", "resolved_by": None}


def _agent_changes_everything(store, home, ids, tensions):
    draft, rewritten, forgotten, pinned = ids[0], ids[1], ids[2], ids[3]
    resolved, dismissed, confirmed = tensions
    made = plur(
        store,
        home,
        [
            {"op": "update", "id": draft, "fields": {"commitment": "decided"}},
            {"op": "update", "id": rewritten, "fields": {"statement": "The CI pipeline uses Node 22 for all builds"}},
            {"op": "forget", "id": forgotten, "reason": "outdated"},
            {"op": "setPinned", "id": pinned, "pinned": True},
            {"op": "learn", "statement": "Hotfixes skip the staging cluster", "options": {"scope": "project:demo"}},
            {"op": "resolve", "id": resolved, "winner": ids[6]},
            {"op": "dismiss", "id": dismissed},
            {"op": "confirm", "id": confirmed},
        ],
    )
    return made[4]["id"]


def test_revert_puts_the_baseline_back_and_plur_reads_it_with_nothing_quarantined(tmp_path, capsys):
    store, home, ids, tensions = _store(tmp_path)
    before = plur(store, home, [{"op": "load"}, {"op": "tensions"}])
    assert changes_main([str(store), "--start", "--reviewer", "Alice Reviewer"]) == 0
    created = _agent_changes_everything(store, home, ids, tensions)

    session = open_session(store, "Alice Reviewer")
    changes = session.watch.changes()
    assert len(changes) == 8
    for change in changes:
        seen = (
            session.writes.seen_tension(change.id)
            if change.target == "tension"
            else session.writes.seen([change.id])[0]
        )
        session.execute(session.watch.command_for(change, seen, ratify=False))
    session.reload_if_changed()
    assert session.watch.changes() == []
    code, listed = _changes(store, capsys)
    assert (code, listed["changes"]) == (0, [])

    loaded, records, by_id, active = plur(
        store, home, [{"op": "load"}, {"op": "tensions"}, {"op": "getById", "id": ids[0]}, {"op": "list"}]
    )
    assert loaded["quarantined"] == [] and loaded["validate"]["ok"], loaded["validate"]
    old = before[0]["engrams"]
    for ident in ids:
        for name in ("statement", "commitment", "status", "scope", "content_hash"):
            assert loaded["engrams"][ident].get(name) == old[ident].get(name), (ident, name)
        assert bool(loaded["engrams"][ident].get("pinned")) == bool(old[ident].get("pinned")), ident
    assert by_id["commitment"] == "draft"  # the promoted draft is a draft again, as PLUR's getById reads it
    assert loaded["engrams"][created]["commitment"] == "draft"  # learned straight as active: now waits in review
    assert ids[2] in active and ids[5] in active  # forgotten and resolution's loser: active again for PLUR's list
    status = {t["id"]: (t["status"], t.get("resolved_by")) for t in records}
    assert status == {t["id"]: (t["status"], t.get("resolved_by")) for t in before[1]}


def test_ratify_takes_a_change_off_the_list_and_its_undo_puts_it_back(tmp_path):
    store, home, ids, _tensions = _store(tmp_path)
    assert changes_main([str(store), "--start", "--reviewer", "Alice Reviewer"]) == 0
    plur(store, home, [{"op": "update", "id": ids[1], "fields": {"statement": "The CI pipeline uses Node 22"}}])
    session = open_session(store, "Alice Reviewer")
    [change] = session.watch.changes()
    session.execute(session.watch.command_for(change, session.writes.seen([change.id])[0], ratify=True))
    session.reload_if_changed()
    assert session.watch.changes() == []
    events = [e for e in session.history.timeline(ids[1]) if e.get("event") == "engram_updated"]
    assert events[-1]["data"]["action"] == "ratify_agent_change" and session.trust(events[-1]).counts_as_human
    session.undo()
    assert [c.id for c in session.watch.changes()] == [ids[1]]
    plur(store, home, [{"op": "update", "id": ids[1], "fields": {"statement": "Node 24 now"}}])
    session.reload_if_changed()
    [moved] = session.watch.changes()
    with pytest.raises(ChangedSinceError):  # the record moved on since the change was shown: refused
        session.execute(session.watch.command_for(change, session.writes.seen([change.id])[0], ratify=False))
    assert moved.after["statement"] == "Node 24 now"
