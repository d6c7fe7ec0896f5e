"""Store and review-session speed at 1k/10k/50k engrams, side by side with the real PLUR on the same stores.

    python bench/bench_store.py [--sizes 1000,10000,50000] [--out bench/results/store.md]

Stores are generated with @plur-ai/core itself (tests/node/make_store.mjs). Every plur_desk figure is taken in a
fresh process, so peak memory is that of one opening, not of the benchmark.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.node import plur_env, run_node  # noqa: E402

PROBE = r"""
import gc, json, resource, sys, time
from pathlib import Path
t0 = time.perf_counter()
from plur_desk.store.plur_store import PlurStore
from plur_desk.app.review.session import ReviewSession
from plur_desk.domain.review import Reviewer
mode, root, cache = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
out = {}
store = PlurStore(root, cache_dir=cache)
t_start = time.perf_counter()
def drafts_ready(snapshot):
    out["drafts_s"] = time.perf_counter() - t_start
    out["drafts"] = sum(1 for e in snapshot.entries if e.parsed and isinstance(e.value, dict)
                        and e.value.get("commitment") == "draft")
store.load(on_drafts=drafts_ready)
out["load_s"] = time.perf_counter() - t_start
session = ReviewSession(store, Reviewer("bench"))
out["queue_s"] = time.perf_counter() - t_start
rows = session.queue.rows()
out["queue_rows"] = len(rows)
if mode == "save":
    t = time.perf_counter(); store.save_cache(); out["save_cache_s"] = time.perf_counter() - t
if mode == "approve":
    from plur_desk.domain.commands import ApproveDrafts
    times = []
    for row in rows[:15]:
        t = time.perf_counter(); session.execute(ApproveDrafts(tuple(session.writes.seen([row.id])))); times.append(time.perf_counter() - t)
    out["approve_median_s"] = statistics.median(times) if (statistics := __import__("statistics")) else 0
    ids = [r.id for r in rows[15:515]]
    t = time.perf_counter(); session.execute(ApproveDrafts(tuple(session.writes.seen(ids)))); out["bulk_s"] = time.perf_counter() - t; out["bulk_n"] = len(ids)
out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def ours(mode: str, store: Path, cache: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, mode, str(store), str(cache)], capture_output=True, text=True, check=True
    )
    return json.loads(proc.stdout)


def theirs(op: dict, store: Path, home: Path) -> dict:
    return run_node("bench_plur.mjs", payload=op, env=plur_env(store, home), timeout=900)  # type: ignore[return-value]


def bench_size(n: int, work: Path) -> dict:
    store, home, cache = work / f"s{n}", work / "home", work / f"cache{n}"
    home.mkdir(exist_ok=True)
    made = run_node("make_store.mjs", payload={"n": n, "drafts_ratio": 0.08}, env=plur_env(store, home), timeout=900)
    size_mb = (store / "engrams.yaml").stat().st_size / 1e6
    r = {"n": n, "size_mb": size_mb, "drafts": made["drafts"]}
    r["first"] = ours("save", store, cache)  # no cache yet; saves it
    r["reopen"] = ours("open", store, cache)
    theirs({"op": "bump", "n": 5}, store, home)
    r["after_plur_rewrite"] = ours("open", store, cache)
    r["plur_list"] = theirs({"op": "list"}, store, home)
    approve_copy = work / f"a{n}"
    shutil.copytree(store, approve_copy)
    r["approve"] = ours("approve", approve_copy, work / f"cache-a{n}")
    draft_id = next(line.split(": ", 1)[1] for line in _draft_ids(store))
    r["plur_approve"] = theirs({"op": "approve", "id": draft_id}, store, home)
    return r


def _draft_ids(store: Path):
    current = None
    for line in (store / "engrams.yaml").read_text().splitlines():
        if line.startswith("  - id: "):
            current = line.strip()[2:]
        elif line == "    commitment: draft" and current:
            yield current


def table(results: list[dict]) -> str:
    rows = [
        "| engrams (file) | drafts reviewable, first open | everything loaded, first open | PLUR `list()` | "
        "reopen (cache) | reload after PLUR rewrote 5 engrams | approve one draft (median of 15, with fsync) | "
        "PLUR `getById`+`updateEngram` | bulk approve 500 | peak RSS plur_desk | peak RSS PLUR (list) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        rows.append(
            f"| {r['n']:,} ({r['size_mb']:.1f} MB) | {r['first']['drafts_s']:.2f} s | {r['first']['load_s']:.2f} s | "
            f"{r['plur_list']['seconds']:.2f} s | {r['reopen']['load_s']:.2f} s | "
            f"{r['after_plur_rewrite']['load_s']:.2f} s | {r['approve']['approve_median_s'] * 1000:.0f} ms | "
            f"{r['plur_approve']['seconds']:.2f} s | {r['approve']['bulk_s']:.2f} s ({r['approve']['bulk_n']}) | "
            f"{max(r['first']['peak_rss_mb'], r['approve']['peak_rss_mb']):.0f} MB | "
            f"{r['plur_list']['max_rss_mb']:.0f} MB |"
        )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "store.md"))
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="plur-bench-") as tmp:
        for n in (int(x) for x in args.sizes.split(",")):
            results.append(bench_size(n, Path(tmp)))
            print(json.dumps(results[-1]), file=sys.stderr)
    text = table(results)
    print(text)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n")


if __name__ == "__main__":
    main()
