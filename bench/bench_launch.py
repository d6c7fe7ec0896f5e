"""From launch, in the real window, side by side with the real PLUR in the same run: when the first draft can be
acted on, when everything is loaded, `plur-desk check`, cold and warm, at several store sizes.

    xvfb-run -a -s "-screen 0 1280x800x24" python bench/bench_launch.py [--sizes 1000,10000,50000] [--rounds 3]
        [--stores DIR] [--out bench/results/launch.md] [--warm-only]

Each round alternates ours and PLUR's, cold then warm, so machine load hits both alike:
- ours: a fresh process that starts the real window exactly as `plur-desk STORE --reviewer Bench` does
  (`ui.app.open_window`: settings, QApplication, MainWindow, open_path) with a 10 ms timer on the GUI thread; "reviewable" = the first draft selected, its detail painted and Approve enabled;
  "loaded" = the whole store parsed (the window's store_opened). Cold = no parse cache; warm = the cache the
  previous run saved.
- PLUR: `node bench_plur.mjs list` (a new Plur, `list()`), timed from process launch to exit. Cold = no
  `engrams.db` in the store; warm = PLUR's own SQLite index left from the previous run.
- check: `python -m plur_desk check STORE` to exit, cold (no cache) and warm.
Times are medians with [min-max] over the rounds. Stores are made by the real PLUR (tests/node/make_store.mjs).
Beside the wall times, the CPU seconds each process used (ours: up to reviewable, all threads; PLUR: the whole
`list()` process): on a shared machine they move far less with the load than wall times do.
plur_desk runs as installed: its modules byte-compiled first (pip does this at install; a checkout does it on the
first run), even where PYTHONDONTWRITEBYTECODE is set, which would make every launch compile every module.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.node import NODE_DIR, plur_env, require_sqlite_index, run_node  # noqa: E402

PROBE = r"""
import json, os, resource, sys, time
from plur_desk.ui.app import open_window

# peak memory of our worker processes only (not keyring's probes): bench/worker_peaks.py
from bench.worker_peaks import track_parse_workers, workers_peak_mb
track_parse_workers()

store = sys.argv[1]
marks, gaps = {}, []
win = open_window(store, "Bench", demo=False)  # what `plur-desk STORE --reviewer Bench` does before its event loop
from PySide6.QtCore import QElapsedTimer, QTimer, Qt
from PySide6.QtWidgets import QApplication

app = QApplication.instance()
QTimer.singleShot(0, lambda: marks.setdefault("window", time.time()))
win.store_opened.connect(lambda: marks.setdefault("loaded", time.time()))
clock, last = QElapsedTimer(), [0.0]
clock.start()

def tick():
    now = clock.nsecsElapsed() / 1e6
    if "reviewable" in marks and "loaded" not in marks:
        gaps.append(now - last[0] - 10)
    last[0] = now
    if "rows" not in marks and win.drafts.model.rowCount():
        marks["rows"] = time.time()
    if ("reviewable" not in marks and win.drafts.current() is not None and win.qactions["review.approve"].isEnabled()
            and win.drafts.detail.toPlainText().strip()):
        marks["reviewable"] = time.time()
        usage = resource.getrusage(resource.RUSAGE_SELF)
        marks["cpu_reviewable"] = usage.ru_utime + usage.ru_stime
    session = win.session
    if "loaded" in marks and session is not None and session.history.loaded and win.jobs.pending("session") == 0:
        usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        kids = workers_peak_mb()
        gaps.sort()
        print(json.dumps({**marks, "max_stall_ms": gaps[-1] if gaps else 0.0,
                          "p99_stall_ms": gaps[int(len(gaps) * 0.99)] if gaps else 0.0,
                          "rss_mb": usage, "worker_rss_mb": kids}), flush=True)
        os._exit(0)  # background index/embedding work is not part of this measurement

