"""Every decision acts on what was shown, on the pane on screen, changes something and names a person: driven
through the real window, checked on the files and the history."""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialogButtonBox

from plur_desk.app.settings import DEFAULT_REASONS, Settings, SettingsStore
from plur_desk.ui.app import ask_reviewer

from ui.conftest import answer_modal, engrams_on_disk, human_events, tensions_on_disk
from ui.test_focus import files_of

CTRL = Qt.KeyboardModifier.ControlModifier


def _settle(qtbot, window):
    qtbot.waitUntil(lambda: window.jobs.pending("session") == 0, timeout=10000)


def test_a_reload_queued_between_display_and_key_refuses_the_verdict(qtbot, window, store_copy):
    shown = window.drafts.current()
    gate = threading.Event()
    window.jobs.submit(lambda: gate.wait(20))  # the serial worker is busy: what follows waits in line
    path = store_copy / "engrams.yaml"
    path.write_text(path.read_text().replace(shown.statement, shown.statement + " — but only on staging", 1))
    window.opener.reload_quiet(explicit=True)  # queued: it will load the new text before the verdict is written
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)  # pressed on the text as displayed
    assert window.drafts.current_id() != shown.id  # the queue moved on at once, as after any verdict
    before = files_of(store_copy)
    with qtbot.waitSignal(window.error_shown, timeout=10000) as refused:
        gate.set()
    assert "changed since you looked" in refused.args[0] and shown.id in refused.args[0]
    _settle(qtbot, window)
    assert files_of(store_copy) == before and human_events(store_copy) == []
    assert engrams_on_disk(store_copy)[shown.id]["commitment"] == "draft"
    # once the new text is on screen, the same key decides on it
    window.drafts.select_id(shown.id)
    assert window.drafts.current().statement.endswith("only on staging")
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    (event,) = human_events(store_copy)
    assert event["engram_id"] == shown.id
    assert engrams_on_disk(store_copy)[shown.id]["statement"].endswith("only on staging")


def test_draft_actions_are_off_while_another_pane_is_shown(qtbot, window, store_copy):
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_4, CTRL)
    assert window.tabs.currentWidget() is window.history
    for action_id in ("review.approve", "review.approve_level", "review.reject", "review.edit", "review.skip"):
        assert not window.qactions[action_id].isEnabled(), action_id
    window.qactions["review.approve"].trigger()

    listed: list[str] = []

    def palette(dialog):
        listed.extend(dialog.list.item(i).text() for i in range(dialog.list.count()))
        qtbot.keyClicks(dialog.field, "approve")
        qtbot.keyClick(dialog.field, Qt.Key.Key_Return)

    answer_modal(palette)
    qtbot.keyClick(window.history.table, Qt.Key.Key_K, CTRL)
    _settle(qtbot, window)
    assert listed and not any(t.startswith("Approve") or t.startswith("Reject") for t in listed)
    window.review.approve_selected()  # even called directly, the handler acts only on the pane on screen
    _settle(qtbot, window)
    assert human_events(store_copy) == []
    window.activateWindow()  # the offscreen platform gives the focus back to no one after a dialog
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window.history.table, Qt.Key.Key_1, CTRL)
    assert window.tabs.currentWidget() is window.drafts
    assert window.qactions["review.approve"].isEnabled()


def test_opening_a_folder_that_is_not_a_store_keeps_the_current_one_fully(qtbot, window, store_copy, tmp_path):
    target = window.drafts.current_id()
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    title, path_text = window.windowTitle(), window.status_labels["path"].text()
    (tmp_path / "not-a-store").mkdir()
    with qtbot.waitSignal(window.error_shown, timeout=5000) as told:
        window.open_path(tmp_path / "not-a-store")
    assert "not a PLUR store" in told.args[0] and str(store_copy) in told.args[0]
    assert window.stack.currentIndex() == 1 and window.windowTitle() == title
    assert window.status_labels["path"].text() == path_text
    assert window.qactions["edit.undo"].isEnabled()
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_Z, CTRL)  # the store on screen is the one undone
    assert engrams_on_disk(store_copy)[target]["commitment"] == "draft"


