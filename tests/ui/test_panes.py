"""Tensions, Validity and History panes driven by their keys; models checked with qtmodeltester."""

from __future__ import annotations

import csv
import json

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from plur_desk.ui.actions import ACTIONS

from ui.conftest import answer_modal, engrams_on_disk, human_events, tensions_on_disk


def _tension_row(window, status):
    return next(r for r in window.tensions.model.rows if r.status == status)


def _show_tensions(qtbot, window):
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.currentWidget() is window.tensions
    return window.tensions.table


def test_confirm_and_dismiss_by_keys(qtbot, window, store_copy):
    table = _show_tensions(qtbot, window)
    detected = _tension_row(window, "detected")
    window.tensions._select(window.tensions.model.row_of(detected.id))
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(table, Qt.Key.Key_C)
    assert tensions_on_disk(store_copy)[detected.id]["status"] == "confirmed"

    def reason(dialog):
        dialog.combo.setCurrentText("same fact, different wording")
        qtbot.keyClick(dialog.combo.lineEdit(), Qt.Key.Key_Return)

    window.tensions._select(window.tensions.model.row_of(detected.id))
    answer_modal(reason)
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(table, Qt.Key.Key_D)
    assert tensions_on_disk(store_copy)[detected.id]["status"] == "dismissed"
    events = human_events(store_copy)
    assert [e["data"]["action"] for e in events] == ["confirm", "dismiss"]
    assert events[1]["data"]["reason"] == "same fact, different wording"


def test_keep_right_previews_then_enter_commits(qtbot, window, store_copy):
    table = _show_tensions(qtbot, window)
    row = window.tensions.current()
    before = (store_copy / "engrams.yaml").read_bytes()
    qtbot.keyClick(table, Qt.Key.Key_Right)
    assert window.tensions.preview.isVisible()
    assert row.engram_a in window.tensions.preview.text()  # names the engram that will be retired
    qtbot.keyClick(table, Qt.Key.Key_Escape)
    assert not window.tensions.preview.isVisible()
    assert (store_copy / "engrams.yaml").read_bytes() == before
    qtbot.keyClick(table, Qt.Key.Key_2)
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(table, Qt.Key.Key_Return)
    record = tensions_on_disk(store_copy)[row.id]
    assert record["status"] == "resolved" and record["resolved_by"] == row.engram_b
    assert engrams_on_disk(store_copy)[row.engram_a]["status"] == "retired"
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert engrams_on_disk(store_copy)[row.engram_a]["status"] == "active"
    assert tensions_on_disk(store_copy)[row.id]["status"] == row.status


def test_split_in_time_with_t(qtbot, window, store_copy):
    table = _show_tensions(qtbot, window)
    row = window.tensions.current()

    def pick(dialog):
        dialog.date.setDate(dialog.date.date().fromString("2026-10-01", "yyyy-MM-dd"))
        qtbot.keyClick(dialog.date, Qt.Key.Key_Return)

    answer_modal(pick)
    errors = []
    window.error_shown.connect(errors.append)
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(table, Qt.Key.Key_T)
    assert not errors, errors
    engrams = engrams_on_disk(store_copy)
    windows = {engrams[i]["temporal"].get("valid_until"): i for i in (row.engram_a, row.engram_b)}
    assert "2026-09-30" in windows
    assert tensions_on_disk(store_copy)[row.id]["status"] == "dismissed"


def test_validity_as_of_groups_and_editor(qtbot, window, store_copy):
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
    pane = window.validity
    states = {r.id: r.state for r in pane.model.rows}
    assert {"expired", "not_yet_valid", "current"} <= set(states.values()) | {"current"}
    target = pane.current_engram_id()

    def edit(dialog):
        enabled, date, _timed, _time = dialog.fields["valid_until"]
        enabled.setChecked(True)
        date.setDate(date.date().fromString("2031-01-31", "yyyy-MM-dd"))
        qtbot.keyClick(date, Qt.Key.Key_Return)

    answer_modal(edit)
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(pane.table, Qt.Key.Key_W)
    assert engrams_on_disk(store_copy)[target]["temporal"]["valid_until"] == "2031-01-31"
    window.activateWindow()  # the offscreen platform has no window manager to give focus back after a dialog
    pane.table.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is pane.table)
    pane.table.selectRow(next(i for i, r in enumerate(pane.model.rows) if r.state in ("current", "expiring_soon")))
    first = pane.current_engram_id()
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(pane.table, Qt.Key.Key_X)
    assert engrams_on_disk(store_copy)[first]["temporal"]["valid_until"].startswith("2026-12-02T15:00:00")
    # expiring what has already expired records nothing: refused with a message, no byte written
    pane.table.selectRow(next(i for i, r in enumerate(pane.model.rows) if r.state == "expired"))
    before = (store_copy / "engrams.yaml").read_bytes()
    with qtbot.waitSignal(window.error_shown, timeout=10000) as refused:
        qtbot.keyClick(pane.table, Qt.Key.Key_X)
    assert "already expired" in refused.args[0]
    assert (store_copy / "engrams.yaml").read_bytes() == before