timer = QTimer()
timer.setTimerType(Qt.TimerType.PreciseTimer)
timer.timeout.connect(tick)
timer.start(10)
app.exec()
"""


def _env(work: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["XDG_CACHE_HOME"], env["XDG_CONFIG_HOME"] = str(work / "cache"), str(work / "config")
    env["PYTHONPATH"] = str(ROOT)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: the byte code compiled once (see compile_package)
    return env


def run_alone(cmd: list[str], *, timeout: float, **kwargs: object) -> subprocess.CompletedProcess[str]:
    """`subprocess.run(cmd, capture_output=True, text=True, check=True)` in a process group of its own, ended
    whole once the command exits: a probe leaves the window with `os._exit`, and the processes the window started
    (the embedding worker, at 1,000 engrams started before "loaded") would go on for seconds at a whole core, under
    the next runs of this bench."""
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        **kwargs,  # type: ignore[call-overload]
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # what is left of the group this run started (its own id)
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, cmd, out, err)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def compile_package() -> None:
    """Byte-compile plur_desk as pip does at install time (into its __pycache__ folders, which git ignores)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "plur_desk")], check=True)


def ours(store: Path, work: Path) -> dict:
    t0 = time.time()
    proc = run_alone([sys.executable, "-c", PROBE, str(store), str(work)], env=_env(work), timeout=900)
    marks = json.loads(proc.stdout.strip().splitlines()[-1])
    out = {k: marks[k] - t0 for k in ("window", "rows", "reviewable", "loaded") if k in marks}
    keep = ("cpu_reviewable", "max_stall_ms", "p99_stall_ms", "rss_mb", "worker_rss_mb")
    return {**out, **{k: marks[k] for k in keep}}


def check(store: Path, work: Path) -> float:
    t0 = time.time()
    subprocess.run(
        [sys.executable, "-m", "plur_desk", "check", str(store)], capture_output=True, env=_env(work), timeout=900
    )
    return time.time() - t0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def plur_list(store: Path, home: Path) -> dict:
    t0, cpu0 = time.time(), _children_cpu()
    proc = subprocess.run(
        ["node", str(NODE_DIR / "bench_plur.mjs")],
        input=json.dumps({"op": "list"}),
        capture_output=True,
        text=True,
        env=plur_env(store, home),
        cwd=NODE_DIR,
        timeout=900,
        check=True,
    )
    return {"seconds": time.time() - t0, "cpu": _children_cpu() - cpu0, **json.loads(proc.stdout)}


def make_store(n: int, stores: Path) -> Path:
    store = stores / f"s{n}"
    if not (store / "engrams.yaml").exists():
        home = stores / "home"
        home.mkdir(parents=True, exist_ok=True)
        run_node("make_store.mjs", payload={"n": n, "drafts_ratio": 0.08}, env=plur_env(store, home), timeout=1800)
    return store


def bench_size(n: int, stores: Path, rounds: int, warm_only: bool = False) -> dict:
    template = make_store(n, stores)
    runs: dict[str, list] = {}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="plur-launch-") as tmp:
        work, store = Path(tmp), Path(tmp) / "store"
        shutil.copytree(template, store, ignore=shutil.ignore_patterns("engrams.db*"))
        if warm_only:  # a first run of each leaves its cache (ours) and its SQLite index (PLUR's), not counted
            ours(store, work)
            plur_list(store, work / "home")
        for _ in range(rounds if not warm_only else 0):
            shutil.rmtree(work / "cache", ignore_errors=True)
            for name in ("engrams.db", "engrams.db-wal", "engrams.db-shm"):
                (store / name).unlink(missing_ok=True)
            runs.setdefault("ours_cold", []).append(ours(store, work))
            runs.setdefault("plur_cold", []).append(plur_list(store, work / "home"))
            runs.setdefault("ours_warm", []).append(ours(store, work))
            runs.setdefault("plur_warm", []).append(plur_list(store, work / "home"))
            shutil.rmtree(work / "cache", ignore_errors=True)
            runs.setdefault("check_cold", []).append(check(store, work))
            runs.setdefault("check_warm", []).append(check(store, work))
        for _ in range(rounds if warm_only else 0):
            runs.setdefault("ours_warm", []).append(ours(store, work))
            runs.setdefault("plur_warm", []).append(plur_list(store, work / "home"))
    load = (load_before, os.getloadavg()[0])
    return {"n": n, "mb": (template / "engrams.yaml").stat().st_size / 1e6, "runs": runs, "load": load}