def test_undo_never_reaches_a_store_that_is_no_longer_on_screen(qtbot, window, store_copy, tmp_path):
    import shutil

    target = window.drafts.current_id()
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    other = tmp_path / "other"
    shutil.copytree(store_copy, other)
    first_before = files_of(store_copy)
    window.open_path(other)
    qtbot.waitUntil(lambda: window.session is not None and window.jobs.pending("session") == 0, timeout=20000)
    other_before = files_of(other)
    assert not window.qactions["edit.undo"].isEnabled()
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_Z, CTRL)
    window.review.undo()
    _settle(qtbot, window)
    assert files_of(store_copy) == first_before and files_of(other) == other_before
    assert engrams_on_disk(store_copy)[target]["commitment"] == "decided"


def test_confirming_a_confirmed_tension_is_refused_and_writes_nothing(qtbot, window, store_copy):
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_2, CTRL)
    confirmed = next(r for r in window.tensions.model.rows if r.status == "confirmed")
    window.tensions._select(window.tensions.model.row_of(confirmed.id))
    before = files_of(store_copy)
    with qtbot.waitSignal(window.error_shown, timeout=10000) as refused:
        qtbot.keyClick(window.tensions.table, Qt.Key.Key_C)
    assert "already confirmed" in refused.args[0]
    _settle(qtbot, window)
    assert files_of(store_copy) == before and human_events(store_copy) == []
    assert tensions_on_disk(store_copy)[confirmed.id]["status"] == "confirmed"


def _select_first(qtbot, window, count):
    window.drafts.select_row(0)
    for _ in range(count - 1):
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_Down, Qt.KeyboardModifier.ShiftModifier)
    return window.drafts.selected_rows()


def test_bulk_approve_names_the_count_lists_the_flagged_and_asks_for_them(qtbot, window, store_copy):
    rows = _select_first(qtbot, window, 10)
    flagged = {r.id for r in rows if {"expired", "credential-like string", "instruction-like text"} & set(r.flags)}
    assert flagged, [r.flags for r in rows]
    seen: dict[str, object] = {}

    def look(dialog):
        seen["title"] = dialog.windowTitle()
        seen["listed"] = [dialog.flagged.item(i).text() for i in range(dialog.flagged.count())]
        seen["offered"] = [dialog.combo.itemText(i) for i in range(dialog.combo.count())]
        ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
        seen["ok_before"] = ok.text()  # the clean ones alone, saying so
        dialog.include.setChecked(True)
        seen["ok_after"] = ok.text()
        dialog.combo.setCurrentText("checked against the runbook")
        qtbot.keyClick(dialog.combo.lineEdit(), Qt.Key.Key_Return)

    answer_modal(look)
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    assert "10" in seen["title"]
    assert all(any(i in line for line in seen["listed"]) for i in flagged)
    assert len(seen["listed"]) == len(flagged)
    assert not set(DEFAULT_REASONS) & set(seen["offered"])  # approval notes, not rejection reasons
    left = len(flagged)
    assert seen["ok_before"] == f"Approve {10 - left} (leave {left} flagged)" and seen["ok_after"] == "Approve 10"
    events = human_events(store_copy)
    assert sorted(e["engram_id"] for e in events) == sorted(r.id for r in rows)
    assert window.workspace.settings.recent_notes[0] == "checked against the runbook"


def test_bulk_cancelled_over_flagged_drafts_writes_nothing_and_reject_offers_reasons(qtbot, window, store_copy):
    _select_first(qtbot, window, 10)
    before = files_of(store_copy)
    offered: list[str] = []

    def look(dialog):
        offered.extend(dialog.combo.itemText(i) for i in range(dialog.combo.count()))
        qtbot.keyClick(dialog.combo.lineEdit(), Qt.Key.Key_Escape)

    answer_modal(look)
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_R)
    _settle(qtbot, window)
    assert set(DEFAULT_REASONS) <= set(offered)
    assert files_of(store_copy) == before and human_events(store_copy) == []


