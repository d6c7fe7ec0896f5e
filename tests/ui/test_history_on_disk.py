"""The History pane reads its lines from the month files: after a month file is replaced on disk (a git pull) or an
agent appends to it, the pane shows what the file now says once the window's poll has seen it, and never the old
text: not from the rows it had read, not from the old offsets in the new file."""

from __future__ import annotations

import json
import os

from PySide6.QtCore import Qt


def _shown(pane) -> list[str]:
    return [pane.model.data(pane.model.index(row, 4)) or "" for row in range(pane.model.rowCount())]


def _ids(pane) -> list[str]:
    return [pane.model.data(pane.model.index(row, 3)) or "" for row in range(pane.model.rowCount())]


def test_the_history_pane_shows_a_month_file_as_it_now_is(qtbot, window, store_copy):
    window.navigation.show_history()
    pane = window.history
    month = next(iter(sorted((store_copy / "history").glob("*.jsonl"))))
    before = month.read_bytes()
    shown = _ids(pane)
    assert "ENG-2026-12-02-001" in shown

    pulled = month.with_name("pulled.tmp")  # the same length, other engram ids at the same offsets
    pulled.write_bytes(before.replace(b"ENG-2026-12-02-001", b"ENG-2026-12-02-XYZ"))
    os.replace(pulled, month)
    window.opener.poll()  # what the one-second timer does
    qtbot.waitUntil(lambda: "ENG-2026-12-02-XYZ" in _ids(pane), timeout=10000)
    assert "ENG-2026-12-02-001" not in _ids(pane)

    event = {
        "event": "engram_updated",
        "engram_id": "ENG-2026-12-02-XYZ",
        "timestamp": "2026-12-02T23:59:59.000Z",
        "data": {"field": "statement", "from": "a", "to": "appended by an agent"},
        "actor": {"asserted_by": "agent:codex", "runtime": {"name": "plur-core"}},
    }
    with open(month, "a") as handle:
        handle.write(json.dumps(event, separators=(",", ":")) + "\n")
    window.opener.poll()
    qtbot.waitUntil(lambda: "appended by an agent" in (_shown(pane)[0] if _shown(pane) else ""), timeout=10000)
    assert pane.model.data(pane.model.index(0, 3), Qt.ItemDataRole.DisplayRole) == "ENG-2026-12-02-XYZ"


def test_a_filter_reset_while_a_long_filter_is_read_is_never_replaced_by_its_answer(qtbot, window, monkeypatch):
    """A long history is filtered on the read pool. Resetting the filter shows every event at once; the filter
    still being read stops early, and its answer never replaces the view the reviewer asked for."""
    import threading

    from plur_desk.app.history.history_index import HistoryIndex
    from plur_desk.ui.history import history_pane

    monkeypatch.setattr(history_pane, "FILTER_OFF_SCREEN", 0)  # as with a long history: every filter is read off
    window.navigation.show_history()
    pane = window.history
    everything = pane.model.rowCount()
    assert everything > 3
    real, entered, release, stopped = HistoryIndex.newest_first, threading.Event(), threading.Event(), []

    def slow(self, flt=None, stale=None):  # type: ignore[no-untyped-def]
        if flt is not None and not flt.empty:
            entered.set()
            assert release.wait(10)
            stopped.append(stale is not None and stale())
        return real(self, flt, stale)

    monkeypatch.setattr(HistoryIndex, "newest_first", slow)
    pane.actor_filter.setCurrentText("human")
    qtbot.waitUntil(entered.is_set, timeout=10000)  # the filter is being read
    pane.actor_filter.setCurrentIndex(0)  # reset before it is done
    qtbot.waitUntil(lambda: pane.model.rowCount() == everything, timeout=5000)
    release.set()
    qtbot.waitUntil(lambda: window.workspace.jobs.pending("reads") == 0, timeout=10000)
    qtbot.wait(100)
    assert stopped == [True]  # it was told nobody wants its answer
    assert pane.model.rowCount() == everything and pane.actor_filter.currentIndex() == 0
