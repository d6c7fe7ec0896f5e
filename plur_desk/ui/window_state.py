"""The main window's size and place: fitted to the screen on first start, restored from QSettings afterwards."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMainWindow

PREFERRED = (1360, 860)  # what the panes were laid out for; shrunk to fit smaller screens (1280x720 included)


def _settings(config: Path) -> QSettings:
    return QSettings(str(config / "window.ini"), QSettings.Format.IniFormat)


def fit_to_screen(window: QMainWindow) -> None:
    screen = window.screen()
    width, height = PREFERRED
    if screen is not None:
        available = screen.availableGeometry()
        width = min(width, int(available.width() * 0.95))
        height = min(height, int(available.height() * 0.92))
    window.resize(width, height)


def restore(window: QMainWindow, config: Path) -> bool:
    """Put the window back where the reviewer left it; False (and a fitted size) on the first start."""
    saved = _settings(config).value("main/geometry")
    if saved is not None and window.restoreGeometry(saved):
        state = _settings(config).value("main/state")
        if state is not None:
            window.restoreState(state)
        return True
    fit_to_screen(window)
    return False


def save(window: QMainWindow, config: Path) -> None:
    config.mkdir(parents=True, exist_ok=True)
    settings = _settings(config)
    settings.setValue("main/geometry", window.saveGeometry())
    settings.setValue("main/state", window.saveState())
    settings.sync()
