"""Agent changes around the draft gate, made by the real PLUR (@plur-ai/core 0.20.0), found against the watched
baseline: each listed once with its kind, writer and `silent` flag, nothing untouched listed."""

from __future__ import annotations

import json

import pytest

from plur_desk.app.changes.changes_cli import main as changes_main
from plur_desk.app.review.bootstrap import open_session
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
    # PLUR's resolve event names no session: the session that wrote its engrams, said to be inferred
    assert by_id[resolved]["session"] == "sess-setup" and "inferred" in by_id[resolved]["session_from"]
    assert by_id[dismissed]["session"] is None and by_id[dismissed]["session_from"] == ""  # no event: nothing known
    assert by_id[draft]["session_from"] == ""


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
    for ident in ids:  # forget zeroed write_count and set a rationale; the resolve set its loser's rationale
        for name in ("statement", "commitment", "status", "scope", "content_hash", "write_count", "rationale"):
            assert loaded["engrams"][ident].get(name) == old[ident].get(name), (ident, name)
        assert ("rationale" in loaded["engrams"][ident]) == ("rationale" in old[ident]), ident
        assert loaded["engrams"][ident]["updated_at"] >= old[ident]["updated_at"], ident  # a revert is a new write
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


def _listed(session):
    session.reload_if_changed()
    return {c.id: c for c in session.watch.changes()}


def test_ratifying_a_tension_change_is_journaled_signed_undoable_and_refused_once_moved_on(tmp_path, capsys):
    store, home, ids, tensions = _store(tmp_path)
    resolved, _dismissed, confirmed = tensions
    assert changes_main([str(store), "--start", "--reviewer", "Alice Reviewer"]) == 0
    plur(store, home, [{"op": "resolve", "id": resolved, "winner": ids[6]}, {"op": "confirm", "id": confirmed}])
    session = open_session(store, "Alice Reviewer")
    listed = _listed(session)
    assert set(listed) == {resolved, confirmed} and listed[resolved].also == (ids[5],)
    change = listed[resolved]
    session.execute(session.watch.command_for(change, session.writes.seen_tension(resolved), ratify=True))
    assert set(_listed(session)) == {confirmed}  # the loser's retirement stood with it: not listed on its own
    assert not list((store / ".plur-desk" / "journal").glob("*"))  # journaled, and the record finished
    [event] = [e for e in session.history.timeline(ids[5]) if e.get("data", {}).get("action") == "ratify_agent_change"]
    assert event["data"]["tension_id"] == resolved and session.trust(event).counts_as_human
    assert session.undo_history.undo_label()  # on the undo history like any decision
    session.undo()
    again = _listed(session)
    assert set(again) == {resolved, confirmed} and again[resolved].also == (ids[5],)
    session.redo()
    assert set(_listed(session)) == {confirmed}
    capsys.readouterr()
    assert changes_main([str(store), "--json"]) == 1  # read afresh from the files, as another reviewer would
    assert [c["id"] for c in json.loads(capsys.readouterr().out)["changes"]] == [confirmed]

    shown = listed[confirmed]
    seen = session.writes.seen_tension(confirmed)
    plur(store, home, [{"op": "resolve", "id": confirmed, "winner": ids[9]}])  # the agent moves on
    session.reload_if_changed()
    with pytest.raises(ChangedSinceError):
        session.execute(session.watch.command_for(shown, seen, ratify=True))
    [now] = [c for c in session.watch.changes() if c.id == confirmed]
    assert now.kind == "tension_resolved"
    loaded, records = plur(store, home, [{"op": "load"}, {"op": "tensions"}])
    assert loaded["quarantined"] == [] and loaded["validate"]["ok"], loaded["validate"]
    assert {t["id"]: t["status"] for t in records}[resolved] == "resolved"  # ratified: PLUR's record as it was


def test_changes_from_the_watched_table_are_what_a_whole_load_finds(tmp_path, monkeypatch):
    from plur_desk.app.changes.changes_fast import changes_fast, watched_table
    from plur_desk.app.changes.watch import changes_on_disk
    from plur_desk.app.review.bootstrap import open_store
    from plur_desk.infra.paths import cache_dir
    from plur_desk.store.lists.parse_cache import cache_path

    store, home, ids, tensions = _store(tmp_path)
    assert changes_main([str(store), "--start", "--reviewer", "Alice Reviewer"]) == 0
    _agent_changes_everything(store, home, ids, tensions)

    def whole():
        return [c.to_json() for c in changes_on_disk(open_store(store))[1]]

    expected = whole()
    assert len(expected) == 8
    table = watched_table(cache_path(cache_dir(), store.resolve()))
    table.unlink(missing_ok=True)
    assert [c.to_json() for c in changes_fast(store)[1]] == expected  # every block parsed, the table written
    assert table.is_file()
    table.unlink()
    monkeypatch.setattr(
        "plur_desk.app.changes.changes_fast.UNPACK_OVER", 0
    )  # many blocks new to the table: the cache's
    assert [c.to_json() for c in changes_fast(store)[1]] == expected
    monkeypatch.undo()
    assert [c.to_json() for c in changes_fast(store)[1]] == expected  # warm: every value from the table
    plur(store, home, [{"op": "update", "id": ids[4], "fields": {"statement": "Flags go within one sprint"}}])
    expected = whole()
    assert ids[4] in {c["id"] for c in expected}
    assert [c.to_json() for c in changes_fast(store)[1]] == expected  # the rewritten block is new to the table
    text = (store / "engrams.yaml").read_text(encoding="utf-8")  # an entry PLUR would quarantine: the whole load
    (store / "engrams.yaml").write_text(text + "  - id: ENG-2026-01-01-999\n    statement: 5\n", encoding="utf-8")
    assert [c.to_json() for c in changes_fast(store)[1]] == whole()


