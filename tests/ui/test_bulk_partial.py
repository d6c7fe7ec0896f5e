"""A bulk verdict decides the clean drafts and leaves the flagged ones in the queue, saying why; a button that is
off says why."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox

from plur_desk.ui.common.dialogs import BulkDialog

from ui.conftest import answer_modal, engrams_on_disk, human_events

FLAGS = {"expired", "not yet valid", "credential-like string", "instruction-like text", "rejected before"}


def test_enter_approves_the_clean_drafts_and_leaves_the_flagged_ones(qtbot, window, store_copy, monkeypatch):
    jobs, decisions = window.workspace.jobs, []
    submit = jobs.submit
    monkeypatch.setattr(jobs, "submit", lambda *a, **k: (k.get("decision") and decisions.append(k), submit(*a, **k))[1])
    window.drafts.table.setFocus()
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)  # select all
    rows = window.drafts.selected_rows()
    flagged = {r.id for r in rows if FLAGS & set(r.flags)}
    clean = {r.id for r in rows} - flagged
    assert flagged and clean
    seen: dict[str, object] = {}

    def look(dialog):
        ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
        seen["text"], seen["enabled"] = ok.text(), ok.isEnabled()
        qtbot.keyClick(dialog.combo.lineEdit(), Qt.Key.Key_Return)

    answer_modal(look, kind=BulkDialog)
    with qtbot.waitSignal(window.changes_applied, timeout=20000):
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    qtbot.waitUntil(lambda: window.jobs.pending("session") == 0, timeout=10000)
    assert seen == {"text": f"Approve {len(clean)} (leave {len(flagged)} flagged)", "enabled": True}
    assert sorted(e["engram_id"] for e in human_events(store_copy)) == sorted(clean)
    on_disk = engrams_on_disk(store_copy)
    assert all(on_disk[i]["commitment"] == "draft" for i in flagged)
    assert {r.id for r in window.drafts.model.rows} == flagged  # still waiting
    assert [k["many"] for k in decisions] == [True]  # its write started after the window's burst (jobs.submit)
    qtbot.waitUntil(lambda: "left in the queue" in window.statusBar().currentMessage(), timeout=5000)
    assert f"{len(flagged)} flagged drafts left in the queue" in window.statusBar().currentMessage()


def test_a_button_that_is_off_says_why(qtbot):
    flagged = [("ENG-1", "expired", "a"), ("ENG-2", "URL", "b")]
    dialog = BulkDialog("approve", 2, flagged, [])
    qtbot.addWidget(dialog)
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    assert not ok.isEnabled() and "All 2 drafts are flagged" in ok.toolTip()
    assert dialog.why_off.text() == ok.toolTip() and not dialog.why_off.isHidden()
    dialog.include.setChecked(True)
    assert ok.isEnabled() and ok.text() == "Approve 2" and ok.toolTip() == "" and dialog.why_off.isHidden()

    reject = BulkDialog("reject", 3, [], [])
    qtbot.addWidget(reject)
    ok = reject.buttons.button(QDialogButtonBox.StandardButton.Ok)
    assert not ok.isEnabled() and "Give a reason first" in ok.toolTip()
    reject.combo.setCurrentText("wrong repo")
    assert ok.isEnabled() and ok.toolTip() == ""


def test_the_windows_grey_buttons_and_actions_say_why(qtbot, window):
    from PySide6.QtWidgets import QPushButton

    approve = window.drafts.findChild(QPushButton, "primary")
    undo = window.qactions["edit.undo"]
    assert not undo.isEnabled() and "Not available now: nothing to undo yet." in undo.toolTip()
    assert approve.isEnabled() and "Not available" not in approve.toolTip()
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_E)
    assert window.drafts.editing
    assert not approve.isEnabled() and "finish the edit first (Ctrl+Return saves, Esc cancels)" in approve.toolTip()
    qtbot.keyClick(window.drafts.editor, Qt.Key.Key_Escape)
    assert approve.isEnabled() and "Not available" not in approve.toolTip()
    window.navigation.show_history()
    reject = window.qactions["review.reject"]
    assert not reject.isEnabled() and "it acts in the Drafts pane, which is not shown" in reject.toolTip()
