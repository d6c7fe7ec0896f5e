"""GUI decisions read back by the real PLUR, and search following changes the real PLUR makes."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from PySide6.QtCore import Qt

from plur_desk.app.review.bootstrap import open_session
from plur_desk.app.search.store_search import SearchService
from plur_desk.app.settings import Settings, SettingsStore
from plur_desk.infra.clock import FixedClock
from plur_desk.ui.app import make_application
from plur_desk.ui.main_window import MainWindow

from support.stores import plur
from ui.conftest import answer_modal

pytestmark = pytest.mark.interop


@pytest.fixture
def gui(qtbot, store, tmp_path):
    make_application()
    win = MainWindow(
        SettingsStore(tmp_path / "settings.yaml"),
        Settings(),
        "Grace Tester",
        FixedClock(datetime(2026, 12, 2, 15, 0, tzinfo=UTC)),
    )
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    with qtbot.waitSignal(win.store_opened, timeout=60000):  # the whole store, not just the drafts
        win.open_path(store)
    qtbot.waitUntil(lambda: win.session is not None and win.jobs.pending("session") == 0, timeout=20000)
    win.navigation.show_tensions()
    return win


def test_resolve_from_the_gui_is_what_plur_sees(qtbot, gui, store, node_home):
    row = gui.tensions.current()
    gui.tensions.table.setFocus()
    qtbot.keyClick(gui.tensions.table, Qt.Key.Key_1)
    with qtbot.waitSignal(gui.changes_applied, timeout=10000):
        qtbot.keyClick(gui.tensions.table, Qt.Key.Key_Return)
    loaded, tensions, history = plur(store, node_home, [{"op": "load"}, {"op": "listTensions"}, {"op": "history"}])
    assert loaded["quarantined"] == []
    record = next(t for t in tensions if t["id"] == row.id)
    assert record["status"] == "resolved" and record["resolved_by"] == row.engram_a
    assert loaded["engrams"][row.engram_b]["status"] == "retired"
    retired = [e for e in history if e["event"] == "engram_retired" and e["engram_id"] == row.engram_b]
    assert retired and retired[-1]["actor"]["kind"] == "human"
    assert retired[-1]["data"]["reason"] == f"tension {row.id} resolved in favor of {row.engram_a}"


def test_split_in_time_from_the_gui_is_what_plur_sees(qtbot, gui, store, node_home):
    row = gui.tensions.current()

    def pick(dialog):
        dialog.date.setDate(dialog.date.date().fromString("2026-09-01", "yyyy-MM-dd"))
        qtbot.keyClick(dialog.date, Qt.Key.Key_Return)

    gui.tensions.table.setFocus()
    answer_modal(pick)
    with qtbot.waitSignal(gui.changes_applied, timeout=10000):
        qtbot.keyClick(gui.tensions.table, Qt.Key.Key_T)
    loaded, tensions = plur(store, node_home, [{"op": "load"}, {"op": "listTensions"}])
    assert loaded["quarantined"] == [] and loaded["validate"]["ok"]
    windows = {
        loaded["engrams"][i]["temporal"].get("valid_until") or loaded["engrams"][i]["temporal"].get("valid_from")
        for i in (row.engram_a, row.engram_b)
    }
    assert windows == {"2026-08-31", "2026-09-01"}
    assert all(loaded["engrams"][i]["temporal"]["learned_at"] for i in (row.engram_a, row.engram_b))
    assert next(t for t in tensions if t["id"] == row.id)["status"] == "dismissed"
    assert all(loaded["engrams"][i]["status"] == "active" for i in (row.engram_a, row.engram_b))


def test_search_follows_plur_learn_and_forget(store, node_home, tmp_path):
    session = open_session(store, "Searcher", use_cache=False)
    service = SearchService(session, tmp_path / "cache", embeddings=False)
    service.sync()
    learned = plur(
        store,
        node_home,
        [
            {
                "op": "learn",
                "statement": "Quokka builds run on the blue runners",
                "options": {"scope": "project:web", "commitment": "draft"},
            }
        ],
    )[0]
    assert session.reload_if_changed().engrams
    touched = service.sync()
    assert 1 <= touched < 10  # only what PLUR changed is re-indexed
    assert [h.id for h in service.search("quokka is:draft", 5).hits] == [learned["id"]]
    plur(store, node_home, [{"op": "forget", "id": learned["id"], "reason": "wrong", "options": {"force": True}}])
    session.reload_if_changed()
    service.sync()
    assert service.search("quokka is:draft", 5).hits == []
    assert [h.id for h in service.search("quokka status:retired", 5).hits] == [learned["id"]]