def test_validity_editor_refuses_from_after_until(qtbot, window):
    from plur_desk.domain.plur_rules.validity import Window
    from plur_desk.ui.validity.window_dialog import WindowDialog

    dialog = WindowDialog("ENG-x", Window("2027-01-02", "2027-01-01"))
    qtbot.addWidget(dialog)
    dialog._accept()
    assert "after valid_until" in dialog.error.text()


def test_history_filters_and_export(qtbot, window, store_copy, tmp_path):
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_4, Qt.KeyboardModifier.ControlModifier)
    pane = window.history
    total = len(pane.model.events)
    pane.actor_filter.setCurrentText("human")
    humans = list(pane.model.events)
    assert len(humans) == 1 + 3  # ours, and the demo reviewer's reject, approve and confirm
    assert all(e["actor"]["kind"] == "human" for e in humans)
    assert humans[0]["actor"]["asserted_by"] == "Grace Tester"  # newest first
    assert pane.model.data(pane.model.index(0, 1), Qt.ItemDataRole.FontRole).bold()
    assert pane.model.data(pane.model.index(0, 1)) == "human (signed) · Grace Tester"
    pane.actor_filter.setCurrentText("all actors")
    assert len(pane.model.events) == total
    out = tmp_path / "view.csv"
    pane.actor_filter.setCurrentText("agent or unknown kind")
    count = pane.export_to(str(out), "csv")
    rows = list(csv.reader(out.open()))
    assert len(rows) == count + 1 and all(r[3] == "agent" for r in rows[1:])
    jsonl = tmp_path / "view.jsonl"
    pane.export_to(str(jsonl), "jsonl")
    assert all("event" in json.loads(line) for line in jsonl.read_text().splitlines())


def test_timeline_of_an_engram(qtbot, window):
    target = window.drafts.current_id()
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    window.drafts.select_id(target) if target in [r.id for r in window.drafts.model.rows] else None
    window.history.show_engram(target)
    actions = [str(e.get("event")) for e in window.history.model.events]
    assert "engram_created" in actions and "engram_updated" in actions


def test_models_pass_qtmodeltester(qtmodeltester, window):
    window.navigation.show_tensions()
    window.navigation.show_validity()
    window.navigation.show_history()
    for model in (window.drafts.model, window.tensions.model, window.validity.model, window.history.model):
        qtmodeltester.check(model, force_py=True)


def test_action_ids_and_shortcuts_are_unique():
    ids = [a.id for a in ACTIONS]
    assert len(ids) == len(set(ids))
    seen = {}
    for spec in ACTIONS:
        for shortcut in spec.shortcuts:
            from PySide6.QtGui import QKeySequence

            key = (spec.pane or "*", QKeySequence(shortcut).toString())
            assert key not in seen, f"{spec.id} and {seen[key]} share {key}"
            seen[key] = spec.id
    global_keys = {k for (pane, k) in seen if pane == "*"}
    assert not any(k in global_keys for (pane, k) in seen if pane != "*")


def test_every_control_has_an_accessible_name(window):
    from PySide6.QtWidgets import QAbstractButton, QLineEdit, QTableView, QTextBrowser

    for widget_type in (QTableView, QTextBrowser, QLineEdit):
        for widget in window.findChildren(widget_type):
            if widget.isVisibleTo(window) and widget.parent() is not None:
                assert widget.accessibleName(), f"{widget_type.__name__} {widget.objectName()} has no accessible name"
    for button in window.findChildren(QAbstractButton):
        if button.isVisibleTo(window) and button.text():
            assert button.accessibleName() or button.text()


