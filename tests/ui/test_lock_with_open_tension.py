"""Approving to locked a draft in an open tension asks first (real window): no keeps it a draft, yes locks it."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from plur_desk.store.lists.yaml_dump import dump_tensions_document
from plur_desk.store.lists.yaml_load import load_general

from ui.conftest import answer_modal, engrams_on_disk, human_events, open_window_on, wait_loaded


def test_locking_a_draft_in_an_open_tension_asks_first(qtbot, store_copy, tmp_path):
    engrams = engrams_on_disk(store_copy)
    draft = next(k for k, v in engrams.items() if v.get("commitment") == "draft")
    other = next(k for k, v in engrams.items() if k != draft and v.get("status") == "active")
    path = store_copy / "tensions.yaml"
    records = load_general(path.read_text()) if path.exists() else []
    records.append(
        {
            "id": "T-2026-1202-990",
            "engram_a": draft,
            "engram_b": other,
            "statement_a": engrams[draft]["statement"],
            "statement_b": engrams[other]["statement"],
            "confidence": 0.9,
            "reason": "they disagree",
            "detected_at": "2026-12-01T10:00:00.000Z",
            "status": "detected",
            "resolved_by": None,
            "resolved_at": None,
            "category": "factual",
        }
    )
    path.write_text(dump_tensions_document(records))
    window = open_window_on(qtbot, tmp_path, store_copy)
    wait_loaded(qtbot, window)
    window.workspace.settings.default_level = "locked"
    assert window.drafts.select_id(draft)
    qtbot.waitUntil(lambda: "Checking for contradictions" not in window.drafts.detail.toPlainText(), timeout=20000)
    asked: list[str] = []

    def answer(go: bool):
        def handle(box):
            asked.append(box.text())
            box.button(QMessageBox.StandardButton.Yes if go else QMessageBox.StandardButton.No).click()

        return handle

    def approve() -> None:
        """A on the draft; a contradiction question first, when there is one, answered yes where it waits."""
        question = window.review.question
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
        qtbot.waitUntil(lambda: bool(asked) or question.holds(draft), timeout=10000)
        if question.holds(draft):
            question.take_focus()
            qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)

    answer_modal(answer(False))
    approve()
    qtbot.waitUntil(lambda: bool(asked), timeout=10000)
    assert "T-2026-1202-990" in asked[0] and "out of locked" in asked[0]
    qtbot.waitUntil(lambda: window.jobs.pending("session") == 0, timeout=10000)
    assert engrams_on_disk(store_copy)[draft]["commitment"] == "draft"
    assert not human_events(store_copy, "Grace")

    answer_modal(answer(True))
    assert window.drafts.current_id() == draft  # the question left its draft on screen
    qtbot.waitUntil(lambda: QApplication.focusWidget() is not None, timeout=10000)  # keys back to the window
    qtbot.waitUntil(lambda: window.drafts.displayed_seen() is not None, timeout=10000)
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        approve()
    assert engrams_on_disk(store_copy)[draft]["commitment"] == "locked"
    assert [e["engram_id"] for e in human_events(store_copy, "Grace")] == [draft]
