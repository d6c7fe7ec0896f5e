"""How each cost grows from 1,000 to 100,000 engrams, side by side with the real PLUR, with the growth per 10x.

    python bench/bench_growth.py [--sizes 1000,10000,50000,100000] [--rounds 2] [--stores DIR]
        [--out bench/results/growth.md] [--only approve]

Stores are made once by the real PLUR (tests/node/make_store.mjs) under a stable folder in the temporary directory
(reruns reuse them) and copied for each round. Every figure is a fresh process timed from its launch to its result,
so imports count on both sides; medians over the rounds, ours and PLUR's alternating within each round:

- load cold / warm: `PlurStore.load` as the window runs it (drafts first, the rest in worker processes), with no
  parse cache / with the cache the cold run saved; "drafts" is when the drafts-first snapshot was ready.
- check cold / warm: `python -m plur_desk check STORE`, with no cache / with the cache of the previous run.
- approve: one draft approved through `ReviewSession` (lock, re-read, journal, fsync, signed history event), median
  of 5 in the process, after a warm load. `--only approve` measures this row alone (the cold load before it saves
  the parse cache), for comparing two checkouts quickly.
- reload after PLUR wrote: PLUR's own `saveEngrams` rewrote the file with 5 counters bumped; a fresh warm open.
- peak memory: the cold load process's VmHWM, and its largest worker; PLUR's peak RSS for `list()`.
- PLUR `list()` cold: a new `Plur` with no `engrams.db`; warm: with the SQLite index the cold run left.

The growth columns give the cost ratio for each 10x of engrams, (c2/c1)^(1/log10(n2/n1)) between neighbouring
sizes: 10 means linear, above 10 superlinear.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import shutil
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
import json, resource, sys, time
launched = float(sys.argv[4])
from pathlib import Path
from plur_desk.store.plur_store import PlurStore
mode, root, cache = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
out = {}
store = PlurStore(root, cache_dir=cache)
store.load(on_drafts=lambda _s: out.setdefault("drafts_s", time.time() - launched))
out["load_s"] = time.time() - launched
store.save_cache()
if mode == "approve":
    import statistics
    from plur_desk.app.review.session import ReviewSession
    from plur_desk.domain.commands import ApproveDrafts
    from plur_desk.domain.review import Reviewer
    session = ReviewSession(store, Reviewer("Bench"))
    times = []
    for row in session.queue.rows()[:5]:
        t = time.perf_counter(); session.execute(ApproveDrafts(tuple(session.writes.seen([row.id])))); times.append(time.perf_counter() - t)
    out["approve_s"] = statistics.median(times)
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1]
out["hwm_mb"] = int(hwm) / 1024
out["worker_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps(out))
"""


def _env(work: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(XDG_CACHE_HOME=str(work / "cache"), XDG_CONFIG_HOME=str(work / "config"), PYTHONPATH=str(ROOT))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: compiled modules are kept
    return env


def ours(mode: str, store: Path, work: Path) -> dict:
    launched = time.time()
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, mode, str(store), str(work / "cache" / "plur-desk"), repr(launched)],
        capture_output=True,
        text=True,
        env=_env(work),
        timeout=3600,
        check=True,
    )
    return json.loads(proc.stdout)


def check(store: Path, work: Path) -> float:
    launched = time.time()
    proc = subprocess.run(
        [sys.executable, "-m", "plur_desk", "check", str(store)], capture_output=True, env=_env(work), timeout=3600
    )
    assert proc.returncode == 0, proc.stdout[-2000:]
    return time.time() - launched


def plur(op: dict, store: Path, home: Path) -> dict:
    launched = time.time()
    proc = subprocess.run(
        ["node", str(NODE_DIR / "bench_plur.mjs")],
        input=json.dumps(op),
        capture_output=True,
        text=True,
        env=plur_env(store, home),
        cwd=NODE_DIR,
        timeout=3600,
        check=True,
    )
    return {"launch_s": time.time() - launched, **json.loads(proc.stdout)}


def make_store(n: int, stores: Path) -> Path:
    store = stores / f"s{n}"
    if not (store / "engrams.yaml").exists():
        home = stores / "home"
        home.mkdir(parents=True, exist_ok=True)
        run_node("make_store.mjs", payload={"n": n, "drafts_ratio": 0.08}, env=plur_env(store, home), timeout=3600)
    return store


