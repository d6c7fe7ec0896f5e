"""Search keys, empty-search wording, tension buttons, dialog sizes and icons, the F1 sheet, banners per pane."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QApplication, QDialogButtonBox

from plur_desk.ui.common.dialogs import LevelDialog, ReasonDialog, ShortcutSheet


def _focus(qtbot, widget):
    qtbot.waitUntil(lambda: QApplication.focusWidget() is widget, timeout=3000)


def test_enter_down_and_esc_move_between_search_and_results(qtbot, window):
    qtbot.waitUntil(lambda: window.finder.is_ready, timeout=20000)
    table = window.drafts.table
    qtbot.keyClick(table, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    _focus(qtbot, window.search)
    qtbot.keyClicks(window.search, "scope:project:web")
    qtbot.keyClick(window.search, Qt.Key.Key_Return)  # applies at once, no waiting for the debounce
    _focus(qtbot, table)
    qtbot.waitUntil(  # the answer is read off the window's thread; the list shows it when it comes
        lambda: window.drafts.model.rows and all(r.scope == "project:web" for r in window.drafts.model.rows),
        timeout=5000,
    )
    qtbot.keyClick(table, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    _focus(qtbot, window.search)
    qtbot.keyClick(window.search, Qt.Key.Key_Down)
    _focus(qtbot, table)
    qtbot.keyClick(table, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    _focus(qtbot, window.search)
    qtbot.keyClick(window.search, Qt.Key.Key_Escape)
    _focus(qtbot, table)


def test_a_search_matching_nothing_says_so(qtbot, window):
    window.navigation.focus_search()
    qtbot.keyClicks(window.search, "zzzqqq-no-such-words")
    qtbot.keyClick(window.search, Qt.Key.Key_Return)
    # at once when the search index is still being built (words matched in the rows); once it is ready, when its
    # answer arrives (the first answer is on its way: the list stays whole until it comes)
    qtbot.waitUntil(lambda: window.drafts.model.rowCount() == 0, timeout=5000)
    assert window.drafts.empty.isVisible()
    assert "matched none of the drafts" in window.drafts.empty.text()
    assert "No drafts are waiting" not in window.drafts.empty.text()


def test_tension_buttons_are_disabled_with_no_tension_shown(qtbot, window):
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    assert window.qactions["tension.confirm"].isEnabled()
    window.navigation.focus_search()
    qtbot.keyClicks(window.search, "zzzqqq-no-such-words")
    qtbot.keyClick(window.search, Qt.Key.Key_Return)
    assert window.tensions.model.rowCount() == 0
    for action_id in ("tension.confirm", "tension.dismiss", "tension.keep_left", "tension.keep_right", "tension.split"):
        assert not window.qactions[action_id].isEnabled(), action_id
    assert "No tensions to show" in window.tensions.detail.toPlainText()


def test_approve_as_shows_every_level_description_whole(qtbot):
    dialog = LevelDialog(3, "decided")
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    viewport = dialog.list.viewport()
    metrics = QFontMetrics(dialog.list.font())
    for i in range(dialog.list.count()):
        rect = dialog.list.visualItemRect(dialog.list.item(i))
        assert metrics.horizontalAdvance(dialog.list.item(i).text()) <= viewport.width()
        assert viewport.rect().contains(rect), dialog.list.item(i).text()


def test_reject_and_dismiss_buttons_do_not_look_like_ok(qtbot):
    for ok_text, expected in (("Reject", "reject"), ("Dismiss", "reject"), ("Approve", "approve")):
        dialog = ReasonDialog("t", "p", [], ok_text=ok_text)
        qtbot.addWidget(dialog)
        button = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
        assert button.property("iconName") == expected and not button.icon().isNull()


def test_engram_id_filter_fits_an_id(window):
    field = window.history.engram
    assert field.minimumWidth() >= QFontMetrics(field.font()).horizontalAdvance("ENG-2026-12-02-001") + 16


def test_shortcut_sheet_lists_the_contextual_keys(qtbot):
    sheet = ShortcutSheet()
    qtbot.addWidget(sheet)
    rows = [tuple(sheet.table.item(r, c).text() for c in range(3)) for r in range(sheet.table.rowCount())]
    keys = {r[0] for r in rows}
    assert {"Ctrl+Return", "Ctrl+A", "Enter", "Esc", "Enter or Down"} <= keys
    assert any(r[0] == "Enter" and "preview" in r[2] for r in rows)
    assert any(r[0] == "Esc" and "preview" in r[2] for r in rows)


def test_a_refusal_banner_is_cleared_when_changing_pane(qtbot, window):
    window.messages.error("Refused: the engram changed since you looked")
    assert window.banner.isVisible()
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    assert not window.banner.isVisible()
    window.sticky_note = "Read-only store"
    window.messages.error("Refused again")
    window.navigation.show_history()
    assert window.banner.isVisible() and window.banner.text() == "Read-only store"


def test_flags_column_shows_no_sort_arrow_while_ordered_by_age(window):
    from plur_desk.ui.common.models import DraftColumn

    assert window.drafts.table.horizontalHeader().sortIndicatorSection() == DraftColumn.AGE


def test_validity_timeline_has_a_date_axis_and_whole_labels(qtbot, window):
    from datetime import UTC, datetime

    from plur_desk.ui.validity.timeline import axis_ticks

    ticks = axis_ticks(datetime(2026, 1, 15, tzinfo=UTC), datetime(2027, 3, 1, tzinfo=UTC), 900)
    assert ticks[0][1] == "2026-04"  # quarterly at this width
    assert all(t[0].day == 1 for t in ticks) and len(ticks) <= 10
    decade = axis_ticks(datetime(2020, 1, 1, tzinfo=UTC), datetime(2030, 1, 1, tzinfo=UTC), 400)
    assert decade[0][1] == "2020"
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
    timeline = window.validity.timeline
    qtbot.waitUntil(lambda: bool(timeline.bars), timeout=3000)
    statement = timeline.bars[0][0]
    assert len(statement) > 28  # the old labels were cut at 28 characters
    window.resize(1480, 900)  # wide enough to show it whole
    qtbot.waitUntil(lambda: timeline.width() > 1300, timeout=3000)
    assert timeline.label_text(statement) == statement
    window.resize(760, 600)  # too narrow: elided, never cut mid-glyph without a mark
    qtbot.waitUntil(lambda: timeline.width() < 800, timeout=3000)
    assert timeline.label_text(statement).endswith("…")
    assert not timeline.grab().isNull()


def test_validity_timeline_shows_the_selected_engram_for_every_row(qtbot, window):
    window.navigation.show_validity()
    pane = window.validity
    for row in range(pane.model.rowCount()):
        pane.table.selectRow(row)
        bars = pane.timeline.bars
        assert [b for b in bars if b[3]], f"row {row}: the selected engram has no bar"
        assert [b[0] for b in bars if b[3]] == [pane.model.rows[row].statement]
