"""`--demo` (and File > Open Demo Store) says each start is a fresh copy, and every pane has something in it."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from plur_desk.app.demo import DEMO_NOTE
from plur_desk.ui import theme

from ui.conftest import wait_loaded


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