def test_undoing_a_revert_lists_the_agents_change_again_as_it_was(tmp_path):
    store, home, ids, _tensions = _store(tmp_path)
    assert changes_main([str(store), "--start", "--reviewer", "Alice Reviewer"]) == 0
    plur(store, home, [{"op": "forget", "id": ids[2], "reason": "outdated"}])
    session = open_session(store, "Alice Reviewer")
    [listed] = session.watch.changes()
    session.execute(session.watch.command_for(listed, session.writes.seen([listed.id])[0], ratify=False))
    assert _listed(session) == {}
    session.undo()  # the reviewer takes the revert back: the agent's forget is unreviewed again, not theirs
    again = _listed(session)[ids[2]]
    assert (again.kind, again.silent, again.writer, again.events) == (
        listed.kind,
        listed.silent,
        listed.writer,
        listed.events,
    )
    session.redo()
    assert _listed(session) == {}
    assert plur(store, home, [{"op": "getById", "id": ids[2]}])[0]["status"] == "active"


def test_undoing_a_ratify_lists_the_agents_change_again_with_its_events(tmp_path):
    store, home, ids, tensions = _store(tmp_path)
    dismissed = tensions[1]
    assert changes_main([str(store), "--start", "--reviewer", "Alice Reviewer"]) == 0
    plur(store, home, [{"op": "forget", "id": ids[2], "reason": "outdated"}, {"op": "dismiss", "id": dismissed}])
    session = open_session(store, "Alice Reviewer")
    listed = _listed(session)
    assert set(listed) == {ids[2], dismissed} and listed[ids[2]].events
    for ident, seen in (
        (ids[2], session.writes.seen([ids[2]])[0]),
        (dismissed, session.writes.seen_tension(dismissed)),
    ):
        session.execute(session.watch.command_for(listed[ident], seen, ratify=True))
    assert _listed(session) == {}
    session.undo()
    session.undo()  # the reviewer takes both back: the agent's changes are listed as before, events and all
    again = _listed(session)
    for ident in (ids[2], dismissed):
        shown = (again[ident].kind, again[ident].silent, again[ident].writer, again[ident].events)
        assert shown == (listed[ident].kind, listed[ident].silent, listed[ident].writer, listed[ident].events)
    assert changes_main([str(store), "--json"]) == 1  # and as read afresh from the files
    session.redo()
    session.redo()
    assert _listed(session) == {}


def test_ratifying_a_tension_leaves_its_engrams_own_agent_change_listed(tmp_path):
    store, home, ids, tensions = _store(tmp_path)
    dismissed = tensions[1]
    assert changes_main([str(store), "--start", "--reviewer", "Alice Reviewer"]) == 0
    plur(
        store,
        home,
        [{"op": "dismiss", "id": dismissed}, {"op": "setPinned", "id": ids[7], "pinned": True}],  # ids[7]: its side
    )
    session = open_session(store, "Alice Reviewer")
    listed = _listed(session)
    assert set(listed) == {dismissed, ids[7]}
    session.execute(session.watch.command_for(listed[dismissed], session.writes.seen_tension(dismissed), ratify=True))
    after = _listed(session)  # the ratification's event rides on ids[7]: it decides nothing about its pin
    assert set(after) == {ids[7]} and after[ids[7]].kind == "pinned"


def test_a_group_is_one_action_and_one_undo_and_a_moved_change_is_named(tmp_path):
    from plur_desk.app.changes.change_decisions import decide_group

    store, home, ids, _tensions = _store(tmp_path)
    assert changes_main([str(store), "--start", "--reviewer", "Alice Reviewer"]) == 0
    plur(store, home, [{"op": "setPinned", "id": i, "pinned": True} for i in ids[1:5]])
    session = open_session(store, "Alice Reviewer")
    group = session.watch.changes()
    seen = {("engram", c.id): session.writes.seen([c.id])[0] for c in group}
    assert len(group) == 4
    plur(store, home, [{"op": "update", "id": ids[4], "fields": {"statement": "Flags go within one sprint"}}])
    done = decide_group(session, group, seen, ratify=False)  # ids[4] moved on disk: the one action is refused,
    assert "3 of 4" in done.message and ids[4] in done.warnings[0]  # and each goes on its own
    session.reload_if_changed()
    assert set(_listed(session)) == {ids[4]}
    loaded = plur(store, home, [{"op": "load"}])[0]
    assert [bool(loaded["engrams"][i].get("pinned")) for i in ids[1:5]] == [False, False, False, True]

    session.undo()
    session.undo()
    session.undo()
    listed = _listed(session)
    [change] = [c for c in listed.values() if c.id == ids[1]]
    rest = [c for c in listed.values() if c.id in ids[1:4]]
    seen = {("engram", c.id): session.writes.seen([c.id])[0] for c in rest}
    assert len(rest) == 3 and change.kind == "pinned"
    done = decide_group(session, rest, seen, ratify=True)
    assert "ratified 3 of 3" in done.message and session.undo_history.undo_label().endswith("ratify 3 agent changes")
    assert set(_listed(session)) == {ids[4]}
    session.undo()  # one undo takes the whole group's ratification back
    assert set(_listed(session)) == {ids[4], *ids[1:4]}
