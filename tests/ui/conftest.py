"""Opens the real main window on a copy of a fixture store; helpers to answer modal dialogs by keyboard."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import shiboken6
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QWidget

from plur_desk.app.demo import demo_source
from plur_desk.app.settings import Settings, SettingsStore
from plur_desk.infra.clock import FixedClock
from plur_desk.ui.app import make_application
from plur_desk.ui.main_window import MainWindow

from support.moments import WINDOW_NOW as NOW


@pytest.fixture
def store_copy(tmp_path) -> Path:
    """The demo's contents as a store of its own, not watched: the demo's baseline is signed by a key trusted in
    demo copies only (app/demo.py), so here it would read as planted; tests/ui/test_demo_start.py covers it."""
    dest = tmp_path / "store"
    shutil.copytree(demo_source(), dest, ignore=shutil.ignore_patterns(".plur-desk"))
    return dest


@pytest.fixture
def window(qtbot, store_copy, tmp_path) -> MainWindow:
    make_application()
    settings = Settings(reviewer_name="Grace Tester")
    win = MainWindow(SettingsStore(tmp_path / "settings.yaml"), settings, "Grace Tester", FixedClock(NOW))
    # a failed test must not leave the quit question (unsaved edit) open with no one to answer it
    qtbot.addWidget(win, before_close_func=lambda w: w.drafts.cancel_edit())
    win.show()
    qtbot.waitExposed(win)
    win.activateWindow()
    win.open_path(store_copy)
    wait_loaded(qtbot, win)
    return win


def wait_loaded(qtbot, win: MainWindow) -> None:  # type: ignore[no-untyped-def]
    """Until the store, its history and every write or load queued behind them are done."""
    qtbot.waitUntil(
        lambda: win.session is not None and win.session.history.loaded and win.jobs.pending("session") == 0,
        timeout=20000,
    )


def grace_window(qtbot, tmp_path: Path) -> MainWindow:  # type: ignore[no-untyped-def]
    """Grace's window, shown and active, with no store opened yet."""
    make_application()
    win = MainWindow(
        SettingsStore(tmp_path / "settings.yaml"), Settings(reviewer_name="Grace"), "Grace", FixedClock(NOW)
    )
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    win.activateWindow()
    return win


def open_window_on(qtbot, tmp_path: Path, store: Path) -> MainWindow:  # type: ignore[no-untyped-def]
    """The window Grace opens on a store a test prepared first (the `window` fixture opens its store at once)."""
    win = grace_window(qtbot, tmp_path)
    win.open_path(store)
    return win


def answer_modal(
    handler: Callable[[QWidget], None], delay: int = 50, patience: float = 20.0, kind: type | None = None
) -> None:
    """Run `handler` on the next modal dialog that opens (the key that opens it is pressed right after), once it
    takes answers (`armed()`, as a reader would); with `kind`, on the next modal of that type (a progress dialog
    shown first is left alone).

    If the handler leaves the dialog open (or raises), the dialog is rejected so a test can never hang on it.
    """
    import time

    deadline = time.monotonic() + patience

    def poll() -> None:
        modal = QApplication.activeModalWidget()
        waiting = modal is None or (kind is not None and not isinstance(modal, kind))
        if waiting or not getattr(modal, "armed", lambda: True)():  # (a late question takes no answer at first)
            if time.monotonic() < deadline:
                QTimer.singleShot(20, poll)
            return

        def close_if_still_open() -> None:
            if shiboken6.isValid(modal) and modal.isVisible():
                getattr(modal, "reject", modal.close)()

        try:
            handler(modal)
        finally:
            QTimer.singleShot(2000, close_if_still_open)

    QTimer.singleShot(delay, poll)


def engrams_on_disk(store: Path) -> dict[str, dict]:
    from plur_desk.store.plur_store import PlurStore

    s = PlurStore(store)
    s.load()
    return {e.key: e.value for e in s.engrams.entries}


def tensions_on_disk(store: Path) -> dict[str, dict]:
    from plur_desk.store.plur_store import PlurStore

    s = PlurStore(store)
    s.load()
    return {e.key: e.value for e in s.tensions.entries}


def human_events(store: Path, reviewer: str = "Grace Tester") -> list[dict]:
    """Events this test's reviewer wrote (the demo store already holds an earlier reviewer's decisions)."""
    events = []
    for path in sorted((store / "history").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            actor = json.loads(line).get("actor") or {}
            if actor.get("kind") == "human" and actor.get("asserted_by") == reviewer:
                events.append(json.loads(line))
    return events
