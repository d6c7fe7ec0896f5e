"""A/B of two checkouts' drafts-first open, the work the window's loading thread does before the first draft can be
shown (`open_session(drafts_first=True)` and `loading.before_first_draft`), warm parse cache, in fresh processes.

    python bench/bench_drafts_first.py OLD_CHECKOUT NEW_CHECKOUT ROUNDS STORE

CPU seconds move far less with a shared machine's load than the wall time of a whole launch does, and this part of
the launch runs alone on its thread, so an A/B of it shows differences of a few milliseconds that a launch's noise
hides. Each checkout gets its own copy of STORE and its own cache (filled by one full open first); the runs
alternate. Prints min and median of CPU and wall seconds, and the load.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CODE = r"""
import json, sys, time
from pathlib import Path
from plur_desk.app import bootstrap, loading

first = sys.argv[2] == "fill"
cpu, wall = time.process_time(), time.perf_counter()
session = bootstrap.open_session(
    Path(sys.argv[1]), "Bench", ask_unlock=lambda _m: False, drafts_first=not first, load_history=first, for_review=True
)
if not first:
    loading.before_first_draft(session)
print(json.dumps({"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall}))
"""


def run(root: Path, work: Path, mode: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(root), "XDG_CACHE_HOME": str(work / "cache")}
    env["XDG_CONFIG_HOME"] = str(work / "config")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    proc = subprocess.run(
        [sys.executable, "-c", CODE, str(work / "store"), mode],
        capture_output=True,
        text=True,
        env=env,
        cwd=work,  # not a checkout: `python -c` puts the current folder first on sys.path
        timeout=600,
        check=True,
    )
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    old, new, rounds, store = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
    checkouts = {"before": old, "after": new}
    base = Path(tempfile.mkdtemp(prefix="plur-drafts-first-"))
    for name, root in checkouts.items():
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "plur_desk")], check=True)
        shutil.copytree(store, base / name / "store", ignore=shutil.ignore_patterns("engrams.db*"))
        run(root, base / name, "fill")
    results: dict[str, list[dict[str, float]]] = {name: [] for name in checkouts}
    loads = [os.getloadavg()[0]]
    for index in range(rounds):
        for name in list(checkouts)[:: 1 if index % 2 == 0 else -1]:
            results[name].append(run(checkouts[name], base / name, "drafts"))
    loads.append(os.getloadavg()[0])
    for name, runs in results.items():
        cpu, wall = [r["cpu"] for r in runs], [r["wall"] for r in runs]
        print(
            f"{name:7s} CPU min {min(cpu):.3f} s median {statistics.median(cpu):.3f} s   "
            f"wall min {min(wall):.3f} s median {statistics.median(wall):.3f} s"
        )
    print(f"load average {loads[0]:.1f} -> {loads[1]:.1f}")
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
