"""The Changes pane on the demo store, driven by keys: start watching, an agent's silent rewrite listed (its text as
data, a word diff), counted in the status bar, and reverted with R on the list."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from plur_desk.store import baseline
from plur_desk.store.lists.yaml_dump import dump_engrams_document
from plur_desk.store.plur_store import PlurStore

from ui.conftest import answer_modal


def _agent_rewrites(root, engram_id, statement):
    store = PlurStore(root)
    store.load()
    engrams = [dict(e.value) for e in store.engrams.entries]
    for engram in engrams:
        if engram["id"] == engram_id:
            engram["statement"] = statement
    (root / "engrams.yaml").write_text(dump_engrams_document({"engrams": engrams}))


def _statement(root, engram_id):
    store = PlurStore(root)
    store.load()
    return next(e.value["statement"] for e in store.engrams.entries if e.key == engram_id)


def test_an_agent_rewrite_is_listed_counted_and_reverted_by_key(qtbot, window, store_copy):
    win = window
    win.qactions["view.changes"].trigger()
    qtbot.waitUntil(lambda: win.navigation.current_name() == "changes")
    qtbot.waitUntil(lambda: "not watched yet" in win.changes.note.text())
    assert not baseline.path_of(store_copy).exists()  # opening writes nothing
    win.changes.table.setFocus()
    qtbot.keyClick(win.changes.table, Qt.Key.Key_W)
    qtbot.waitUntil(lambda: "Watching since" in win.changes.note.text(), timeout=20000)
    assert "Watching from here" in win.statusBar().currentMessage()
    written = baseline.path_of(store_copy).read_bytes()
    assert win.status_labels["changes"].text() == ""
    qtbot.keyClick(win.changes.table, Qt.Key.Key_W)  # again, on a watched store: nothing written
    qtbot.waitUntil(lambda: win.jobs.pending("session") == 0)
    assert baseline.path_of(store_copy).read_bytes() == written

    target = next(e for e in win.session.all_engrams() if e["status"] == "active" and e.get("commitment") != "draft")
    before = target["statement"]
    _agent_rewrites(store_copy, target["id"], before + " <b>unless</b> an agent says otherwise")
    win.qactions["file.reload"].trigger()
    qtbot.waitUntil(lambda: win.status_labels["changes"].text() == "1 agent changes", timeout=20000)
    change = win.changes.selected_change()
    assert (change.id, change.kind, change.silent) == (target["id"], "rewritten", True)
    detail = win.changes.detail.toPlainText()
    assert "<b>unless</b>" in detail and "silent" in detail  # the agent's markup shown as text
    assert "<u" in win.changes.detail.toHtml() or "underline" in win.changes.detail.toHtml()

    win.changes.table.setFocus()
    qtbot.keyClick(win.changes.table, Qt.Key.Key_R)
    qtbot.waitUntil(
        lambda: win.status_labels["changes"].text() == "" and win.jobs.pending("session") == 0, timeout=20000
    )
    assert _statement(store_copy, target["id"]) == before
    assert win.changes.selected_change() is None


def test_a_group_is_reverted_at_once_after_one_question_and_a_moved_one_is_named(qtbot, window, store_copy):
    win = window
    win.qactions["view.changes"].trigger()
    win.changes.table.setFocus()
    qtbot.keyClick(win.changes.table, Qt.Key.Key_W)
    qtbot.waitUntil(lambda: "Watching since" in win.changes.note.text(), timeout=20000)
    decided = [e for e in win.session.all_engrams() if e["status"] == "active" and e.get("commitment") != "draft"]
    by_writer: dict[object, list[dict]] = {}
    for engram in decided:  # the same writer and no session: one group
        if not any(isinstance(s, dict) and s.get("session_id") for s in engram.get("sources") or []):
            by_writer.setdefault(str(engram.get("attribution")), []).append(engram)
    trio = next(group for group in by_writer.values() if len(group) >= 3)[:3]
    for engram in trio:
        _agent_rewrites(store_copy, engram["id"], engram["statement"] + " (rewritten)")
    win.qactions["file.reload"].trigger()
    qtbot.waitUntil(lambda: win.status_labels["changes"].text() == "3 agent changes", timeout=20000)
    _agent_rewrites(store_copy, trio[2]["id"], "moved on again")  # after it was listed: refused, and named
    group = win.changes.table.topLevelItem(0)
    win.changes.table.setCurrentItem(group)
    assert sorted(c.id for c in win.changes.selected_group()) == sorted(e["id"] for e in trio)
    answer_modal(lambda box: box.button(QMessageBox.StandardButton.Yes).click())
    win.changes.table.setFocus()
    qtbot.keyClick(win.changes.table, Qt.Key.Key_R)
    qtbot.waitUntil(lambda: _statement(store_copy, trio[0]["id"]) == trio[0]["statement"], timeout=20000)
    qtbot.waitUntil(
        lambda: win.jobs.pending("session") == 0 and win.status_labels["changes"].text() == "1 agent changes"
    )
    assert _statement(store_copy, trio[1]["id"]) == trio[1]["statement"]
    assert _statement(store_copy, trio[2]["id"]) == "moved on again"
    assert trio[2]["id"] in win.banner.text()


def test_a_session_found_from_the_engrams_is_said_to_be_inferred(qtbot):
    from plur_desk.domain.agents.agent_changes import INFERRED, AgentChange
    from plur_desk.ui.changes.changes_pane import ChangesPane

    pane = ChangesPane(lambda: None)
    qtbot.addWidget(pane)
    pane.show()
    named = AgentChange("ENG-1", "promoted", "engram", {}, {}, (), "agent:codex", "sess-a", (), False)
    inferred = AgentChange(
        "T-1", "tension_resolved", "tension", {}, {}, (), "agent:codex", "sess-a", (), False, session_from=INFERRED
    )
    pane.show_changes([named, inferred], "")
    group = pane.table.topLevelItem(0)
    assert pane.table.topLevelItemCount() == 1 and group.childCount() == 2  # both under the agent's session
    assert group.child(1).text(1) == "T-1 · session inferred" and group.child(0).text(1) == "ENG-1"
    assert "inferred from its engrams' sources" in group.toolTip(0)
    pane.table.setCurrentItem(group.child(1))
    assert "Session inferred from its engrams' sources" in pane.detail.toPlainText()


def test_changes_listed_while_the_pane_is_hidden_are_built_into_the_tree_when_it_is_shown(qtbot):
    from plur_desk.domain.agents.agent_changes import AgentChange
    from plur_desk.ui.changes.changes_pane import ChangesPane

    pane = ChangesPane(lambda: None)
    qtbot.addWidget(pane)
    changes = [
        AgentChange(f"ENG-{n}", "pinned", "engram", {}, {}, (), "agent:codex", f"sess-{n % 3}", (), True)
        for n in range(9)
    ]
    pane.show_changes(changes, "9 agent changes")
    assert pane.table.topLevelItemCount() == 0 and pane.selected_change() is None  # hidden: nothing built yet
    pane.show()
    qtbot.waitExposed(pane)
    groups = [pane.table.topLevelItem(i) for i in range(pane.table.topLevelItemCount())]
    assert [g.text(0) for g in groups] == [f"session sess-{n} · agent:codex (3)" for n in range(3)]
    assert all(g.isExpanded() and g.isFirstColumnSpanned() for g in groups)
    assert pane.selected_change() is changes[0]


def _shown_pane(qtbot, count, sessions):
    """A Changes pane on screen listing `count` pins by agent:codex over `sessions` sessions."""
    from plur_desk.domain.agents.agent_changes import AgentChange
    from plur_desk.ui.changes.changes_pane import ChangesPane

    pane = ChangesPane(lambda: None)
    qtbot.addWidget(pane)
    pane.show()
    qtbot.waitExposed(pane)
    changes = [
        AgentChange(f"ENG-{n}", "pinned", "engram", {}, {}, (), "agent:codex", f"sess-{n % sessions}", (), True)
        for n in range(count)
    ]
    pane.show_changes(changes, "")
    return pane, changes


def test_a_change_leaving_the_list_takes_only_its_row_and_the_selection_moves_to_the_next(qtbot):
    from plur_desk.domain.agents.agent_changes import AgentChange

    pane, changes = _shown_pane(qtbot, 9, 3)
    first = pane.table.topLevelItem(0)
    rows = {first.child(i).text(1): first.child(i) for i in range(first.childCount())}
    pane.table.setCurrentItem(rows["ENG-3"])
    ratified = [c for c in changes if c.id != "ENG-3"]
    pane.show_changes(ratified, "")  # the list as detection gives it after one ratify
    assert [first.child(i) for i in range(first.childCount())] == [rows["ENG-0"], rows["ENG-6"]]  # kept, not made anew
    assert first.text(0) == "session sess-0 · agent:codex (2)"
    assert pane.selected_change() is changes[6]  # the row after the decided one, as in Drafts
    assert "ENG-6" in pane.detail.toPlainText()
    moved = AgentChange("ENG-0", "retired", "engram", {}, {}, (), "agent:codex", "sess-0", (), True)
    gone = [c for c in ratified if c.session != "sess-1"]
    pane.show_changes(
        [moved, *gone[1:], AgentChange("ENG-9", "pinned", "engram", {}, {}, (), "agent:x", "", (), True)], ""
    )
    groups = [pane.table.topLevelItem(i).text(0) for i in range(pane.table.topLevelItemCount())]
    assert groups == [
        "session sess-0 · agent:codex (2)",
        "session sess-2 · agent:codex (3)",
        "session (no session) · agent:x (1)",
    ]
    assert first.child(0) is rows["ENG-0"] and first.child(0).text(0) == "retired"  # the agent moved on: shown
    pane.table.setCurrentItem(first)
    assert [c.id for c in pane.selected_group()] == ["ENG-0", "ENG-6"]


def test_a_long_list_is_built_a_few_whole_groups_a_turn(qtbot):
    from plur_desk.ui.changes.changes_pane import FILL_ROWS

    pane, changes = _shown_pane(qtbot, 250, 50)

    def rows():
        groups = [pane.table.topLevelItem(i) for i in range(pane.table.topLevelItemCount())]
        assert all(g.childCount() == 5 and g.text(0).endswith("(5)") for g in groups)  # each group whole
        return sum(g.childCount() for g in groups)

    assert 0 < rows() <= FILL_ROWS  # the rest after the window had a turn
    assert pane.selected_change() is changes[0]
    qtbot.waitUntil(lambda: rows() == 250)
    assert pane.table.topLevelItem(49).text(0) == "session sess-49 · agent:codex (5)"
    assert pane.selected_change() is changes[0]
    pane.show_changes(changes[1:], "")  # a decision once it is built: taken out in place
    assert pane.table.topLevelItem(0).text(0).endswith("(4)") and pane.selected_change() is changes[50]


def test_one_decision_runs_detection_once(qtbot, window, store_copy, monkeypatch):
    from plur_desk.ui.changes import changes_controller

    win = window
    win.qactions["view.changes"].trigger()
    qtbot.waitUntil(lambda: "not watched yet" in win.changes.note.text())
    win.changes.table.setFocus()
    qtbot.keyClick(win.changes.table, Qt.Key.Key_W)
    qtbot.waitUntil(lambda: "Watching since" in win.changes.note.text(), timeout=20000)
    decided = [e for e in win.session.all_engrams() if e["status"] == "active" and e.get("commitment") != "draft"]
    for target in decided[:2]:
        _agent_rewrites(store_copy, target["id"], target["statement"] + " (rewritten)")
    win.qactions["file.reload"].trigger()
    qtbot.waitUntil(lambda: win.status_labels["changes"].text() == "2 agent changes", timeout=20000)
    qtbot.waitUntil(lambda: win.jobs.pending("session") == 0)
    runs = []
    real = changes_controller._find
    monkeypatch.setattr(changes_controller, "_find", lambda session: runs.append(1) or real(session))
    win.changes.table.setFocus()
    qtbot.keyClick(win.changes.table, Qt.Key.Key_A)  # the pane on screen refreshes, and the count follows
    qtbot.waitUntil(
        lambda: win.status_labels["changes"].text() == "1 agent changes" and win.jobs.pending("session") == 0,
        timeout=20000,
    )
    assert len(runs) == 1
