"""`--demo` (and File > Open Demo Store) says each start is a fresh copy, and every pane has something in it."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from plur_desk.app.demo import DEMO_NOTE
from plur_desk.ui.common import theme

from ui.conftest import wait_loaded

AGENT_SESSION = "sess-codex-20261206-a41f"  # as packaging/make_demo_store.py wrote it
SESSION_DRAFTS = ("End-to-end tests run in Playwright against the PR's preview deploy",)


@pytest.fixture
def themed():
    app = QApplication.instance()
    before, state = QPalette(app.palette()), dict(theme._active)
    yield
    app.setPalette(before)
    theme._active.update(state)


def test_demo_start_says_it_is_fresh(qtbot, themed):
    from plur_desk.ui.app import open_window

    window = open_window(None, "Grace Tester", demo=True)
    qtbot.addWidget(window)
    wait_loaded(qtbot, window)
    assert "fresh copy of the bundled demo store" in window.banner.text() and window.banner.isVisible()
    assert "every --demo start" in window.banner.text()


def test_open_demo_store_says_so_too_and_every_pane_has_something(qtbot, window):
    window.opener.open_demo()
    wait_loaded(qtbot, window)
    assert DEMO_NOTE in window.banner.text()
    assert window.drafts.model.rowCount() and window.session.counts()["open_tensions"]
    window.navigation.show_clusters()
    qtbot.waitUntil(lambda: window.clusters.built and window.clusters.model.rowCount() > 0, timeout=60000)
    assert not window.clusters.empty.isVisible()


def test_the_demo_is_watched_and_its_changes_queue_shows_what_an_agent_session_did_on_its_own(qtbot, window):
    """The demo's baseline (signed by its second reviewer, trusted in demo copies only) was taken before an agent
    session promoted its own draft and resolved a tension between two of its engrams: both listed, nothing else."""
    window.opener.open_demo()
    wait_loaded(qtbot, window)
    window.qactions["view.changes"].trigger()
    qtbot.waitUntil(lambda: window.status_labels["changes"].text() == "2 agent changes", timeout=20000)
    pane = window.changes
    assert "Watching since" in pane.note.text() and "Charles Babbage" in pane.note.text()
    listed, ids = [], {}
    for g in range(pane.table.topLevelItemCount()):
        group = pane.table.topLevelItem(g)
        assert group.isFirstColumnSpanned()  # "session … · writer (n)" read whole
        for c in range(group.childCount()):
            pane.table.setCurrentItem(group.child(c))
            change = pane.selected_change()
            room = pane.table.columnWidth(0) - pane.table.indentation() - 8
            assert pane.table.fontMetrics().horizontalAdvance(group.child(c).text(0)) <= room, group.child(c).text(0)
            listed.append((change.kind, change.writer, change.session, change.silent))
            ids[change.kind] = change.id
    assert sorted(listed) == [
        ("promoted", "agent:codex", AGENT_SESSION, True),  # updateEngram writes no history event
        ("tension_resolved", "agent:codex", AGENT_SESSION, False),  # inferred: PLUR's resolve names no session
    ]
    promoted = window.session.engram(ids["promoted"])
    assert promoted["statement"] == SESSION_DRAFTS[0] and promoted["commitment"] == "decided"
