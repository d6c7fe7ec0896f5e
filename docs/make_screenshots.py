"""Renders screenshots of the real main window on the demo store (run under Xvfb: see README).

xvfb-run -a -s "-screen 0 1600x1000x24" python docs/make_screenshots.py [--dark]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from plur_desk.app.demo import copy_demo_store
from plur_desk.app.settings import Settings, SettingsStore
from plur_desk.ui.app import make_application
from plur_desk.ui.main_window import MainWindow

OUT = Path(__file__).resolve().parent / "screenshots"


def dark_palette() -> QPalette:
    p = QPalette()
    for role, color in (
        (QPalette.ColorRole.Window, "#1f2329"),
        (QPalette.ColorRole.WindowText, "#e6e6e6"),
        (QPalette.ColorRole.Base, "#16191d"),
        (QPalette.ColorRole.AlternateBase, "#22262c"),
        (QPalette.ColorRole.Text, "#e6e6e6"),
        (QPalette.ColorRole.Button, "#2a2f36"),
        (QPalette.ColorRole.ButtonText, "#e6e6e6"),
        (QPalette.ColorRole.Highlight, "#3d6fb6"),
        (QPalette.ColorRole.HighlightedText, "#ffffff"),
        (QPalette.ColorRole.Mid, "#4a505a"),
        (QPalette.ColorRole.ToolTipBase, "#2a2f36"),
        (QPalette.ColorRole.ToolTipText, "#e6e6e6"),
    ):
        p.setColor(role, QColor(color))
    return p


def pump(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        QApplication.processEvents()
        time.sleep(0.01)


def main() -> None:
    dark = "--dark" in sys.argv
    app = make_application()
    app.setStyle("Fusion")
    if dark:
        app.setPalette(dark_palette())
    with tempfile.TemporaryDirectory() as tmp:
        store = copy_demo_store(Path(tmp))
        window = MainWindow(SettingsStore(Path(tmp) / "settings.yaml"), Settings(), "Ada Lovelace")
        window.resize(1480, 900)
        window.show()
        window.open_path(store)
        while window.session is None:
            pump(0.05)
        window.runner.wait()
        pump(0.5)
        suffix = "-dark" if dark else ""
        deadline = time.monotonic() + 20
        while not any("rejected before" in r.flags for r in window.drafts.model.rows) and time.monotonic() < deadline:
            pump(0.1)  # flags that need the history arrive with the second loading step
        target = next(r.id for r in window.drafts.model.rows if "rejected before" in r.flags)
        window.drafts.select_id(target)  # an agent re-asserted a rejected statement: the tombstone speaks up
        pump(0.3)
        window.grab().save(str(OUT / f"drafts{suffix}.png"))
        window.show_tensions()
        pump(0.3)
        window.grab().save(str(OUT / f"tensions{suffix}.png"))
        window.show_validity()
        window.validity.table.selectRow(1)
        pump(0.3)
        window.grab().save(str(OUT / f"validity{suffix}.png"))
        window.show_history()
        pump(0.3)
        window.grab().save(str(OUT / f"history{suffix}.png"))
        window.close()
    print("screenshots written to", OUT)


if __name__ == "__main__":
    main()
