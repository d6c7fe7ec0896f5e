"""Screenshots of the real main window on a fresh copy of the demo store, in the app's own light or dark theme.

Run under Xvfb (a real X server, the xcb platform), once per scheme and size:

    xvfb-run -a -s "-screen 0 1920x1080x24" python docs/make_screenshots.py --size 1366x768
    xvfb-run -a -s "-screen 0 1920x1080x24" python docs/make_screenshots.py --size 1366x768 --dark
    xvfb-run -a -s "-screen 0 1920x1080x24" python docs/make_screenshots.py --size 1920x1080
    xvfb-run -a -s "-screen 0 1920x1080x24" python docs/make_screenshots.py --size 1920x1080 --dark

At 1366x768 it writes drafts, tensions, validity, history, changes and conflicts (`-dark` for the dark theme); at 1920x1080
drafts and clusters with `-1920` in the name. `--only changes` writes that one alone. The copy is a real demo copy (in
the cache folder's demo/), so the demo reviewers' signatures and the demo's watched baseline count as they do for
`--demo`.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from plur_desk.app.demo import copy_demo_store
from plur_desk.app.settings import Settings, SettingsStore
from plur_desk.ui.app import make_application
from plur_desk.ui.common import theme
from plur_desk.ui.main_window import MainWindow

OUT = Path(__file__).resolve().parent / "screenshots"


def pump(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        QApplication.processEvents()
        time.sleep(0.01)


def until(condition, seconds: float = 30) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        pump(0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--size", default="1366x768", help="window size, WIDTHxHEIGHT")
    parser.add_argument("--dark", action="store_true", help="the app's dark theme (View > Switch Theme)")
    parser.add_argument(
        "--only", help="write only this screenshot (drafts, tensions, validity, history, changes, conflicts)"
    )
    args = parser.parse_args()
    width, height = (int(n) for n in args.size.split("x"))
    make_application()
    theme.apply("dark" if args.dark else "light")  # what the setting does in the app
    suffix = ("" if width < 1600 else f"-{width}") + ("-dark" if args.dark else "")
    with tempfile.TemporaryDirectory() as tmp:
        store = copy_demo_store()  # where --demo puts it: the demo reviewer's key is trusted there, as for a user
        settings = Settings(reviewer_name="Ada Lovelace", theme="dark" if args.dark else "light")
        window = MainWindow(SettingsStore(Path(tmp) / "settings.yaml"), settings, "Ada Lovelace")
        window.setGeometry(0, 0, width, height)
        window.show()
        window.open_path(store)
        until(lambda: window.session is not None and window.session.history.loaded and window.jobs.pending() == 0)
        until(lambda: any("rejected before" in r.flags for r in window.drafts.model.rows))
        # the draft that carries the most: a credential, its flags and what approving it would change
        target = next(r.id for r in window.drafts.model.rows if "credential-like string" in r.flags)
        window.drafts.select_id(target)
        pump(1.0)
        shots = {"drafts": None}
        if width < 1600:
            nav = window.navigation
            shots.update(tensions=nav.show_tensions, validity=nav.show_validity, history=nav.show_history)
            shots["changes"] = window.qactions["view.changes"].trigger
            shots["conflicts"] = window.qactions["view.conflicts"].trigger
        else:
            shots["clusters"] = window.navigation.show_clusters
        for name, show in shots.items():
            if args.only and name != args.only:
                continue
            if show is not None:
                show()
                if name == "validity":
                    window.validity.table.selectRow(1)
                if name == "changes":  # the session's promotion selected: its diff and "silent" in the detail
                    until(lambda: window.changes.table.topLevelItemCount() > 0)
                    found = window.changes.table.findItems("promoted", Qt.MatchFlag.MatchRecursive)
                    if found:
                        window.changes.table.setCurrentItem(found[0])
                if name == "conflicts":  # scanned when shown: both statements of the first pair side by side
                    until(lambda: window.conflicts_pane.found is not None and window.jobs.pending("conflicts") == 0, 60)
                if name == "clusters":
                    until(lambda: window.clusters.built and window.clusters.model.rowCount() > 0, 60)
                pump(0.8)
            path = OUT / f"{name}{suffix}.png"
            window.grab().save(str(path))
            print("wrote", path.relative_to(OUT.parent.parent))
        window.close()


if __name__ == "__main__":
    main()
