"""The hidden panes' widgets are built after the first draft is shown (ui/built_later.py), and a pane not built yet
behaves as one built with the window: shown by its key or its tab, it has its widgets and answers its keys."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QPushButton

from plur_desk.ui.main_window import MainWindow

from ui.conftest import grace_window, open_window_on, tensions_on_disk, wait_loaded

HIDDEN = ("tensions", "validity", "clusters", "writers", "changes")  # History is built with the window


@pytest.fixture
def unbuilt(qtbot, tmp_path, store_copy, monkeypatch) -> MainWindow:
    """A window whose hidden panes are not built when the store is open (the catch-up after the first draft off)."""
    monkeypatch.setattr(MainWindow, "_build_next_pane", lambda self: None)
    win = open_window_on(qtbot, tmp_path, store_copy)
    wait_loaded(qtbot, win)
    assert not any(win.panes[name].built for name in HIDDEN)  # type: ignore[attr-defined]
    return win


def test_the_hidden_panes_are_built_once_the_first_draft_is_shown(qtbot, tmp_path, store_copy):
    win = grace_window(qtbot, tmp_path)
    assert not any(win.panes[name].built for name in HIDDEN)  # type: ignore[attr-defined]
    win.open_path(store_copy)
    qtbot.waitUntil(lambda: all(win.panes[name].built for name in HIDDEN), timeout=20000)  # type: ignore[attr-defined]
    assert win.drafts.current() is not None


def test_a_pane_shown_by_its_key_answers_its_keys_the_first_time(qtbot, unbuilt, store_copy):
    win = unbuilt
    qtbot.keyClick(win.drafts.table, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)  # Tensions
    assert win.tabs.currentWidget() is win.tensions and win.tensions.built
    detected = next(r for r in win.tensions.model.rows if r.status == "detected")
    win.tensions._select(win.tensions.model.row_of(detected.id))
    with qtbot.waitSignal(win.changes_applied, timeout=10000):
        qtbot.keyClick(win.tensions.table, Qt.Key.Key_C)
    assert tensions_on_disk(store_copy)[detected.id]["status"] == "confirmed"
    assert win.tensions.findChild(QPushButton, "tension_confirm_button") is not None  # and its buttons


def test_a_pane_shown_by_its_tab_has_its_widgets_and_keys(qtbot, unbuilt):
    win = unbuilt
    win.tabs.setCurrentIndex(list(win.panes).index("validity"))
    QApplication.processEvents()
    pane = win.validity
    assert pane.built and pane.table.isVisible()
    keys = {a.objectName(): a.shortcutContext() for a in pane.table.actions()}
    assert keys and all(c == Qt.ShortcutContext.WidgetShortcut for c in keys.values())
    assert "validity.edit" in keys


def test_asking_a_widget_of_a_pane_not_built_builds_it(unbuilt):
    pane = unbuilt.clusters
    assert not pane.built
    assert pane.table.model() is pane.model  # the first ask builds it
    assert pane.built
    with pytest.raises(AttributeError):
        pane.no_such_widget  # noqa: B018 (an attribute nothing makes is still missing)


def test_what_the_changes_pane_found_before_it_was_built_is_there_when_it_is_shown(qtbot, unbuilt):
    win = unbuilt
    qtbot.waitUntil(lambda: "not watched yet" in win.changes._note, timeout=20000)  # the detection ran, hidden
    assert not win.changes.built
    win.qactions["view.changes"].trigger()
    assert win.navigation.current_name() == "changes" and win.changes.built
    assert "not watched yet" in win.changes.note.text() and win.changes.table.isVisible()
    keys = {a.objectName() for a in win.changes.table.actions()}
    assert {"changes.ratify", "changes.revert", "changes.start"} <= keys  # its keys on its list
