"""Search speed at 1k/10k/50k engrams, side by side with PLUR's `recall()` on the same store and queries.

    python bench/bench_search.py [--sizes 1000,10000,50000] [--out bench/results/search.md]

Measures: index build, incremental update of one engram (re-index + commit), BM25 query latency with filters
(p50/p95 over many queries), peak memory of the process, and PLUR's recall() per query.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.node import plur_env, run_node  # noqa: E402

QUERIES = [
    "deploy production",
    "build cache weekly",
    "database migration schema",
    "token rotates",
    "release notes review",
    "python lint format",
    "oncall alert threshold",
    "docker image tag pinned",
]
FILTERS = [
    "",
    " is:draft",
    " scope:project:web",
    " domain:dev -staging",
    " status:active type:procedural",
    " after:2026-06-01",
    " tag:ci",
    " is:expired",
]

PROBE = r"""
import json, resource, statistics, sys, time
from pathlib import Path
from plur_desk.app.search.store_search import SearchService
from plur_desk.app.review.session import ReviewSession
from plur_desk.domain.commands import EditStatement
from plur_desk.domain.review import Reviewer
from plur_desk.store.plur_store import PlurStore
root, cache = Path(sys.argv[1]), Path(sys.argv[2])
queries = json.loads(sys.argv[3])
store = PlurStore(root); store.load()
session = ReviewSession(store, Reviewer("bench"))
t = time.perf_counter()
service = SearchService(session, cache, embeddings=False)
built = service.sync()
build_s = time.perf_counter() - t
times = []
for _ in range(5):
    for q in queries:
        t = time.perf_counter(); service.search(q, 20); times.append(time.perf_counter() - t)
times.sort()
target = next(r.id for r in session.queue.rows())
updates = []
for i in range(5):
    session.execute(EditStatement(session.writes.seen([target])[0], f"Edited statement number {i} about the build cache"))
    t = time.perf_counter(); service.sync_ids([target]); updates.append(time.perf_counter() - t)
print(json.dumps({"docs": built, "build_s": build_s, "p50_ms": 1000 * statistics.median(times),
                  "p95_ms": 1000 * times[int(len(times) * 0.95) - 1], "queries": len(times),
                  "update_ms": 1000 * statistics.median(updates),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--plur-queries", type=int, default=3, help="recall() is slow at 50k: how many to time")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "search.md"))
    args = parser.parse_args()
    queries = [q + f for q in QUERIES for f in FILTERS]
    rows = [
        "| engrams | index build | incremental update of one engram | BM25 query with filters p50 / p95 "
        "(plur_desk, 320 queries) | PLUR `recall()` per query (median) | peak RSS plur_desk |",
        "|---|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory(prefix="plur-bench-search-") as tmp:
        for n in (int(x) for x in args.sizes.split(",")):
            store, home = Path(tmp) / f"s{n}", Path(tmp) / "home"
            home.mkdir(exist_ok=True)
            run_node("make_store.mjs", payload={"n": n, "drafts_ratio": 0.08}, env=plur_env(store, home), timeout=900)
            proc = subprocess.run(
                [sys.executable, "-c", PROBE, str(store), str(Path(tmp) / f"c{n}"), json.dumps(queries)],
                capture_output=True,
                text=True,
                check=True,
            )
            ours = json.loads(proc.stdout)
            theirs = run_node(
                "bench_plur.mjs",
                payload={"op": "recall", "queries": QUERIES[: args.plur_queries]},
                env=plur_env(store, home),
                timeout=1800,
            )
            print(json.dumps({"n": n, "ours": ours, "plur": theirs}), file=sys.stderr)
            rows.append(
                f"| {n:,} | {ours['build_s']:.2f} s | {ours['update_ms']:.1f} ms | "
                f"{ours['p50_ms']:.2f} ms / {ours['p95_ms']:.2f} ms | "
                f"{statistics.median(theirs['per_query']):.2f} s | {ours['peak_rss_mb']:.0f} MB |"
            )
    text = "\n".join(rows)
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
