"""Peak memory of the real window on a large store: 50,000 engrams, a history of a million lines, every vector loaded.

    python bench/bench_memory.py [--engrams 50000] [--lines 1000000] [--rounds 1] [--trace]
        [--stores DIR] [--out bench/results/memory.md]

The store is made by the real PLUR (tests/node/make_store.mjs with `rng: "mulberry32"`, so every engram has its own
statement and content_hash, as `learn()` writes them); the history gets `--lines` more lines in PLUR 0.20's shape
(over the twelve months of 2025, beside the 2026 months PLUR wrote). "All vectors": the vector cache holds one
384-dimension vector per distinct content_hash before the window opens, as after a finished embedding run. They are
random unit vectors written in the embedding cache's own format (vectors.npz, float16): what they weigh in memory
does not depend on their values, and computing 50,000 real ones takes many minutes (see bench_embed.py).

Each run is a fresh process that starts the real window as `plur-desk` does (offscreen platform), opens the store
and waits until everything is loaded: engrams, history, the search index, the vectors, the scale view (writer ledger,
near-duplicate clusters, risk order) computed once, and the window's runners are idle. It then reads its own peak
resident size (VmHWM) and the largest peak of its worker processes (parse workers; a running embedding worker).
Cold = no parse cache and no search index (the vectors are there); warm = what the cold run left. With `--trace`,
a second warm run records tracemalloc's 25 largest allocation sites (slow; for finding where memory goes).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
# This checkout's plur_desk, as the probe uses: the vector cache's file name depends on the model it finds.
sys.path.insert(0, str(ROOT))

from support.node import plur_env, run_node  # noqa: E402

PROBE = r"""
import json, os, sys, time
from pathlib import Path
trace = sys.argv[3] == "trace"
if trace:
    import tracemalloc
    tracemalloc.start(8)
from PySide6.QtCore import QTimer
from plur_desk.app.settings import Settings, SettingsStore
from plur_desk.ui.app import make_application
from plur_desk.ui.main_window import MainWindow

# peak memory of our worker processes only (not keyring's probes): bench/worker_peaks.py
from bench.worker_peaks import track_parse_workers, workers_peak_mb
track_parse_workers()

