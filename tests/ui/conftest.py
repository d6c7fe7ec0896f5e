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
from plur_desk.index.embeddings import vectors_file
from plur_desk.infra.clock import FixedClock
from plur_desk.infra.paths import cache_dir, store_cache_dir
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
def vectors_of() -> Path | None:
    """A store holding `store_copy`'s statements (the demo): the `window` fixture puts their vectors in the window's
    cache (`seed_vectors`). A test file whose `store_copy` holds others names its own, or None."""
    return demo_source()


@pytest.fixture
def window(request, qtbot, store_copy, vectors_of, tmp_path, tmp_path_factory) -> MainWindow:
    """Grace's window on `store_copy`, loaded. The statements of `vectors_of` have their vectors in the window's
    cache, as for a store opened before, unless the test is marked `cold_vectors`."""
    if vectors_of is not None and request.node.get_closest_marker("cold_vectors") is None:
        seed_vectors(store_copy, vectors_of, tmp_path_factory)
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


_vectors_made: dict[Path, Path] = {}  # this test process's vector cache of each template store's statements


def seed_vectors(store: Path, template: Path, factory: pytest.TempPathFactory) -> None:
    """Put the vectors of `template`'s statements in the window's cache for `store`, where a window that opened the
    store before left them: the window then embeds only the statements the template lacks, and no embedding process
    starts for the others (one costs ~0.5 s of CPU, 60 s over the window tests; the window's cold embedding is tested
    where it is asked for, with `cold_vectors`). The vectors are made once per test process and template, by the
    app's own embedding path (`SearchService.embed_missing`, the worker process) on a copy of the template."""
    made = _vectors_made.get(template)
    if made is None:
        from plur_desk.app.review.session import ReviewSession
        from plur_desk.app.search.store_search import SearchService
        from plur_desk.domain.review import Reviewer
        from plur_desk.store.plur_store import PlurStore

        root = factory.mktemp("vectors-of") / "store"
        shutil.copytree(template, root, ignore=shutil.ignore_patterns(".plur-desk"))
        plur = PlurStore(root)
        plur.load()
        session = ReviewSession(plur, Reviewer("Grace Tester"), FixedClock(NOW))
        assert SearchService(session, root.parent / "cache").embed_missing() > 0
        made = _vectors_made[template] = vectors_file(store_cache_dir(root.parent / "cache", session.root))
    dest = vectors_file(store_cache_dir(cache_dir(), store.resolve()))
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(made, dest)


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