def _stat(values: list[float]) -> str:
    if not values:
        return "n/a"
    if len(values) == 1:
        return f"{values[0]:.2f} s"
    return f"{statistics.median(values):.2f} s [{min(values):.2f}–{max(values):.2f}]"


def table(results: list[dict], rounds: int) -> str:
    lines = [
        f"From launch, real window under Xvfb, {os.cpu_count()} cores, medians [min–max] of {rounds} alternating "
        f"rounds (load average at the end: {os.getloadavg()[0]:.1f})",
        "",
        "| store | state | window shown | drafts listed | **reviewable** | everything loaded | PLUR launch → `list()` "
        "| reviewable / PLUR | loaded / PLUR | max GUI stall while loading | peak RSS (window + largest worker) "
        "| PLUR peak RSS |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        for state in (s for s in ("cold", "warm") if f"ours_{s}" in r["runs"]):
            ours_runs, plur_runs = r["runs"][f"ours_{state}"], r["runs"][f"plur_{state}"]
            reviewable = [x["reviewable"] for x in ours_runs]
            plur_s = [x["seconds"] for x in plur_runs]
            ratio = statistics.median(reviewable) / statistics.median(plur_s)
            loaded = statistics.median(x["loaded"] for x in ours_runs) / statistics.median(plur_s)
            lines.append(
                f"| {r['n']:,} ({r['mb']:.0f} MB) | {state} | {_stat([x['window'] for x in ours_runs])} | "
                f"{_stat([x['rows'] for x in ours_runs])} | **{_stat(reviewable)}** | "
                f"{_stat([x['loaded'] for x in ours_runs])} | {_stat(plur_s)} | {ratio:.2f}× | {loaded:.2f}× | "
                f"{statistics.median(x['max_stall_ms'] for x in ours_runs):.0f} ms | "
                f"{max(x['rss_mb'] for x in ours_runs):.0f} + {max(x['worker_rss_mb'] for x in ours_runs):.0f} MB | "
                f"{max(x['max_rss_mb'] for x in plur_runs):.0f} MB |"
            )
    lines += [
        "",
        "CPU seconds used (all threads; they move far less with the machine's load than wall times):",
        "",
        "| store | state | plur_desk, launch → reviewable | PLUR, whole `list()` process | ours / PLUR | load average "
        "(start → end of this size) |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        for state in (s for s in ("cold", "warm") if f"ours_{s}" in r["runs"]):
            ours_cpu = [x["cpu_reviewable"] for x in r["runs"][f"ours_{state}"]]
            plur_cpu = [x["cpu"] for x in r["runs"][f"plur_{state}"]]
            ratio = statistics.median(ours_cpu) / statistics.median(plur_cpu)
            lines.append(
                f"| {r['n']:,} | {state} | {_stat(ours_cpu)} | {_stat(plur_cpu)} | {ratio:.2f}× | "
                f"{r['load'][0]:.1f} → {r['load'][1]:.1f} |"
            )
    checked = [r for r in results if "check_cold" in r["runs"]]  # none with --warm-only
    lines += (
        [
            "",
            "| store | `plur-desk check` cold | PLUR `list()` cold | check warm (parse cache) | PLUR `list()` warm |",
            "|---|---|---|---|---|",
        ]
        if checked
        else []
    )
    for r in checked:
        runs = r["runs"]
        lines.append(
            f"| {r['n']:,} | {_stat(runs['check_cold'])} | {_stat([x['seconds'] for x in runs['plur_cold']])} | "
            f"{_stat(runs['check_warm'])} | {_stat([x['seconds'] for x in runs['plur_warm']])} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--stores", type=Path, default=ROOT / "bench" / "out" / "stores")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "launch.md")
    parser.add_argument(
        "--warm-only",
        action="store_true",
        help="only warm launches, ours alternating with PLUR's (more rounds per minute)",
    )
    args = parser.parse_args()
    require_sqlite_index()  # the warm PLUR figures are with its SQLite index
    compile_package()
    results = []
    for n in (int(x) for x in args.sizes.split(",")):
        results.append(bench_size(n, args.stores, args.rounds, args.warm_only))
        print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    text = table(results, args.rounds)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
