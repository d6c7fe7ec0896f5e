"""Feedback in words: what a decision did names the statement (with a way back), previews and dialogs show
statements, and History says what an undo took back."""

from __future__ import annotations

from PySide6.QtCore import Qt

from ui.conftest import engrams_on_disk

CTRL = Qt.KeyboardModifier.ControlModifier


def test_status_bar_names_the_statement_and_offers_undo(qtbot, window, store_copy):
    row = window.drafts.current()
    assert not window.messages.undo_button.isVisible()  # nothing to undo yet
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    said = window.statusBar().currentMessage()
    assert said.startswith(f"Approved: “{row.statement[:40]}") and "Ctrl+Z undoes" in said
    assert row.id not in said  # words, not the id
    qtbot.waitUntil(window.messages.undo_button.isVisible, timeout=5000)
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        window.messages.undo_button.click()
    assert engrams_on_disk(store_copy)[row.id]["commitment"] == "draft"
    assert window.statusBar().currentMessage().startswith(f"Undone: approve of “{row.statement[:40]}")

    # History names what the undo took back
    window.navigation.show_history()
    model = window.history.model
    qtbot.waitUntil(lambda: model.rowCount() > 0, timeout=5000)
    summaries = [model.data(model.index(r, 4)) for r in range(model.rowCount())]
    undo = next(s for s in summaries if s.startswith("undo"))
    assert undo.startswith(f"undo of approve {row.id} as decided") and "commitment: decided → draft" in undo


def test_keep_right_preview_shows_both_statements(qtbot, window):
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_2, CTRL)
    table = window.tensions.table
    row = window.tensions.current()
    qtbot.keyClick(table, Qt.Key.Key_Right)
    text = window.tensions.preview.text()
    kept, retired = text.index(row.statement_b[:30]), text.index(row.statement_a[:30])
    assert text.index("Keep") < kept < text.index("retire") < retired
    qtbot.keyClick(table, Qt.Key.Key_Escape)


def test_conflicts_view_shows_both_statements_first(qtbot, window):
    from plur_desk.ui.tensions.conflicts_pane import Column

    qtbot.waitUntil(
        lambda: window.conflicts.service is not None and window.jobs.pending("conflicts") == 0, timeout=20000
    )
    window.qactions["view.conflicts"].trigger()
    dialog = window.conflicts.pane
    qtbot.waitUntil(lambda: bool(dialog.model.rows), timeout=30000)
    c = dialog.model.rows[0]
    assert dialog.model.index(0, Column.A).data().startswith(f"“{c.statement_a}”")
    assert dialog.model.index(0, Column.B).data().startswith(f"“{c.statement_b}”")
    assert "contradictions;" not in dialog.status.text() or len(dialog.model.rows) != 1  # "1 likely contradiction"
    dialog.table.clearSelection()
    assert not dialog.record.isEnabled() and "Select a pair" in dialog.record.toolTip()
