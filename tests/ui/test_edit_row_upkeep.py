"""Issue 40: "once, after an edit, the queue row kept the old text (with the password and its flag) for over 4 s
while the detail showed the new text". Not reproduced (age order, risk order, a header sort, a search filter, an
index rebuild, a reload, an agent's write, the scale view computing, the secret flag filtered on: each tried alone);
this is the case with all of them at once, kept as a guard: the row shows what the detail shows, and stays so."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt

from plur_desk.ui.common.models import DraftColumn

SECRET_DRAFT = "ENG-2026-12-02-016"  # the demo's "… staging with password: Spring2026rocks"
NEW = "Smoke tests log in to staging with the password from the team vault"
CTRL = Qt.KeyboardModifier.ControlModifier


def _row(window) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    model = window.drafts.model
    row = model.row_of(SECRET_DRAFT)
    return model.index(row, DraftColumn.STATEMENT).data(), model.index(row, DraftColumn.FLAGS).data()


def test_an_edited_row_shows_the_new_text_with_everything_moving_at_once(qtbot, window):
    qtbot.waitUntil(lambda: window.scale.view is not None and window.jobs.pending("session") == 0, timeout=20000)
    window.qactions["review.risk_order"].trigger()
    window.search.setText("staging")
    window.apply_search()
    qtbot.waitUntil(lambda: window.drafts.model.row_of(SECRET_DRAFT) >= 0 and len(window.drafts.model.rows) < 10)
    assert "secret" in _row(window)[1]
    assert window.drafts.select_id(SECRET_DRAFT)
    qtbot.waitUntil(lambda: window.drafts.displayed_seen() is not None, timeout=10000)
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_E)
    window.drafts.editor.setPlainText(NEW)
    engrams = window.store_path / "engrams.yaml"  # an agent writes meanwhile: the write reads it in
    engrams.write_text(engrams.read_text("utf-8").replace("every Thursday afternoon", "every Monday"), "utf-8")
    window.finder.after_change({SECRET_DRAFT}, False)  # the index rebuilt in the background
    window.scale.store_changed()  # and the ledger computed again
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.editor, Qt.Key.Key_Return, CTRL)
    window.opener.reload_quiet()
    qtbot.waitUntil(lambda: window.jobs.pending("session") == 0 and window.scale.settled, timeout=20000)
    end = time.monotonic() + 1.5
    while time.monotonic() < end:  # and nothing that arrives after puts the old row back
        text, flags = _row(window)
        assert text == NEW and "secret" not in flags, (text, flags)
        assert NEW in window.drafts.detail.toPlainText()
        qtbot.wait(50)
