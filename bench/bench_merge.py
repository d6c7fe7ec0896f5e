"""The team merge driver at scale: time to merge engrams.yaml when both machines changed a few records.

    python bench/bench_merge.py [--sizes 1000 10000 50000] [--changed 0.002]

PLUR's sync runs every git call with a 30 s timeout, and the driver runs inside `git pull --rebase`, so a merge
must stay well under that. Both sides change a fraction of the records (approvals on one, retirements on the
other); the base is also passed as the remote-tracking version, as the driver does.
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from plur_desk.store.lists.yaml_dump import dump_engrams_document
from plur_desk.store.team.merge import merge_engram_files


def _engram(i: int) -> dict[str, object]:
    stamp = "2026-11-01T10:00:00.000Z"
    return {
        "id": f"ENG-2026-11-{1 + i % 28:02d}-{i:05d}",
        "version": 2,
        "status": "active",
        "type": "behavioral",
        "scope": "project:team",
        "visibility": "public",
        "created_at": stamp,
        "updated_at": stamp,
        "statement": f"Statement number {i} about the build cache and the deploy freeze",
        "tags": ["ci", "deploy"],
        "activation": {"retrieval_strength": 0.7, "storage_strength": 1, "frequency": 0, "last_accessed": "2026-11-01"},
        "associations": [],
        "feedback_signals": {"positive": 0, "negative": 0, "neutral": 0},
        "content_hash": f"{i:064d}",
        "commitment": "draft",
        "write_count": 1,
        "injection_count": 0,
        "sources": [{"scope": "project:team", "session_id": None, "stored_at": stamp}],
        "engram_version": 1,
        "episode_ids": [],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 50000])
    parser.add_argument("--changed", type=float, default=0.002, help="fraction of records each side changes")
    args = parser.parse_args()
    print("| engrams | file | changed per side | merge |")
    print("|---|---|---|---|")
    for n in args.sizes:
        base = [_engram(i) for i in range(n)]
        ours, theirs = copy.deepcopy(base), copy.deepcopy(base)
        step = max(1, int(1 / args.changed))
        for i in range(0, n, step):
            ours[i].update(commitment="decided", updated_at="2026-12-01T10:00:00.000Z")
        for i in range(step // 2, n, step):
            theirs[i].update(status="retired", updated_at="2026-12-01T11:00:00.000Z")
        files = [dump_engrams_document({"engrams": x}).encode() for x in (base, ours, theirs)]
        start = time.perf_counter()
        merge_engram_files(files[0], files[1], files[2], (files[0],))
        took = time.perf_counter() - start
        print(f"| {n:,} | {len(files[0]) / 1e6:.1f} MB | {len(range(0, n, step))} | {took:.2f} s |")


if __name__ == "__main__":
    main()
