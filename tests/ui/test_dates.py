"""Dates mean what they show: typed or pasted ISO dates are taken as they are, impossible ones are refused with a
message, and the Validity pane's 'as of now' follows the clock."""

from __future__ import annotations

from datetime import date

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from plur_desk.ui.validity.date_field import parse_iso_date

from ui.conftest import answer_modal, engrams_on_disk, tensions_on_disk


def test_parse_iso_date():
    assert parse_iso_date("2026-06-01") == (date(2026, 6, 1), "")
    assert parse_iso_date(" 2027-01-31T10:00:00.000Z ") == (date(2027, 1, 31), "")
    assert parse_iso_date("2026-02-30")[1] == "2026-02-30 does not exist."
    assert parse_iso_date("2026-13-45")[1] == "2026-13-45 does not exist."
    assert "YYYY-MM-DD" in parse_iso_date("06/01/2026")[1]
    assert parse_iso_date("2026-6-1")[0] is None


def _type_into(qtbot, field, text):
    """Focus the field as a click would (everything gets selected), then type."""
    field.edit.setFocus()
    qtbot.waitUntil(lambda: field.edit.selectedText() == field.edit.text())
    qtbot.keyClicks(field.edit, text)


def _show_tensions(qtbot, window):
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    return window.tensions.table


def test_split_in_time_takes_the_typed_date(qtbot, window, store_copy):
    table = _show_tensions(qtbot, window)
    row = window.tensions.current()
    seen = []

    def pick(dialog):
        _type_into(qtbot, dialog.date, "2026-06-01")
        seen.append(dialog.iso)
        qtbot.keyClick(dialog.date.edit, Qt.Key.Key_Return)

    answer_modal(pick)
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(table, Qt.Key.Key_T)
    assert seen == ["2026-06-01"]
    engrams = engrams_on_disk(store_copy)
    windows = sorted(
        (engrams[i]["temporal"].get("valid_from") or "", engrams[i]["temporal"].get("valid_until") or "")
        for i in (row.engram_a, row.engram_b)
    )
    assert windows == [("", "2026-05-31"), ("2026-06-01", "")]


def test_split_in_time_takes_a_pasted_date_and_refuses_an_impossible_one(qtbot, window, store_copy):
    table = _show_tensions(qtbot, window)
    before = ((store_copy / "engrams.yaml").read_bytes(), (store_copy / "tensions.yaml").read_bytes())
    seen = []

    def impossible(dialog):
        _type_into(qtbot, dialog.date, "2026-02-30")
        seen.append((dialog.ok.isEnabled(), dialog.preview.text()))
        qtbot.keyClick(dialog.date.edit, Qt.Key.Key_Return)  # refused: the dialog stays open
        seen.append(dialog.isVisible())
        QApplication.clipboard().setText("2027-03-15")
        dialog.date.edit.selectAll()
        qtbot.keyClick(dialog.date.edit, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
        seen.append((dialog.iso, dialog.ok.isEnabled()))
        dialog.reject()

    answer_modal(impossible)
    qtbot.keyClick(table, Qt.Key.Key_T)
    assert seen[0][0] is False and "2026-02-30 does not exist" in seen[0][1]
    assert seen[1] is True
    assert seen[2] == ("2027-03-15", True)
    assert ((store_copy / "engrams.yaml").read_bytes(), (store_copy / "tensions.yaml").read_bytes()) == before
    assert tensions_on_disk(store_copy)


def test_validity_editor_select_all_then_type(qtbot, window, store_copy):
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
    pane = window.validity
    target = pane.current_engram_id()
    refused = []

    def edit(dialog):
        enabled, field, _timed, _time = dialog.fields["valid_until"]
        field.edit.setFocus()
        qtbot.keyClick(field.edit, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        qtbot.keyClicks(field.edit, "2027-02-30")
        qtbot.keyClick(field.edit, Qt.Key.Key_Return)
        refused.append((dialog.isVisible(), dialog.error.text()))
        qtbot.keyClick(field.edit, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        qtbot.keyClicks(field.edit, "2027-01-31")
        assert enabled.isChecked()
        qtbot.keyClick(field.edit, Qt.Key.Key_Return)

    answer_modal(edit)
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(pane.table, Qt.Key.Key_W)
    assert refused == [(True, "✖ valid_until: 2027-02-30 does not exist.")]
    assert engrams_on_disk(store_copy)[target]["temporal"]["valid_until"] == "2027-01-31"


def test_as_of_now_follows_the_clock(qtbot, window):
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
    pane = window.validity
    soon = next(r for r in pane.model.rows if r.state == "expiring_soon")  # valid_until 2026-12-10, now 12-02
    assert pane.follow_now.isChecked()
    window.workspace.clock.advance(9 * 86400)  # 2026-12-11 15:00: a day after it closed
    pane._tick.setInterval(10)  # the real timer, sooner
    qtbot.waitUntil(lambda: next(r for r in pane.model.rows if r.id == soon.id).state == "expired", timeout=5000)
    assert pane.as_of.dateTime().toString("yyyy-MM-dd") == "2026-12-11"
    pane.follow_now.setChecked(False)  # a chosen moment stays put
    assert pane.as_of.isEnabled()
