"""The store-wide pair count of the conflict finder (`PairIndex.pairs`, the Conflicts pane's scan): peak memory and
CPU of this checkout's code and of an older revision's, alternated, on the same index.

    python bench/bench_pair_scan.py [--old REV] [--rounds 2] SOURCE...

SOURCE is `store:PATH` (the active engrams of a store, as the finder takes them), `realistic:N` (bench_conflicts'
services x facts x values statements) or `labelled` (the statements of tests/data/contradiction_pairs.jsonl).
Each source's index is built once and kept in --work; each figure is a fresh process that loads it: the peak over
what was held before the count under tracemalloc, and in another process (no tracemalloc) the rise of the peak
RSS (VmHWM, reset through /proc/self/clear_refs) and the CPU seconds of the call. The result's digest shows both
revisions return the same pairs in the same order. A third process runs the count in a thread and measures the
longest a 5 ms sleep loop on the main thread waits past its 5 ms (the interpreter lock held by the count: a
stall of the window when the count runs behind it), at the window's 1 ms switch interval.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's plur_desk, not the one installed

CHILD = r"""
import hashlib, importlib.util, json, sys, time, tracemalloc
import numpy as np
path, module_file, mode = sys.argv[1:4]
spec = importlib.util.spec_from_file_location("pairs_under_test", module_file)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
data = np.load(path)
index = module.PairIndex.__new__(module.PairIndex)
index.max_df, index.budget, index.size = 300, module.PAIR_BUDGET, int(data["size"])
index.key_counts, index._docs, index._starts = data["key_counts"], data["docs"], data["starts"]
index.ids = dict.fromkeys(range(int(data["keys"])), 0)
del data

def vm(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) * 1024
out = {}
if mode == "trace":
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    result = index.pairs()
    out["traced_peak"] = tracemalloc.get_traced_memory()[1] - before
    tracemalloc.stop()
elif mode == "gil":  # the longest the window's thread waits while the count runs in a thread beside it
    import threading
    sys.setswitchinterval(0.001)  # as the window sets it (ui/app.py)
    done = []
    worker = threading.Thread(target=lambda: done.append(index.pairs()))
    gaps, last = [], time.perf_counter()
    worker.start()
    while not gaps or worker.is_alive():
        time.sleep(0.005)
        now = time.perf_counter()
        gaps.append(now - last)
        last = now
    worker.join()
    result = done[0]
    out["max_gap_ms"] = max(gaps) * 1000 - 5
else:
    rss = vm("VmRSS:")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    cpu = time.process_time()
    result = index.pairs()
    out["cpu_s"] = time.process_time() - cpu
    out["rss_rise"] = vm("VmHWM:") - rss
digest = hashlib.sha256()
for part in result:
    digest.update(part.dtype.str.encode() + part.tobytes())
out["pairs"], out["digest"] = len(result[0]), digest.hexdigest()[:12]
print(json.dumps(out))
"""


def statements(source: str, work: Path) -> list[str]:
    if source == "labelled":
        rows = [json.loads(line) for line in (ROOT / "tests/data/contradiction_pairs.jsonl").read_text().splitlines()]
        return [row[side] for row in rows for side in ("a", "b")]
    kind, _, arg = source.partition(":")
    if kind == "realistic":
        sys.path.insert(0, str(ROOT / "bench"))
        from bench_conflicts import realistic_store

        store = work / f"realistic-{arg}"
        if not store.exists():
            realistic_store(store, int(arg))
        arg = str(store)
    from plur_desk.app.review.bootstrap import open_session

    session = open_session(Path(arg), "bench", load_history=False, use_cache=False)
    return [str(e.get("statement", "")) for e in session.all_engrams() if e.get("status") == "active"]


def built(source: str, work: Path) -> Path:
    import numpy as np

    from plur_desk.index.pairs import PairIndex, statement_keys

    path = work / (source.replace("/", "_").replace(":", "-") + ".npz")
    if not path.exists():
        index = PairIndex(statement_keys(s) for s in statements(source, work))
        np.savez(
            path,
            size=index.size,
            keys=len(index.ids),
            key_counts=index.key_counts,
            docs=index._docs,
            starts=index._starts,
        )
    return path


def measure(index: Path, module_file: Path) -> dict:
    out: dict = {}
    for mode in ("trace", "rss", "gil"):
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, str(index), str(module_file), mode], capture_output=True, text=True, cwd=ROOT
        )
        if proc.returncode != 0:
            return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else proc.returncode}
        out.update(json.loads(proc.stdout))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("sources", nargs="+")
    parser.add_argument("--old", default="mem", help="the revision compared with this checkout")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "plur-desk-pair-scan"))
    args = parser.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    old = work / "pairs_old.py"
    old.write_text(
        subprocess.run(
            ["git", "show", f"{args.old}:plur_desk/index/pairs.py"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    new = ROOT / "plur_desk/index/pairs.py"
    print(
        "| source | code | pairs | digest | tracemalloc peak | peak RSS rise | CPU | longest wait of another thread |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for source in args.sources:
        index = built(source, work)
        for _ in range(args.rounds):
            for label, module_file in ((args.old, old), ("this checkout", new)):
                r = measure(index, module_file)
                if "error" in r:
                    print(f"| {source} | {label} | failed: {r['error']} | | | | | |", flush=True)
                    continue
                print(
                    f"| {source} | {label} | {r['pairs']:,} | {r['digest']} | {r['traced_peak'] / 2**20:,.1f} MB | "
                    f"{r['rss_rise'] / 2**20:,.1f} MB | {r['cpu_s']:.2f} s | {r['max_gap_ms']:.0f} ms |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
