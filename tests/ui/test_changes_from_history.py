"""A past agent decision reached from the History pane: an agent's tension resolve (made by the real PLUR), listed in
Changes, reverted from its history row with R after one question, undone with Ctrl+Z; a row behind no listed change
is refused with a message and changes nothing."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from plur_desk.store.plur_store import PlurStore

from support.stores import plur
from ui.conftest import answer_modal

TENSION = "T-2026-1202-003"  # detected in the demo's contents


def _on_disk(root):
    store = PlurStore(root)
    store.load()
    tension = next(e.value for e in store.tensions.entries if e.key == TENSION)
    return tension["status"], {e.key: e.value["status"] for e in store.engrams.entries}


def _select_row(qtbot, win, predicate):
    qtbot.waitUntil(lambda: any(predicate(e) for e in win.history.model.events[: win.history.model.shown]))
    row = next(n for n, e in enumerate(win.history.model.events) if predicate(e))
    win.history.table.setCurrentIndex(win.history.model.index(row, 0))
    win.history.table.setFocus()


def test_an_agents_resolve_is_reverted_from_its_history_row_and_undone(qtbot, window, store_copy, tmp_path):
    win = window
    win.qactions["view.changes"].trigger()
    win.changes.table.setFocus()
    qtbot.keyClick(win.changes.table, Qt.Key.Key_W)
    qtbot.waitUntil(lambda: "Watching since" in win.changes.note.text(), timeout=20000)
    record = win.session.tension(TENSION)
    winner, loser = record["engram_b"], record["engram_a"]
    plur(store_copy, tmp_path / "node-home", [{"op": "resolve", "id": TENSION, "winner": winner}])
    win.qactions["file.reload"].trigger()
    qtbot.waitUntil(lambda: win.status_labels["changes"].text() == "1 agent changes", timeout=20000)

    win.qactions["view.history"].trigger()
    qtbot.waitUntil(lambda: win.navigation.current_name() == "history")
    win.history.show_engram(loser)
    _select_row(qtbot, win, lambda e: e.get("event") == "engram_created")  # PLUR's own, before watching began
    qtbot.keyClick(win.history.table, Qt.Key.Key_R)
    qtbot.waitUntil(lambda: "No agent change" in win.banner.text())
    assert _on_disk(store_copy)[0] == "resolved"

    _select_row(qtbot, win, lambda e: e.get("event") == "engram_retired" and TENSION in str(e.get("data")))
    answer_modal(lambda box: box.button(QMessageBox.StandardButton.Yes).click())
    qtbot.keyClick(win.history.table, Qt.Key.Key_R)
    qtbot.waitUntil(lambda: _on_disk(store_copy)[0] == "detected", timeout=20000)
    qtbot.waitUntil(
        lambda: win.jobs.pending("session") == 0 and win.status_labels["changes"].text() == "", timeout=20000
    )
    assert _on_disk(store_copy)[1][loser] == "active"  # the loser the agent retired, restored

    win.qactions["edit.undo"].trigger()  # Ctrl+Z: the agent's resolution stands again, and is listed again
    qtbot.waitUntil(lambda: _on_disk(store_copy)[0] == "resolved", timeout=20000)
    qtbot.waitUntil(lambda: win.status_labels["changes"].text() == "1 agent changes", timeout=20000)
    assert _on_disk(store_copy)[1][loser] == "retired"