def _export_through_the_dialog(qtbot, window, action_id, path, name_filter):
    from plur_desk.ui.history.history_export import FORMATS

    def choose(dialog):
        from PySide6.QtWidgets import QLineEdit

        dialog.selectNameFilter(FORMATS[name_filter])
        dialog.setDirectory(str(path.parent))
        dialog.findChild(QLineEdit, "fileNameEdit").setText(path.name)  # as typed by the reviewer
        dialog.accept()

    answer_modal(choose)
    window.qactions[action_id].trigger()


def test_export_format_follows_the_chosen_filter_and_the_outcome_is_shown(qtbot, window, tmp_path):
    window.navigation.show_history()
    pane = window.history
    _export_through_the_dialog(qtbot, window, "history.export_csv", tmp_path / "view", "csv")
    rows = list(csv.reader((tmp_path / "view.csv").open()))  # no suffix typed: the chosen format's is added
    assert rows[0][:3] == ["timestamp", "event", "engram_id"] and len(rows) == len(pane.model.events) + 1
    assert f"Exported {len(pane.model.events)} events to {tmp_path / 'view.csv'} (CSV)" in window.banner.text()
    _export_through_the_dialog(qtbot, window, "history.export_jsonl", tmp_path / "out.txt", "csv")
    assert next(csv.reader((tmp_path / "out.txt").open()))[0] == "timestamp"  # CSV chosen, CSV written
    _export_through_the_dialog(qtbot, window, "history.export_csv", tmp_path / "lines.jsonl", "jsonl")
    lines = (tmp_path / "lines.jsonl").read_text().splitlines()
    assert len(lines) == len(pane.model.events) and all("event" in json.loads(line) for line in lines)


def test_export_to_an_unwritable_path_shows_the_error(qtbot, window, tmp_path):
    window.navigation.show_history()
    errors = []
    window.error_shown.connect(errors.append)
    (tmp_path / "a-file").write_text("")
    assert window.history.export_to(str(tmp_path / "a-file" / "view.csv"), "csv") is None
    assert errors and "Could not export the history view" in errors[0]
    assert window.banner.isVisible() and "Could not export" in window.banner.text()


def test_history_filters_apply_as_you_type_and_say_what_they_show(qtbot, window):
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_4, Qt.KeyboardModifier.ControlModifier)
    pane = window.history
    total = len(pane.model.events)
    pane.engram.setFocus()
    qtbot.keyClicks(pane.engram, "ENG-2026-12-02-001")  # no Enter, no leaving the field
    qtbot.waitUntil(lambda: 0 < len(pane.model.events) < total, timeout=3000)
    assert all("ENG-2026-12-02-001" in json.dumps(e) for e in pane.model.events)
    n = len(pane.model.events)
    assert pane.count.text() == (f"{n} event" if n == 1 else f"{n} events")
    qtbot.keyClicks(pane.engram, "-nothing")
    qtbot.waitUntil(lambda: len(pane.model.events) == 0, timeout=3000)
    assert pane.empty.isVisible() and pane.empty.text() == "No events match these filters."
    assert pane.count.text() == "0 events"
    pane.engram.clear()
    qtbot.keyClicks(pane.since, "2026-13-45")
    qtbot.waitUntil(lambda: "2026-13-45" in pane.count.text(), timeout=3000)
    assert "is not a date" in pane.count.text() and pane.since.property("invalid") is True
    assert len(pane.model.events) == total  # the bad bound is ignored, and says so
    pane.since.clear()
    qtbot.keyClicks(pane.reviewer, "Grace")
    qtbot.waitUntil(lambda: len(pane.model.events) < total, timeout=3000)
    assert pane.count.text() == f"{len(pane.model.events)} event{'s' if len(pane.model.events) != 1 else ''}"


