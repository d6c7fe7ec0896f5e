"""GUI-thread stalls in the real window with 500 agent changes in the Changes pane, at 50,000 engrams.

    QT_QPA_PLATFORM=offscreen python bench/bench_changes_stall.py --store DIR [--out bench/results/changes.md]

DIR is a store kept by `bench/bench_changes.py --store DIR` (PLUR's 50,000 engrams, watched, then 500 changes made
by PLUR's own load and save); it is copied, so every run starts from the same 500 changes. Phases: the warm open
until the Changes count shows, the pane shown, 200 Down presses at 30 a second through the list, one Ratify (A),
one Revert (R), a whole group reverted at once (R on its row, the question answered Yes: one action), and Ctrl+Z. Measured as
bench_stall.py does: a 10 ms timer on the GUI thread; a stall is a gap minus the period. Target: max <= 100 ms.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))  # the plur_desk of this checkout, whatever is installed

from bench_stall import LATE_MS, pump, settle, time_applies  # noqa: E402
from PySide6.QtCore import Qt, QTimer  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication, QMessageBox  # noqa: E402
from turn_probe import TurnProbe  # noqa: E402


def _answer_yes(app: QApplication) -> None:
    def answer() -> None:
        box = app.activeModalWidget()
        if isinstance(box, QMessageBox):
            box.button(QMessageBox.StandardButton.Yes).click()
        else:
            QTimer.singleShot(20, answer)

    QTimer.singleShot(20, answer)


def _time_slots(pane) -> dict[str, tuple[list[int], list[float], list[float]]]:  # type: ignore[no-untyped-def]
    """The window-thread work of the pane's own slots, per call: CPU time of the thread (what the code costs, whatever
    the machine's load) and wall time."""
    timed: dict[str, tuple[list[int], list[float], list[float]]] = {}
    for name in ("_build", "_fill", "_update", "_show_current"):
        original = getattr(pane, name, None)
        if original is None:  # a pane of before `_update`
            continue
        calls: list[int] = []
        cpu: list[float] = []
        wall: list[float] = []
        timed[f"ChangesPane.{name}"] = (calls, cpu, wall)

        def wrapped(*args, _original=original, _calls=calls, _cpu=cpu, _wall=wall):  # type: ignore[no-untyped-def]
            began, thread = time.perf_counter(), time.thread_time()
            try:
                return _original(*args)
            finally:
                _calls.append(1)
                _cpu.append((time.thread_time() - thread) * 1000)
                _wall.append((time.perf_counter() - began) * 1000)

        setattr(pane, name, wrapped)
        if name == "_show_current":  # the list's signal holds the method it was connected to
            pane.table.currentItemChanged.disconnect(original)
            pane.table.currentItemChanged.connect(wrapped)
    return timed


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", type=Path, required=True, help="a folder bench_changes.py --store kept")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    kept = args.store.resolve()
    work = Path(tempfile.mkdtemp(prefix="changes-stall-"))
    shutil.copytree(kept / "store", work / "store", symlinks=True)
    shutil.copytree(kept / "data", work / "data", symlinks=True)  # the bench reviewer's key
    os.environ["XDG_CACHE_HOME"] = str(work / "cache")
    os.environ["XDG_DATA_HOME"] = str(work / "data")
    os.environ["XDG_CONFIG_HOME"] = str(work / "config")  # the trust file: not the user's own
    store = work / "store"

    from plur_desk.app.review.bootstrap import open_session
    from plur_desk.app.review.reviewer import READER
    from plur_desk.app.settings import Settings, SettingsStore
    from plur_desk.ui.app import make_application
    from plur_desk.ui.main_window import MainWindow

    open_session(store, READER)  # the parse cache filled: the open below is warm, as a reviewer's second open is
    app = make_application()
    win = MainWindow(SettingsStore(work / "settings.yaml"), Settings(reviewer_name="Bench Reviewer"), "Bench Reviewer")
    win.resize(1280, 800)
    win.show()
    probe = TurnProbe()
    print(f"  load average at start: {os.getloadavg()[0]:.2f}")
    rows: list[tuple[str, float, float, float, int]] = []
    idle = lambda: win.jobs.pending("session") == 0  # noqa: E731
    count = win.status_labels["changes"]

    def phase(name: str, action, done, linger: float = 0.3) -> None:  # type: ignore[no-untyped-def]
        probe.start()
        settle(app, 0.05)
        began = time.perf_counter()
        action()
        pump(app, done, timeout=900)
        took = time.perf_counter() - began
        settle(app, linger)
        worst, p99, ticks = probe.stop()
        rows.append((name, took, worst, p99, ticks))
        late = sorted((round(g) for g in probe.gaps if g > LATE_MS), reverse=True)
        load = os.getloadavg()[0]
        print(
            f"  {name}: {took:.2f} s, max {worst:.0f} ms, p99 {p99:.0f} ms, load {load:.2f}, most GUI-thread CPU in one "
            f"gap {probe.worst_cpu:.0f} ms; over {LATE_MS} ms: {late[:12] or 'none'}"
        )
        print("\n".join(probe.report()))

    def counted(n: int):  # type: ignore[no-untyped-def]
        return lambda: idle() and count.text() == f"{n} agent changes"

    slots = _time_slots(win.changes)
    applied = time_applies(win)  # the window's own GUI-thread work showing each decision's result, ms
    phase("warm open until '500 agent changes' shows", lambda: win.open_path(store), counted(500))
    # the search index and the embedding run in the background after an open: measured by bench_stall.py, and
    # waited for here so that what follows is the Changes pane's own cost
    phase("index build and embedding (background)", lambda: None, lambda: win.finder.is_ready and idle(), linger=1)
    settle(app, 5)
    phase("Changes pane shown", win.qactions["view.changes"].trigger, lambda: win.changes.isVisible() and idle())
    table = win.changes.table
    table.setFocus()
    first = table.topLevelItem(0)
    table.setCurrentItem(first.child(0) if first is not None else None)

    def hold_down() -> None:
        for k in range(200):
            QTimer.singleShot(33 * k, lambda: QTest.keyClick(table, Qt.Key.Key_Down))

    phase("200 Down presses (30/s)", hold_down, lambda: False if probe.clock.elapsed() < 33 * 200 + 100 else idle())
    while win.changes.selected_change() is None:
        QTest.keyClick(table, Qt.Key.Key_Down)
    phase("one Ratify (A)", lambda: QTest.keyClick(table, Qt.Key.Key_A), counted(499))
    while win.changes.selected_change() is None:
        QTest.keyClick(table, Qt.Key.Key_Down)
    phase("one Revert (R)", lambda: QTest.keyClick(table, Qt.Key.Key_R), counted(498))
    groups = [table.topLevelItem(i) for i in range(table.topLevelItemCount())]
    biggest = max(groups, key=lambda g: g.childCount() if g is not None else 0)
    size = biggest.childCount() if biggest is not None else 0
    table.setCurrentItem(biggest)

    def revert_group() -> None:
        _answer_yes(app)
        QTest.keyClick(table, Qt.Key.Key_R)

    phase(f"a group of {size} reverted at once (R, Yes)", revert_group, counted(498 - size))
    phase(f"Ctrl+Z (the group's {size} reverts, one action)", win.qactions["edit.undo"].trigger, counted(498))
    win.close()
    if applied:
        print(f"  the window's apply of each result (ms): {', '.join(f'{ms:.0f}' for ms in applied)}")
    for name, (calls, cpu, wall) in slots.items():
        if calls:
            print(f"  {name}: {len(calls)} calls, window-thread CPU max {max(cpu):.1f} ms, wall max {max(wall):.1f} ms")
    lines = [
        "| phase (500 agent changes, 50,000 engrams) | took | max stall | p99 stall | timer ticks |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| {n} | {t:.2f} s | {w:.0f} ms | {p:.0f} ms | {k} |" for n, t, w, p, k in rows]
    print("\n".join(lines))
    if args.out:
        with args.out.open("a", encoding="utf-8") as handle:
            handle.write("\n" + "\n".join(lines) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
