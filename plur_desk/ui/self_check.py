"""`plur-desk --self-check`: the installed app opens the bundled demo store off-screen and works."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def run_self_check(make_application: Callable[[], object], make_window: Callable[..., Any]) -> int:
    """`make_window(settings_store, settings, reviewer_name)` builds the main window (ui/app.py passes it in, so
    this module imports neither the window nor the module that calls it)."""
    checks: list[str] = []
    try:
        from PySide6.QtWidgets import QApplication

        from plur_desk.app.demo import copy_demo_store
        from plur_desk.app.settings import Settings, SettingsStore
        from plur_desk.ui.common.jobs import SESSION

        make_application()
        with tempfile.TemporaryDirectory(prefix="plur-desk-self-check-") as tmp:
            store = copy_demo_store(Path(tmp))
            window = make_window(SettingsStore(Path(tmp) / "settings.yaml"), Settings(), "self-check")
            window.open_path(store)
            deadline = time.monotonic() + 30
            while window.session is None and time.monotonic() < deadline:
                QApplication.processEvents()
                time.sleep(0.01)
            if window.session is None:
                print("FAIL: the demo store did not load within 30 s")
                return 1
            session = window.session
            while not (session.history.loaded and window.jobs.pending(SESSION) == 0) and time.monotonic() < deadline:
                QApplication.processEvents()  # the whole store, as `check` counts it, not the first entries shown
                time.sleep(0.01)
            window.jobs.wait(lane=SESSION)
            QApplication.processEvents()
            counts = session.counts()
            checks.append(
                f"opened the demo store: {counts['engrams']} engrams, {counts['drafts']} drafts waiting for review, "
                f"{counts['open_tensions']} open tensions"
            )
            if counts["drafts"] == 0:
                print("FAIL: the demo store shows no drafts")
                return 1
            window.search.setText("deploy")
            window.apply_search()
            searched_by = time.monotonic() + 30
            while window.finder.searching() and time.monotonic() < searched_by:  # the answer is read off this thread
                QApplication.processEvents()
                time.sleep(0.01)
            checks.append(f"searched 'deploy': {window.drafts.model.rowCount()} drafts match")
            from plur_desk.app.review.bootstrap import embedding_check

            checks.append(embedding_check())
            window.close()
    except Exception as exc:
        print(f"FAIL: {exc!r}")
        return 1
    for line in checks:
        print("ok:", line)
    print("self-check passed")
    return 0
