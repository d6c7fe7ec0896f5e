"""Where a warm launch's work goes, counted in CPU instructions (valgrind's cachegrind), which the machine's load
does not move: wall and CPU times on a shared 2-core machine moved 2-10x between runs, instruction counts by < 0.1 %.

    xvfb-run -a -s "-screen 0 1280x800x24" python bench/bench_launch_instructions.py STORE [--checkout DIR]

STORE's parse cache is filled first by one full launch (bench_launch.py's probe), so every count is of a warm
launch. Then one process per stage runs what `open_window` does up to that stage and ends there; the count of a
stage is the difference between two of them. The last row runs to "reviewable" as bench_launch.py defines it (the
first draft selected, its detail shown, Approve enabled), all threads of the window's process included (the store's
loading thread, the digest of engrams.yaml beside it). A bare PySide6 window (a table and a text view, shown) is
counted for comparison, and the moment the queue is ready (QUEUE), which moves far less between runs than the
probe's "reviewable". Valgrind hides SHA-NI from the program, so the digest of engrams.yaml counts ~30
instructions a byte here where the real CPU needs a few cycles: read the last row with that in mind.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from bench_launch import PROBE  # noqa: E402

STAGES = r"""
import importlib, os, sys
STOP = int(os.environ["STOP_AT"])
def stop(n):
    if n >= STOP:
        os._exit(0)
stop(0)
from plur_desk.ui import app as A
from plur_desk.infra.memory import gc_paused
with gc_paused():
    for m in A.QT_FREE_MODULES:
        importlib.import_module(m)
    stop(1)
    import PySide6.QtCore, PySide6.QtGui, PySide6.QtWidgets
    stop(2)
    A.make_application()
    stop(3)
    from plur_desk.ui.main_window import MainWindow
    stop(4)
from plur_desk.app.settings import SettingsStore
from plur_desk.ui.common import theme
settings_store = SettingsStore()
settings = settings_store.load()
theme.apply(settings.theme)
with gc_paused():
    win = MainWindow(settings_store, settings, "Bench")
    stop(5)
    win.show()
    stop(6)
"""

REVIEWABLE = r"""
import os, sys
from PySide6.QtCore import QTimer
from plur_desk.ui.app import open_window
win = open_window(sys.argv[1], "Bench", demo=False)
def tick():
    if (win.drafts.current() is not None and win.qactions["review.approve"].isEnabled()
            and win.drafts.detail.toPlainText().strip()):
        os._exit(0)
timer = QTimer()
timer.timeout.connect(tick)
timer.start(10)
from PySide6.QtWidgets import QApplication
QApplication.instance().exec()
"""

# The moment the queue is ready (the first draft selected, its detail set, Approve enabled), before the first paint
# and before the hidden panes' catch-up build: REVIEWABLE's 10 ms probe counts whatever the event loop did until its
# next tick, and moved by +-30 M between runs; this one by a few M.
QUEUE = r"""
import os, sys
from plur_desk.ui.app import open_window
win = open_window(sys.argv[1], "Bench", demo=False)
shown = win.opener._drafts_loaded
def drafts_loaded(found):
    shown(found)
    assert win.drafts.current() is not None and win.qactions["review.approve"].isEnabled()
    assert win.drafts.detail.toPlainText().strip()
    os._exit(0)
win.opener._drafts_loaded = drafts_loaded  # the load finishes on the event loop, which starts below
from PySide6.QtWidgets import QApplication
QApplication.instance().exec()
"""

BARE = r"""
import os
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QApplication, QMainWindow, QSplitter, QTableView, QTextBrowser
app = QApplication([])
window, split, table, model = QMainWindow(), QSplitter(), QTableView(), QStandardItemModel(0, 4)
for i in range(50):
    model.appendRow([QStandardItem(f"row {i} col {c}") for c in range(4)])
table.setModel(model)
detail = QTextBrowser()
detail.setHtml("<p>a draft's detail</p>")
split.addWidget(table)
split.addWidget(detail)
window.setCentralWidget(split)
window.show()
for _ in range(20):
    app.processEvents()
os._exit(0)
"""

VALGRIND = ("valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null")
NAMES = (
    "interpreter start",
    "plur_desk.ui.app and the Qt-free modules (store, session, domain, history index)",
    "PySide6: QtCore, QtGui, QtWidgets imported",
    "QApplication, its icon and style sheet",
    "ui.main_window imported (panes, controllers, QtSvg)",
    "MainWindow built",
    "shown",
)


def instructions(code: str, env: dict[str, str], *args: str) -> int:
    """The instructions the process ran (its largest count: a forked child's is reported too, and is smaller)."""
    proc = subprocess.run(
        [*VALGRIND, sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=env["PYTHONPATH"],
        timeout=1800,
    )
    counts = [int(n.replace(",", "")) for n in re.findall(r"I\s+refs:\s+([\d,]+)", proc.stderr)]
    assert counts, proc.stderr[-2000:]
    return max(counts)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("store", type=Path)
    parser.add_argument("--checkout", type=Path, default=ROOT)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="plur-launch-instr-"))
    store = work / "store"  # a copy: opening a store for review may finish its journal and sweep its temp files
    shutil.copytree(args.store, store, ignore=shutil.ignore_patterns("engrams.db*"))
    env = {**os.environ, "XDG_CACHE_HOME": str(work / "cache"), "XDG_CONFIG_HOME": str(work / "config")}
    env["PYTHONPATH"] = str(args.checkout.resolve())
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(args.checkout / "plur_desk")], check=True)
    subprocess.run([sys.executable, "-c", PROBE, str(store), str(work)], env=env, check=True, timeout=1800)
    counts = [instructions(STAGES, {**env, "STOP_AT": str(n)}) for n in range(len(NAMES))]
    counts.append(instructions(REVIEWABLE, env, str(store)))
    print("| stage | instructions (M) | cumulative (M) |\n|---|---|---|")
    previous = 0
    for name, count in zip(
        (*NAMES, "open_path → reviewable (loading thread, digest, queue, first paint)"), counts, strict=True
    ):
        print(f"| {name} | {(count - previous) / 1e6:,.1f} | {count / 1e6:,.1f} |")
        previous = count
    print(f"\nTo the queue ready (before its first paint): {instructions(QUEUE, env, str(store)) / 1e6:,.1f} M")
    print(f"A bare PySide6 window (table and text view, shown): {instructions(BARE, env) / 1e6:,.1f} M")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
