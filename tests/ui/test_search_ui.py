"""The search field speaks the query language; bulk actions apply to every result."""

from __future__ import annotations

from PySide6.QtCore import Qt

from ui.conftest import answer_modal, engrams_on_disk


def test_query_filters_the_queue_and_bulk_applies_to_all_results(qtbot, window, store_copy):
    qtbot.waitUntil(lambda: window.finder.is_ready, timeout=20000)
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert window.search.hasFocus()
    qtbot.keyClicks(window.search, "scope:project:web")
    qtbot.waitUntil(
        lambda: window.drafts.model.rowCount() and all(r.scope == "project:web" for r in window.drafts.model.rows),
        timeout=3000,
    )
    ids = [r.id for r in window.drafts.model.rows]
    assert len(ids) >= 3
    window.drafts.focus_queue()
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    assert sorted(window.drafts.selected_ids()) == sorted(ids)

    def confirm(dialog):
        assert str(len(ids)) in dialog.windowTitle()
        if dialog.flagged.count():
            dialog.include.setChecked(True)  # flagged drafts in the batch are included only when ticked
        dialog.combo.setCurrentText("web team conventions, checked")
        qtbot.keyClick(dialog.combo.lineEdit(), Qt.Key.Key_Return)

    answer_modal(confirm)
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    on_disk = engrams_on_disk(store_copy)
    assert all(on_disk[i]["commitment"] == "decided" for i in ids)
    others = [e for e in on_disk.values() if e.get("commitment") == "draft" and e.get("status") == "active"]
    assert others and all(e["scope"] != "project:web" for e in others)


def test_detail_shows_similar_engrams_by_cosine_only(qtbot, window):
    qtbot.waitUntil(lambda: window.status_labels["search"].text() == "search: full text + semantic", timeout=60000)
    target = next(r.id for r in window.drafts.model.rows if r.statement == "Use spaces for indentation in every file")
    window.drafts.select_id(target)
    window.review.show_current()
    text = window.drafts.detail.toPlainText()
    assert "cosine similarity" in text and "Use spaces, never tabs, for indentation in every file" in text
    scores = [float(line.split(" · ")[0]) for line in text.splitlines() if " · ENG-" in line]
    assert scores and all(0.0 < s <= 1.0 for s in scores)  # one scale: cosine, never BM25's 5.45


def test_no_similar_engrams_without_the_model(qtbot, window):
    qtbot.waitUntil(lambda: window.finder.is_ready, timeout=20000)
    window.finder.service._embeddings_wanted = False  # as on a machine without the embeddings extra
    window.finder.service._embedder = None
    target = next(r.id for r in window.drafts.model.rows if r.statement == "Use spaces for indentation in every file")
    assert window.finder.similar_to(target) == []
    window.drafts.select_id(target)
    window.review.show_current()
    assert "Similar engrams" not in window.drafts.detail.toPlainText()
