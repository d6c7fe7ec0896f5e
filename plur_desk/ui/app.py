"""Builds the QApplication and the main window around a store (the only place Qt objects are assembled)."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from plur_desk import APP_ID, __version__
from plur_desk.infra.memory import gc_paused, limit_malloc_arenas, return_large_blocks
from plur_desk.resources import RESOURCES

if TYPE_CHECKING:
    from PySide6.QtWidgets import QApplication

    from plur_desk.app.settings import Settings, SettingsStore
    from plur_desk.ui.main_window import MainWindow

# What the window imports that does not need Qt, imported before PySide6 is: PySide6's import hook reads the source
# of every module imported after it (looking for `from __feature__ import`), 20-50 ms of a launch for these.
QT_FREE_MODULES = (
    "plur_desk.app.review.bootstrap",
    "plur_desk.app.review.loading",
    "plur_desk.app.review.session",
    "plur_desk.app.settings",
    "plur_desk.app.team.team_review",
    "json",
)

NO_DISPLAY = (
    "plur-desk: no display to show the window on (neither DISPLAY nor WAYLAND_DISPLAY is set).\n"
    "Run it in a desktop session, or over SSH with X forwarding (ssh -X). From a terminal without a display, use\n"
    "'plur-desk check' or 'plur-desk search' (see plur-desk --help), or set QT_QPA_PLATFORM=offscreen to run the\n"
    "window invisibly on purpose."
)


def _ensure_platform(self_check: bool) -> bool:
    """False when there is nowhere to show a window: better to say so than to run invisibly forever."""
    if self_check:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        return True
    if sys.platform != "linux" or os.environ.get("QT_QPA_PLATFORM"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


# How long a thread running Python keeps the interpreter lock while another waits for it (Python's default is
# 5 ms). The window's thread waits that long each time it takes the lock back from a busy reader or runner, several
# times per key press or repaint; 1 ms makes a repaint beside two busy threads about 2x faster (measured: 106 ms
# -> 45 ms) at the cost of more frequent switches in the background work.
SWITCH_INTERVAL = 0.001


def keep_painting_on_the_window_thread() -> None:
    """Qt's raster engine hands every fill of more than ~96 spans (a selected row, a scroll bar, a text block's
    background) to a pool of helper threads and waits for them. With both cores busy with the store's loading,
    indexing or a contradiction check, those helpers wait their turn for a core while the window's thread waits
    for them: holding J stalled the window 140-290 ms per run in single repaints (a native profile showed
    `QLatch::wait` under `QRasterPaintEngine`). A whole-window fill takes 0.14 ms on the window's thread here (0.19
    ms through the pool, measured idle): the fills are done there. Qt reads the setting once, at the first large fill."""
    os.environ.setdefault("QT_NO_GUI_THREADPOOL", "1")


def make_application(argv: list[str] | None = None) -> QApplication:
    from PySide6.QtWidgets import QApplication

    keep_painting_on_the_window_thread()
    sys.setswitchinterval(SWITCH_INTERVAL)
    limit_malloc_arenas()  # before the window's threads start: freed memory is shared between them
    return_large_blocks()  # freed buffers of a load are given back, not kept resident in the heap

    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(argv or [sys.argv[0]])
    app.setApplicationName("plur_desk")
    app.setApplicationVersion(__version__)
    app.setOrganizationName("plur-desk")
    app.setDesktopFileName(APP_ID)
    from plur_desk.ui.common.icons import app_icon

    app.setWindowIcon(app_icon())
    # Set once: setting a style sheet again, even the same one, polishes every widget alive in the application
    # again (1.6 s per call once 25 windows were open in one test process, the whole of a property test's time)
    qss = (RESOURCES / "app.qss").read_text(encoding="utf-8")
    if app.styleSheet() != qss:
        app.setStyleSheet(qss)
    return app


def ask_reviewer(settings_store: SettingsStore, settings: Settings, given: str | None) -> str | None:
    """This run's reviewer: `--reviewer` (for this run only), else the saved default, else asked in a dialog
    whose OK stays disabled until the name names a person. Saved as the default only when the person ticks it.
    None when the dialog was cancelled."""
    from plur_desk.app.review.reviewer import check_reviewer, reviewer_problem
    from plur_desk.app.settings import suggested_reviewer_name

    saved = settings.reviewer_name
    if given is not None and reviewer_problem(given) is None:
        return check_reviewer(given)
    if given is None and saved and reviewer_problem(saved) is None:
        return check_reviewer(saved)
    offered = given if given is not None else saved
    problem = reviewer_problem(offered) if offered else None
    from plur_desk.ui.common.dialogs import ReviewerDialog  # only when there is no usable name: a relaunch never asks

    dialog = ReviewerDialog(
        offered or suggested_reviewer_name(),
        remember=given is None,
        problem=f"Not usable: {problem}" if problem else "",
    )
    if dialog.exec() != ReviewerDialog.DialogCode.Accepted:
        return None
    name = check_reviewer(dialog.reviewer)
    if dialog.remember.isChecked() and name != saved:
        settings.reviewer_name = name
        settings_store.save(settings)
    return name


def open_window(store: str | None, reviewer: str | None, demo: bool) -> MainWindow | None:
    """What a launch does before the event loop runs: the application, this run's reviewer, the window, and the
    store opening in it. None when no reviewer was given (the dialog was cancelled)."""
    with gc_paused():  # modules and widgets by the thousand, none of them garbage (also around the window below)
        for module in QT_FREE_MODULES:
            importlib.import_module(module)
        make_application()
        from plur_desk.ui.main_window import MainWindow
    from plur_desk.app.demo import DEMO_NOTE, copy_demo_store
    from plur_desk.app.settings import SettingsStore
    from plur_desk.infra.paths import default_store_path

    settings_store = SettingsStore()
    settings = settings_store.load()
    from plur_desk.ui.common import theme

    theme.apply(settings.theme)  # before any window: every widget starts in the scheme it keeps
    name = ask_reviewer(settings_store, settings, reviewer)
    if name is None:
        return None
    from plur_desk.app.review.reviewer import note_reviewer_change

    changed = note_reviewer_change(settings_store, settings, name)
    with gc_paused():  # not around the reviewer's dialog above: it may stay open a long while
        window = MainWindow(settings_store, settings, name)
        window.show()
    from plur_desk.app.review.bootstrap import store_problem

    path = default_store_path(store)
    fallback = not demo and store is None and store_problem(path) is not None
    if demo or fallback:
        path = copy_demo_store()  # no store yet: show the real thing on the bundled demo
    if demo:
        window.sticky_note = DEMO_NOTE
    if fallback:
        window.sticky_note = (
            f"No PLUR store at {default_store_path(None)} yet, so this is a fresh copy of the demo store (what you "
            "decide in it is not kept). Use File > Open Store… (Ctrl+O) for yours."
        )
    window.sticky_note = "\n".join(t for t in (changed, window.sticky_note) if t)
    window.open_path(Path(path))
    return window


def run_app(store: str | None, reviewer: str | None, demo: bool, self_check: bool) -> int:
    if not _ensure_platform(self_check):
        print(NO_DISPLAY, file=sys.stderr)
        return 2
    if self_check:
        from plur_desk.ui.main_window import MainWindow
        from plur_desk.ui.self_check import run_self_check

        return run_self_check(make_application, MainWindow)
    window = open_window(store, reviewer, demo)
    if window is None:
        print(
            "plur-desk: no reviewer name given, so nothing was opened (every decision is recorded under it).\n"
            "Start again and enter your name, or pass --reviewer NAME.",
            file=sys.stderr,
        )
        return 1
    from PySide6.QtWidgets import QApplication

    return int(QApplication.exec())