def one_round(template: Path, work: Path, only: str = "") -> dict[str, float]:
    shutil.rmtree(work, ignore_errors=True)
    store, home = work / "store", work / "home"
    shutil.copytree(template, store, ignore=shutil.ignore_patterns("engrams.db*"))
    r: dict[str, float] = {}
    if only == "approve":
        ours("load", store, work)
        return {"approve": ours("approve", store, work)["approve_s"]}
    cold = ours("load", store, work)
    r.update(load_cold=cold["load_s"], drafts_cold=cold["drafts_s"], hwm=cold["hwm_mb"], worker=cold["worker_mb"])
    p = plur({"op": "list"}, store, home)
    r.update(plur_cold=p["launch_s"], plur_rss=p["max_rss_mb"])
    warm = ours("load", store, work)
    r.update(load_warm=warm["load_s"], drafts_warm=warm["drafts_s"])
    r["plur_warm"] = plur({"op": "list"}, store, home)["launch_s"]
    shutil.rmtree(work / "cache", ignore_errors=True)
    r["check_cold"] = check(store, work)
    r["check_warm"] = check(store, work)
    r["approve"] = ours("approve", store, work)["approve_s"]
    plur({"op": "bump", "n": 5}, store, home)
    r["reload"] = ours("load", store, work)["load_s"]
    return r


ROWS = [
    ("load, cold (launch → all parsed)", "load_cold", "s"),
    ("drafts-first, cold", "drafts_cold", "s"),
    ("load, warm (parse cache)", "load_warm", "s"),
    ("drafts-first, warm", "drafts_warm", "s"),
    ("PLUR `list()`, cold (launch → result)", "plur_cold", "s"),
    ("PLUR `list()`, warm (its SQLite index)", "plur_warm", "s"),
    ("`plur-desk check`, cold", "check_cold", "s"),
    ("`plur-desk check`, warm", "check_warm", "s"),
    ("approve one draft (in the session)", "approve", "ms"),
    ("reload after PLUR rewrote the file", "reload", "s"),
    ("peak memory, cold load (VmHWM)", "hwm", "MB"),
    ("largest parse worker", "worker", "MB"),
    ("PLUR peak RSS, `list()` cold", "plur_rss", "MB"),
]


def table(results: dict[int, list[dict[str, float]]], rounds: int) -> str:
    sizes = sorted(results)
    med = {n: {k: statistics.median(r[k] for r in results[n]) for k in results[n][0]} for n in sizes}
    spread = {
        n: {k: (min(r[k] for r in results[n]), max(r[k] for r in results[n])) for k in results[n][0]} for n in sizes
    }
    head = " | ".join(f"{n:,}" for n in sizes)
    steps = list(itertools.pairwise(sizes))
    growth = " | ".join(f"per 10x {a // 1000}k→{b // 1000}k" for a, b in steps)
    lines = [
        f"Medians [min–max] of {rounds} rounds, fresh processes from launch, {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.1f} at the end ({time.strftime('%Y-%m-%d %H:%M')})",
        "",
        f"| cost | {head} | {growth} |",
        "|---|" + "---|" * (len(sizes) + len(steps)),
    ]
    for label, key, unit in ROWS:
        if key not in med[sizes[0]]:
            continue
        scale = 1000 if unit == "ms" else 1
        cells = []
        for n in sizes:
            lo, hi = spread[n][key]
            value = med[n][key] * scale
            cells.append(f"{value:.2f} {unit}" if unit != "MB" else f"{value:.0f} MB")
            if rounds > 1 and unit != "MB":
                cells[-1] += f" [{lo * scale:.2f}–{hi * scale:.2f}]"
        ratios = []
        for a, b in steps:
            if med[a][key] > 0:
                ratios.append(f"{(med[b][key] / med[a][key]) ** (1 / math.log10(b / a)):.1f}×")
            else:
                ratios.append("n/a")
        lines.append(f"| {label} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,50000,100000")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--stores", type=Path, default=Path(tempfile.gettempdir()) / "plur-desk-bench" / "stores")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "growth.md")
    parser.add_argument("--only", choices=["approve"], default="", help="measure only this row")
    args = parser.parse_args()
    require_sqlite_index()  # the warm PLUR figures are with its SQLite index
    results: dict[int, list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="plur-growth-") as tmp:
        for n in (int(x) for x in args.sizes.split(",")):
            template = make_store(n, args.stores)
            for _ in range(args.rounds):
                results.setdefault(n, []).append(one_round(template, Path(tmp) / f"w{n}", args.only))
                print(json.dumps({"n": n, "load": os.getloadavg()[0], **results[n][-1]}), file=sys.stderr, flush=True)
    text = table(results, args.rounds)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
