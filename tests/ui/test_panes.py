"""Tensions, Validity and History panes driven by their keys; models checked with qtmodeltester."""

from __future__ import annotations

import csv
import json

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from plur_desk.ui.actions import ACTIONS
from plur_desk.ui.main_window import MainWindow

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
    pane.table.selectRow(0)
    first = pane.current_engram_id()
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(pane.table, Qt.Key.Key_X)
    assert engrams_on_disk(store_copy)[first]["temporal"]["valid_until"].startswith("2026-12-02T15:00:00")


def test_validity_editor_refuses_from_after_until(qtbot, window):
    from plur_desk.domain.validity import Window
    from plur_desk.ui.validity_pane import WindowDialog

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
    assert pane.model.data(pane.model.index(0, 1)) == "human · Grace Tester"
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
    window.show_tensions()
    window.show_validity()
    window.show_history()
    for model in (window.drafts.model, window.tensions.model, window.validity.model, window.history.model):
        qtmodeltester.check(model, force_py=True)


def test_action_ids_and_shortcuts_are_unique_and_handled():
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
    from plur_desk.ui.history_pane import HistoryPane
    from plur_desk.ui.tensions_pane import TensionsPane
    from plur_desk.ui.validity_pane import ValidityPane

    for spec in ACTIONS:
        assert any(hasattr(cls, spec.handler) for cls in (MainWindow, TensionsPane, ValidityPane, HistoryPane)), spec.id


def test_every_control_has_an_accessible_name(window):
    from PySide6.QtWidgets import QAbstractButton, QLineEdit, QTableView, QTextBrowser

    for widget_type in (QTableView, QTextBrowser, QLineEdit):
        for widget in window.findChildren(widget_type):
            if widget.isVisibleTo(window) and widget.parent() is not None:
                assert widget.accessibleName(), f"{widget_type.__name__} {widget.objectName()} has no accessible name"
    for button in window.findChildren(QAbstractButton):
        if button.isVisibleTo(window) and button.text():
            assert button.accessibleName() or button.text()