def vm(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0

store, work = Path(sys.argv[1]), Path(sys.argv[2])
t0 = time.time()
app = make_application()
win = MainWindow(SettingsStore(work / "settings.yaml"), Settings(reviewer_name="Bench"), "Bench")
win.show()
marks = {}
win.store_opened.connect(lambda: marks.setdefault("loaded", time.time() - t0))
win.open_path(store)

def tick():
    session, service = win.session, win.finder.service
    if "loaded" not in marks or session is None or not session.history.loaded or not win.finder.is_ready:
        return
    if win.jobs.pending("session") or win.jobs.pending("index") or service is None:
        return
    if not service.vectors.vectors:
        return
    if win.scale.view is None or win.jobs.pending("scale"):  # the clusters and the writer ledger, computed after the load
        return
    out = {**marks, "idle": time.time() - t0, "vectors": len(service.vectors.vectors),
           "history_lines": len(session.history.lines), "engrams": len(session.store.engrams.entries),
           "clusters": len(win.scale.view.clusters()),
           "rss_mb": vm("VmRSS"), "hwm_mb": vm("VmHWM"),
           "children_mb": workers_peak_mb()}
    if trace:
        snap = tracemalloc.take_snapshot()
        out["traced_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
        out["top"] = [[str(s.traceback[0]), s.size / 2**20, s.count]
                      for s in snap.statistics("lineno")[:25]]
    print(json.dumps(out), flush=True)
    os._exit(0)

timer = QTimer()
timer.timeout.connect(tick)
timer.start(200)
app.exec()
"""

EVENTS = ("engram_created", "co_injection", "engram_updated", "feedback_received")


def make_store(n: int, lines: int, stores: Path) -> Path:
    store = stores / f"m{n}-{lines}"
    if (store / ".complete").exists():
        return store
    shutil.rmtree(store, ignore_errors=True)
    home = stores / "home"
    home.mkdir(parents=True, exist_ok=True)
    run_node(
        "make_store.mjs",
        payload={"n": n, "drafts_ratio": 0.08, "rng": "mulberry32"},
        env=plur_env(store, home),
        timeout=3600,
    )
    ids = re.findall(r"^  - id: (\S+)$", (store / "engrams.yaml").read_text(), re.M)
    rng = random.Random(1)
    per = lines // 12
    for month in range(1, 13):
        with open(store / "history" / f"2025-{month:02d}.jsonl", "w") as handle:
            for i in range(per):
                event = {
                    "event": rng.choice(EVENTS),
                    "engram_id": rng.choice(ids),
                    "timestamp": f"2025-{month:02d}-01T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}.000Z",
                    "data": {"type": "behavioral", "scope": rng.choice(["project:web", "project:api"])},
                    "actor": {"asserted_by": "agent:codex", "runtime": {"name": "plur-core"}},
                }
                handle.write(json.dumps(event, separators=(",", ":")) + "\n")
    (store / ".complete").write_text("")
    return store


def write_vectors(store: Path, cache_home: Path) -> int:
    """One random unit vector per distinct content_hash, where the window's vector cache reads them."""
    import hashlib

    import numpy as np

    from plur_desk.index.embeddings import vectors_file

    hashes = sorted(set(re.findall(r"^    content_hash: (\S+)$", (store / "engrams.yaml").read_text(), re.M)))
    rng = np.random.default_rng(1)
    matrix = rng.standard_normal((len(hashes), 384)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    digest = hashlib.sha256(str(store.resolve()).encode()).hexdigest()[:16]
    target = vectors_file(cache_home / "plur-desk" / "stores" / digest)
    target.parent.mkdir(parents=True, exist_ok=True)
    np.savez(target, keys=np.array(hashes).astype(str), vectors=matrix.astype(np.float16))
    return len(hashes)


def probe(store: Path, work: Path, trace: bool = False) -> dict:
    env = dict(os.environ)
    env.update(
        XDG_CACHE_HOME=str(work / "cache"),
        XDG_CONFIG_HOME=str(work / "config"),
        PYTHONPATH=str(ROOT),
        QT_QPA_PLATFORM="offscreen",
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: compiled modules are kept
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(store), str(work), "trace" if trace else "-"],
        capture_output=True,
        text=True,
        env=env,
        timeout=3600,
        check=True,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--engrams", type=int, default=50_000)
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--trace", action="store_true")
    parser.add_argument("--stores", type=Path, default=Path(tempfile.gettempdir()) / "plur-desk-bench" / "stores")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "memory.md")
    args = parser.parse_args()
    store = make_store(args.engrams, args.lines, args.stores)
    runs: list[tuple[str, dict]] = []
    with tempfile.TemporaryDirectory(prefix="plur-memory-") as tmp:
        work = Path(tmp)
        for _ in range(args.rounds):
            shutil.rmtree(work / "cache", ignore_errors=True)
            vectors = write_vectors(store, work / "cache")
            runs.append(("cold", probe(store, work)))
            runs.append(("warm", probe(store, work)))
            print(json.dumps(runs[-2:]), file=sys.stderr, flush=True)
        traced = probe(store, work, trace=True) if args.trace else None
    load = os.getloadavg()[0]
    lines = [
        f"Peak memory of the real window (offscreen), {time.strftime('%Y-%m-%d')}, load average {load:.1f}: "
        f"{args.engrams:,} engrams (every statement distinct), {vectors:,} vectors loaded, history "
        f"{runs[0][1]['history_lines']:,} lines",
        "",
        "| run | everything loaded and idle | vectors | history lines | **window peak (VmHWM)** | RSS at the end "
        "| largest worker process (parse, embedding) |",
        "|---|---|---|---|---|---|---|",
    ]
    for state, r in runs:
        lines.append(
            f"| {state} | {r['idle']:.1f} s | {r['vectors']:,} | {r['history_lines']:,} | **{r['hwm_mb']:.0f} MB** | "
            f"{r['rss_mb']:.0f} MB | {r['children_mb']:.0f} MB |"
        )
    if traced is not None:
        lines += ["", f"tracemalloc, warm run: peak traced {traced['traced_mb']:.0f} MB; largest sites:", ""]
        lines += ["| site | MB | blocks |", "|---|---|---|"]
        lines += [f"| `{site}` | {mb:.1f} | {count:,} |" for site, mb, count in traced["top"]]
    text = "\n".join(lines)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
