"""What one append to a large history month costs plur_desk: the catch-up that reads the appended line (our own
appends and the window's poll after an agent's both go through it), and the digests checked on the way.

    python bench/bench_history_append.py [--lines 600000] [--rounds 7]

PLUR has no index to keep up to date: its append is one write, not timed here.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from plur_desk.app.history.history_index import HistoryIndex
from plur_desk.store.history.log import HistoryLog


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=600_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    line = json.dumps(
        {
            "event": "engram_updated",
            "engram_id": "ENG-1",
            "timestamp": "2026-12-01T00:00:00Z",
            "actor": {"asserted_by": "agent:codex"},
            "data": {"to": "x" * 120},
        }
    )
    with tempfile.TemporaryDirectory(prefix="plur-bench-append-") as tmp:
        root = Path(tmp)
        (root / "history").mkdir()
        path = root / "history" / "2026-12.jsonl"
        path.write_text((line + "\n") * args.lines)
        index = HistoryIndex(HistoryLog(root))
        start = time.perf_counter()
        index.load()
        load = time.perf_counter() - start
        times = []
        for _round in range(args.rounds):
            with open(path, "a") as handle:
                handle.write(line + "\n")
            start = time.perf_counter()
            index.add([])
            times.append(time.perf_counter() - start)
        size = path.stat().st_size >> 20
    ms = ", ".join(f"{t * 1000:.1f}" for t in times)
    print(f"month of {args.lines:,} lines ({size} MB): load {load:.2f} s; per append median")
    print(f"{statistics.median(times) * 1000:.1f} ms ({ms}); load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
