"""`plur-desk sync` at scale: two clones of one store, each with a few decisions, synced one after the other.

    python bench/bench_team_sync.py [--sizes 10000 50000]

Times the second clone's sync (fetch, merge through the driver, re-apply local records, push) and the first
clone's catch-up, on stores written by the js-yaml port (byte-identical to PLUR's own output).
"""

from __future__ import annotations

import argparse
import copy
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_merge import _engram

from plur_desk.app.team.sync import run_sync
from plur_desk.store.lists.yaml_dump import dump_engrams_document


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _clone(base: Path, remote: Path, name: str) -> Path:
    store = base / name
    git(base, "clone", "-q", str(remote), str(store))
    git(store, "config", "user.name", name)
    git(store, "config", "user.email", f"{name}@example.test")
    return store


def run(n: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        remote = base / "remote.git"
        git(base, "init", "-q", "--bare", "-b", "main", str(remote))
        seed = base / "seed"
        seed.mkdir()
        records = [_engram(i) for i in range(n)]
        (seed / "engrams.yaml").write_text(dump_engrams_document({"engrams": records}))
        (seed / "tensions.yaml").write_text("[]\n")
        git(seed, "init", "-q", "-b", "main")
        git(seed, "add", ".")
        git(seed, "-c", "user.name=s", "-c", "user.email=s@x", "commit", "-q", "-m", "seed")
        git(seed, "push", "-q", str(remote), "main")
        ann, bob = _clone(base, remote, "ann"), _clone(base, remote, "bob")
        for store, field, value, offset in ((ann, "commitment", "decided", 0), (bob, "status", "retired", 7)):
            changed = copy.deepcopy(records)
            for i in range(offset, n, max(1, n // 50)):
                changed[i][field] = value
                changed[i]["updated_at"] = "2026-12-02T10:00:00.000Z"
            (store / "engrams.yaml").write_text(dump_engrams_document({"engrams": changed}))
        assert run_sync(ann).error is None
        start = time.perf_counter()
        report = run_sync(bob)
        second = time.perf_counter() - start
        assert report.error is None and report.converged, report.to_text()
        start = time.perf_counter()
        assert run_sync(ann).converged
        return second, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 50000])
    args = parser.parse_args()
    print("| engrams | sync with a merge | catch-up sync |")
    print("|---|---|---|")
    for n in args.sizes:
        merged, caught_up = run(n)
        print(f"| {n:,} | {merged:.1f} s | {caught_up:.1f} s |")


if __name__ == "__main__":
    main()
