"""Before approval: the draft detail names the engram it may contradict, and approving asks once (real window)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from ui.conftest import answer_modal, engrams_on_disk, human_events

DRAFT, OTHER = "ENG-2026-12-02-022", "ENG-2026-12-02-026"  # "every Friday afternoon" / "every Thursday afternoon"


def _ready(qtbot, window):
    qtbot.waitUntil(
        lambda: window.conflicts.service is not None and window.conflicts.runner.pending == 0, timeout=20000
    )
    assert window.drafts.select_id(DRAFT)


def test_the_draft_detail_says_what_approving_may_contradict(qtbot, window):
    _ready(qtbot, window)
    text = window.drafts.detail.toPlainText()
    assert "Approving this may contradict" in text
    assert OTHER in text and "Deploy freezes happen every Thursday afternoon" in text
    assert "Friday → Thursday" in text and "leaning" in text


def test_approve_asks_once_and_no_keeps_the_draft(qtbot, window, store_copy):
    _ready(qtbot, window)
    seen = []

    def decline(box):
        seen.append((box.objectName(), box.text()))
        box.button(QMessageBox.StandardButton.No).click()

    answer_modal(decline)
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    qtbot.waitUntil(lambda: bool(seen), timeout=10000)
    assert seen[0][0] == "conflictConfirm" and OTHER in seen[0][1]
    qtbot.wait(200)
    assert window.runner.pending == 0
    assert engrams_on_disk(store_copy)[DRAFT]["commitment"] == "draft"
    assert not human_events(store_copy)

    answer_modal(lambda box: box.button(QMessageBox.StandardButton.Yes).click())
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    assert engrams_on_disk(store_copy)[DRAFT]["commitment"] == "decided"
    assert [e["engram_id"] for e in human_events(store_copy)] == [DRAFT]


def test_drafts_without_a_conflict_are_approved_without_a_question(qtbot, window, store_copy):
    _ready(qtbot, window)
    quiet = next(r.id for r in window.drafts.model.rows if r.id != DRAFT and not window.conflicts.conflicts_for(r.id))
    window.drafts.select_id(quiet)
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    assert engrams_on_disk(store_copy)[quiet]["commitment"] == "decided"


def _open_conflicts(qtbot, window):
    window.qactions["view.conflicts"].trigger()
    dialog = window.conflicts.dialog
    qtbot.waitUntil(lambda: dialog.model.rowCount() > 0, timeout=20000)
    return dialog


def test_the_conflicts_view_lists_candidates_with_evidence(qtbot, qtmodeltester, window):
    dialog = _open_conflicts(qtbot, window)
    qtmodeltester.check(dialog.model)
    first = dialog.model.rows[0]
    assert {first.engram_a, first.engram_b} == {DRAFT, OTHER}
    assert "Friday → Thursday" in dialog.detail.toPlainText()
    assert "likely contradictions" in dialog.status.text()


def test_recording_from_the_conflicts_view_is_a_human_tension(qtbot, window, store_copy):
    from ui.conftest import tensions_on_disk

    dialog = _open_conflicts(qtbot, window)
    before = set(tensions_on_disk(store_copy))
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        dialog.record.click()
    new = [t for k, t in tensions_on_disk(store_copy).items() if k not in before]
    assert len(new) == 1 and {new[0]["engram_a"], new[0]["engram_b"]} == {DRAFT, OTHER}
    assert new[0]["status"] == "detected" and new[0]["reason"].startswith("plur_desk local detector")
    events = human_events(store_copy)
    assert [e["event"] for e in events] == ["contradiction_detected"]
    assert dialog.model.rowCount() == 0
    qtbot.waitUntil(lambda: window.conflicts.runner.pending == 0, timeout=20000)
    assert not window.conflicts.conflicts_for(DRAFT)  # the pair is recorded now: no more warning


def test_not_a_conflict_from_the_view_is_a_dismissed_record(qtbot, window, store_copy):
    from ui.conftest import tensions_on_disk

    dialog = _open_conflicts(qtbot, window)
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        dialog.dismiss.click()
    recorded = [t for t in tensions_on_disk(store_copy).values() if {t["engram_a"], t["engram_b"]} == {DRAFT, OTHER}]
    assert [t["status"] for t in recorded] == ["dismissed"]
    assert [e["data"]["action"] for e in human_events(store_copy)] == ["not_a_conflict"]


def test_a_bulk_approval_asks_once_with_the_warning_in_the_same_question(qtbot, window, store_copy):
    from PySide6.QtWidgets import QLabel

    _ready(qtbot, window)
    ids = [DRAFT, next(r.id for r in window.drafts.model.rows if r.id != DRAFT)]
    window.drafts.select_id(ids[0])
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    asked = []

    def confirm(dialog):
        asked.append("\n".join(label.text() for label in dialog.findChildren(QLabel)))
        if dialog.flagged.count():
            dialog.include.setChecked(True)  # flagged drafts in the batch are included only when ticked
        dialog.combo.setCurrentText("checked, the Friday one is right")
        qtbot.keyClick(dialog.combo.lineEdit(), Qt.Key.Key_Return)

    answer_modal(confirm)
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    assert len(asked) == 1 and "may contradict" in asked[0] and OTHER in asked[0]
    assert engrams_on_disk(store_copy)[DRAFT]["commitment"] == "decided"
