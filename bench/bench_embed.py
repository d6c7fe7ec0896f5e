"""Whole-store embedding throughput, as the window runs it: one separate process (plur_desk.index.embed_worker),
each distinct content_hash once, token-length-bucketed batches, one onnxruntime thread per core, vectors written in
parts as it goes (resumable).

    python bench/bench_embed.py STORE [--limit N]

Use a store where every engram has its own statement and content_hash (tests/node/make_store.mjs with
rng "mulberry32"; the default generator repeats about 225 statements, which makes embedding look free).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from plur_desk.index import embed_worker  # noqa: E402
from plur_desk.store.plur_store import PlurStore  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("store", type=Path)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--nice", type=int, default=5, help="the window runs it at 5; 0 to measure throughput alone")
    args = parser.parse_args()
    store = PlurStore(args.store)
    store.load()
    by_hash: dict[str, str] = {}
    for entry in store.engrams.entries:
        value = entry.value
        if entry.valid and isinstance(value, dict) and isinstance(value.get("content_hash"), str):
            by_hash.setdefault(str(value["content_hash"]), str(value.get("statement", "")))
    pairs = list(by_hash.items())[: args.limit or None]
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        proc = embed_worker.start(pairs, Path(tmp) / "parts", args.nice)
        first = None
        assert proc.stdout is not None
        for line in proc.stdout:
            first = first or (time.perf_counter() - t0, line.split()[0])
        _pid, _status, usage = os.wait4(proc.pid, 0)  # this child's own peak memory
        took = time.perf_counter() - t0
        parts = len(list((Path(tmp) / "parts").glob("part-*.npz")))
    out = {
        "engrams": len(store.engrams.entries),
        "distinct_content": len(pairs),
        "seconds": round(took, 1),
        "per_second": round(len(pairs) / took, 1),
        "first_part_s": round(first[0], 1) if first else None,
        "parts": parts,
        "nice": args.nice,
        "cores": os.cpu_count(),
        "load_avg": os.getloadavg()[0],
        "worker_peak_rss_mb": round(usage.ru_maxrss / 1024),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