def test_history_labels_and_summaries(qtbot, window):
    from plur_desk.ui.history.history_pane import HistoryPane, actor_text, summary_of

    assert HistoryPane._count_text(1, 1, False, []) == "1 event · 1 malformed line"
    assert HistoryPane._count_text(1200, 2, True, []) == "1,200 events · 2 malformed lines · reading older months…"

    window.navigation.show_history()
    pane = window.history
    actors = {pane.model.data(pane.model.index(r, 1)) for r in range(pane.model.rowCount())}
    assert "unknown kind · agent:claude-code" in actors  # PLUR's events carry no kind: not called 'agent'
    # the demo reviewer's decisions: signed with a key its keys.yaml lists, which this user never trusted
    assert "human (UNTRUSTED key) · Ada Lovelace" in actors and not any(a.isupper() for a in actors)
    assert actor_text({"actor": {"kind": "agent", "asserted_by": "bot"}}) == "agent · bot"
    assert actor_text({}) == "no actor"
    summary = summary_of(
        {"data": {"action": "set_validity", "field": "temporal", "from": None, "to": {"valid_until": "2026-12-31"}}}
    )
    assert summary == "set_validity · temporal: none → valid_until 2026-12-31"
    for r in range(pane.model.rowCount()):
        text = pane.model.data(pane.model.index(r, 4))
        assert "None" not in text and "{'" not in text and "['" not in text
    when = pane.model.data(pane.model.index(0, 0))
    bold = pane.model.bold
    from PySide6.QtGui import QFontMetrics

    assert pane.table.columnWidth(0) > QFontMetrics(bold).horizontalAdvance(when) + 8  # bold rows not cut off


def test_timeline_clears_the_other_filters(qtbot, window):
    target = window.drafts.current_id()
    window.navigation.show_history()
    pane = window.history
    pane.actor_filter.setCurrentText("human")
    pane.since.setText("2027-01-01")
    window.navigation.show_drafts()
    window.drafts.select_id(target)
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_T, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.currentWidget() is pane
    assert pane.actor_filter.currentText() == "all actors" and pane.since.text() == ""
    assert "engram_created" in [e.get("event") for e in pane.model.events]  # the agent's creation is shown
    assert all(target in json.dumps(e) for e in pane.model.events)


def _click_section(qtbot, table, column: int) -> None:
    from PySide6.QtCore import QPoint

    header = table.horizontalHeader()
    x = header.sectionViewportPosition(column) + header.sectionSize(column) // 2
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, header.height() // 2))


def test_the_reviewers_sort_of_tensions_survives_a_decision_and_a_reload(qtbot, window, store_copy):
    """Sorted by a column, the list stays so after a confirmation and a reload (it went back to the age order
    while the header still named the column)."""
    table = _show_tensions(qtbot, window)
    pane = window.tensions
    pane.filter.setCurrentText("All")

    def ids() -> list[str]:
        return [r.id for r in pane.model.rows]

    listed = ids()
    for column in range(len(pane.model.columns)):  # a column whose order is not the one listed already
        _click_section(qtbot, table, column)
        if ids() != listed and ids() != listed[::-1]:
            break
    before = ids()
    assert len(before) >= 3 and before not in (listed, listed[::-1])
    header = table.horizontalHeader()
    section = header.sortIndicatorSection()
    detected = _tension_row(window, "detected")
    pane._select(pane.model.row_of(detected.id))
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(table, Qt.Key.Key_C)
    assert tensions_on_disk(store_copy)[detected.id]["status"] == "confirmed"
    column, descending = pane.model.user_sort
    key = pane.model.columns[column].sort
    expected = [r.id for r in sorted(pane.model.rows, key=lambda r: (key(r), r.id), reverse=descending)]
    assert ids() == expected  # in the sort the header shows, not back in the age order
    assert header.sortIndicatorSection() == section == column
    window.opener.reload()
    qtbot.waitUntil(lambda: window.jobs.pending("session") == 0, timeout=10000)
    assert ids() == expected


def test_the_reviewers_sort_of_writers_survives_a_refresh(qtbot, window):
    qtbot.waitUntil(
        lambda: window.scale.view is not None and bool(window.scale.risk) and window.scale.settled,
        timeout=20000,
    )
    qtbot.keyClick(window, Qt.Key.Key_7, Qt.KeyboardModifier.ControlModifier)
    pane = window.writers
    qtbot.waitUntil(lambda: pane.model.rowCount() >= 3)
    _click_section(qtbot, pane.table, 1)  # Drafts: counts, ties broken by the writer's label
    column, descending = pane.model.user_sort
    key, label = pane.model.columns[column].sort, pane.model.row_id
    order = [label(s) for s in pane.model.rows]
    assert order == [label(s) for s in sorted(pane.model.rows, key=lambda s: (key(s), label(s)), reverse=descending)]
    pane.refresh(None)  # as after any decision: the ledger listed again
    assert [label(s) for s in pane.model.rows] == order
    assert pane.table.horizontalHeader().sortIndicatorSection() == 1