def test_reviewer_shown_in_the_status_bar(window):
    assert window.status_labels["reviewer"].text() == "reviewer: Grace Tester"


def test_reviewer_dialog_ok_only_for_a_person(qtbot):
    from plur_desk.ui.common.dialogs import ReviewerDialog

    dialog = ReviewerDialog("")
    qtbot.addWidget(dialog)
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    for name, usable in (("", False), ("   ", False), ("agent:claude", False), ("unidentified", False), ("Ada", True)):
        dialog.name.setText(name)
        assert ok.isEnabled() is usable, name
        assert bool(dialog.problem.text()) is not usable


def test_reviewer_flag_is_for_one_run_and_saving_is_a_choice(qtbot, tmp_path):
    store = SettingsStore(tmp_path / "settings.yaml")
    settings = Settings(reviewer_name="Grace")
    store.save(settings)
    before = (tmp_path / "settings.yaml").read_bytes()
    assert ask_reviewer(store, settings, "Mallory") == "Mallory"
    assert (tmp_path / "settings.yaml").read_bytes() == before and store.load().reviewer_name == "Grace"
    assert ask_reviewer(store, settings, None) == "Grace"

    def answer(dialog):
        assert "agent" in dialog.problem.text() and not dialog.remember.isChecked()
        dialog.name.setText("Mallory Smith")
        dialog.remember.setChecked(True)  # the explicit choice
        qtbot.keyClick(dialog.name, Qt.Key.Key_Return)

    answer_modal(answer)
    assert ask_reviewer(store, settings, "agent:mallory") == "Mallory Smith"
    assert store.load().reviewer_name == "Mallory Smith"


def test_a_settings_file_with_an_agent_name_asks_instead(qtbot, tmp_path):
    path = tmp_path / "settings.yaml"
    path.write_text("reviewer_name: 'agent:claude-code'\n")
    store = SettingsStore(path)

    def cancel(dialog):
        assert dialog.name.text() == "agent:claude-code"
        assert not dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).isEnabled()
        qtbot.keyClick(dialog.name, Qt.Key.Key_Escape)

    answer_modal(cancel)
    assert ask_reviewer(store, store.load(), None) is None


def _start_unsaved_edit(qtbot, window):
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_E)
    assert window.drafts.editing
    qtbot.keyClicks(window.drafts.editor, " plus a change")


def test_quitting_with_an_unsaved_edit_asks(qtbot, window, store_copy):
    _start_unsaved_edit(qtbot, window)
    answer_modal(lambda box: box.button(box.StandardButton.Cancel).click())
    window.close()
    assert window.isVisible() and window.drafts.editing

    def discard(box):
        box.button(box.StandardButton.Discard).click()

    answer_modal(discard)
    window.close()
    assert not window.isVisible()
    assert human_events(store_copy) == []


def test_switching_stores_with_an_unsaved_edit_asks(qtbot, window, store_copy, tmp_path):
    import shutil

    other = tmp_path / "other"
    shutil.copytree(store_copy, other)
    _start_unsaved_edit(qtbot, window)
    answer_modal(lambda box: box.button(box.StandardButton.Cancel).click())
    window.open_path(other)
    assert window.store_path == store_copy and window.drafts.editing
    assert QApplication.activeModalWidget() is None
    _settle(qtbot, window)
    assert human_events(store_copy) == [] and Path(window.store_path) == store_copy
    window.activateWindow()  # the offscreen platform gives the focus back to no one after a dialog
    window.drafts.editor.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.drafts.editor)
    qtbot.keyClick(window.drafts.editor, Qt.Key.Key_Escape)  # cancelled by the person: nothing left to ask about
    assert not window.drafts.editing
