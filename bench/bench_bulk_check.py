"""The contradiction check a bulk approval runs before its question: every selected draft checked against the finder
(`ConflictService.warnings_for`, what `conflicts_support.checker` runs on the read pool), headless.

    python bench/bench_bulk_check.py [--engrams 5000] [--drafts 500] [--rounds 3]

The store is bench_stall's (the real PLUR's make_store.mjs, every statement distinct), so a bulk of the window's
stall bench checks exactly these drafts. Prints the wall and CPU seconds of each round, and how many checks failed
(a check that raises fails the whole approval in the window: 'Contradiction check failed; ... was not approved').
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "bench")]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--engrams", type=int, default=5000)
    parser.add_argument("--drafts", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="bulk-check-")
    from bench_stall import template_store

    from plur_desk.app.conflicts.conflict_service import ConflictService
    from plur_desk.app.review.bootstrap import open_session

    from support.stores import copy_store

    store = copy_store(template_store(args.engrams, 0.2, "mulberry32"), Path(tempfile.mkdtemp()) / "store")
    session = open_session(store, "Bench Reviewer")
    service = ConflictService(session)
    service.rebuild()
    drafts = [e["id"] for e in session.all_engrams() if e.get("commitment") == "draft"][: args.drafts]
    walls, cpus = [], []
    for _ in range(args.rounds):
        failed, warned = 0, 0
        began, cpu = time.perf_counter(), time.process_time()
        for engram_id in drafts:
            try:
                warned += bool([w.text() for w in service.warnings_for(engram_id)])
            except Exception:  # counted: each is an approval the window could not check
                failed += 1
        walls.append(time.perf_counter() - began)
        cpus.append(time.process_time() - cpu)
        print(
            f"{len(drafts)} drafts checked: {walls[-1]:.2f} s wall, {cpus[-1]:.2f} s CPU; {warned} warned, "
            f"{failed} failed; load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
    print(
        f"median {statistics.median(walls):.2f} s wall, {statistics.median(cpus):.2f} s CPU "
        f"({statistics.median(cpus) / len(drafts) * 1000:.1f} ms a draft)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
