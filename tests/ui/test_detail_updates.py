"""A detail pane's new text does not change the pane's size: with its scroll bar shown only when needed, each new
text hid the bar and showed it again, so the text was laid out twice and the whole pane repainted (8.1 ms against
4.1 ms an update, widgets.SafeBrowser)."""

from __future__ import annotations

from PySide6.QtCore import QEvent

from support.qt_events import EventCount


def test_moving_through_the_drafts_never_resizes_the_detail_s_view(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    window.resize(900, 420)  # details longer than the pane: each needs its scroll bar
    qtbot.waitUntil(lambda: window.drafts.model.rowCount() >= 4, timeout=20000)
    table, detail = window.drafts.table, window.drafts.detail
    table.setFocus()
    window.drafts.select_row(0)
    qtbot.waitUntil(lambda: window.drafts.displayed_seen() is not None, timeout=5000)
    resizes = EventCount(QEvent.Type.Resize)
    detail.viewport().installEventFilter(resizes)
    overflowed = 0
    for row in range(1, 4):
        shown = detail.toPlainText()
        window.drafts.select_row(row)
        qtbot.waitUntil(lambda shown=shown: detail.toPlainText() != shown, timeout=5000)
        qtbot.wait(50)  # its late parts (contradictions, similar drafts, timeline) come in meanwhile
        overflowed += detail.verticalScrollBar().maximum() > 0
    assert overflowed, "no detail was longer than its pane: the test shows nothing"
    assert resizes.count == 0
