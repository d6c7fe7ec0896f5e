"""Where a warm launch's time goes, stage by stage, in real time: the main thread's CPU and wall milliseconds for
each of `open_window`'s steps, and the loading thread's own steps, at several store sizes, medians over rounds.

    xvfb-run -a -s "-screen 0 1280x800x24" python bench/bench_launch_stages.py STORE [STORE ...] [--rounds 6]

Each run is a fresh process that replays `ui.app.open_window` step by step (as bench_launch_instructions.py's
STAGES does) with a mark after each, then opens the store and waits for bench_launch.py's "reviewable" (the first
draft selected, its detail shown, Approve enabled) on a 10 ms timer. The stores take turns in each round, so the
machine's load meets them alike; each store's parse cache is filled by one full launch first (warm launches).
Instruction counts (bench_launch_instructions.py) move less with the load; these say what a person waits for.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from bench_launch import PROBE, run_alone  # noqa: E402

STAGES = r"""
import importlib, json, os, resource, sys, threading, time
T0 = float(sys.argv[2])
marks, steps = {}, {}
def mark(name):
    marks[name] = ((time.time() - T0) * 1000, time.thread_time() * 1000)
mark("interpreter started")
from plur_desk.ui import app as A
from plur_desk.infra.memory import gc_paused
with gc_paused():
    for m in A.QT_FREE_MODULES:
        importlib.import_module(m)
    mark("Qt-free modules imported")
    import PySide6.QtCore, PySide6.QtGui, PySide6.QtWidgets
    mark("PySide6 imported")
    A.make_application()
    mark("QApplication, icon, style sheet")
    from plur_desk.ui.main_window import MainWindow
    mark("ui.main_window imported")
from pathlib import Path
from plur_desk.app.settings import SettingsStore
from plur_desk.ui.common import theme
settings_store = SettingsStore()
settings = settings_store.load()
theme.apply(settings.theme)
with gc_paused():
    win = MainWindow(settings_store, settings, "Bench")
    mark("MainWindow built")
    win.show()
    mark("shown")

# the loading thread's steps: its CPU ms in each
from plur_desk.app.review import loading, session as S
from plur_desk.store import plur_store as P
def timed(owner, attr, name):
    fn = getattr(owner, attr)
    def run(*args, **kwargs):
        c0 = time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            steps[name] = steps.get(name, 0.0) + (time.thread_time() - c0) * 1000
    setattr(owner, attr, run)
timed(P.PlurStore, "load_drafts", "loading: drafts read (cache, split, digests)")
timed(S.ReviewSession, "__init__", "loading: session and queue rows")
timed(S.ReviewSession, "recover_on_open", "loading: journal recovery")
timed(loading, "before_first_draft", "loading: git remote, tension rows")
shown = win.opener._drafts_loaded
def drafts_loaded(found):
    mark("drafts loaded (loading thread done)")
    shown(found)
    mark("queue filled")
win.opener._drafts_loaded = drafts_loaded
before = loading.before_first_draft
def first_step_done(session):  # the loading thread's last step: its CPU so far is the whole first step's
    before(session)
    steps["loading thread, whole first step"] = time.thread_time() * 1000
loading.before_first_draft = first_step_done
win.open_path(Path(sys.argv[1]))
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
def tick():
    if (win.drafts.current() is not None and win.qactions["review.approve"].isEnabled()
            and win.drafts.detail.toPlainText().strip()):
        mark("reviewable (10 ms probe)")
        usage = resource.getrusage(resource.RUSAGE_SELF)
        steps["process CPU, all threads"] = (usage.ru_utime + usage.ru_stime) * 1000
        print(json.dumps({"marks": marks, "steps": steps}), flush=True)
        os._exit(0)
timer = QTimer()
timer.timeout.connect(tick)
timer.start(10)
QApplication.instance().exec()
"""


def _env(work: Path) -> dict[str, str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(work / "cache"), "XDG_CONFIG_HOME": str(work / "config")}
    env["PYTHONPATH"] = str(ROOT)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run(work: Path) -> dict:
    proc = run_alone(
        [sys.executable, "-c", STAGES, str(work / "store"), repr(time.time())], env=_env(work), timeout=600
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.0f} [{min(values):.0f}–{max(values):.0f}]"


def table(name: str, runs: list[dict]) -> str:
    lines = [f"**{name}** (main thread: CPU ms / wall ms of each step, medians [min–max] of {len(runs)} runs)", ""]
    lines += ["| step | CPU ms | wall ms |", "|---|---|---|"]
    previous = None
    for stage in runs[0]["marks"]:
        if previous is None:
            cpu = [r["marks"][stage][1] for r in runs]
            lines.append(f"| {stage} (from the process's start) | {_median(cpu)} | |")
        else:
            cpu = [r["marks"][stage][1] - r["marks"][previous][1] for r in runs]
            wall = [r["marks"][stage][0] - r["marks"][previous][0] for r in runs]
            lines.append(f"| {stage} | {_median(cpu)} | {_median(wall)} |")
        previous = stage
    for step in runs[0]["steps"]:
        lines.append(f"| {step} | {_median([r['steps'].get(step, 0.0) for r in runs])} | |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("stores", nargs="+", type=Path)
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "plur_desk")], check=True)
    base = Path(tempfile.mkdtemp(prefix="plur-launch-stages-"))
    works = {}
    for store in args.stores:
        work = works[store] = base / store.name
        shutil.copytree(store, work / "store", ignore=shutil.ignore_patterns("engrams.db*"))
        (work / "config" / "plur-desk").mkdir(parents=True)
        (work / "config" / "plur-desk" / "settings.yaml").write_text("last_reviewer: Bench\n")
        # a full launch: the parse cache it saves makes the next ones warm
        run_alone([sys.executable, "-c", PROBE, str(work / "store"), str(work)], env=_env(work), timeout=900)
    runs: dict[Path, list[dict]] = {store: [] for store in args.stores}
    loads = [os.getloadavg()[0]]
    for _ in range(args.rounds):
        for store in args.stores:
            runs[store].append(run(works[store]))
    loads.append(os.getloadavg()[0])
    for store in args.stores:
        print(table(str(store), runs[store]) + "\n")
    print(f"load average {loads[0]:.1f} -> {loads[1]:.1f}")
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
