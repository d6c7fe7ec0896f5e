"""A/B of two checkouts' warm launch, alternating in the same minutes: each runs its own bench_launch.py probe.

    python bench/bench_launch_ab.py OLD_CHECKOUT NEW_CHECKOUT ROUNDS STORE [cold]    (calls xvfb-run for each run)

Each checkout gets its own copy of STORE, its own cache (filled by one cold run first; with `cold`, removed before
every run) and config (a settings file naming the reviewer of the last run, as on a relaunch); both are
byte-compiled first and run from their own folder.
Prints the medians [min-max] of: window shown, reviewable, CPU to reviewable, everything loaded; and the load.
Then, per measure, the median of the round-by-round differences (after minus before, each round's two runs taken
in the same minute) and in how many rounds "after" was faster: on a shared machine the two runs of a round meet
the same load, so the paired difference moves far less than either median (whose ranges overlap by hundreds of ms).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_launch import run_alone


def probe_of(root: Path) -> str:
    text = (root / "bench" / "bench_launch.py").read_text()
    found = re.search(r'PROBE = r"""(.*?)"""', text, re.S)
    assert found is not None, f"no PROBE in {root}/bench/bench_launch.py"
    return found.group(1)


def run(root: Path, probe: str, work: Path) -> dict[str, float]:
    env = {**os.environ, "XDG_CACHE_HOME": str(work / "cache"), "XDG_CONFIG_HOME": str(work / "config")}
    env["PYTHONPATH"] = str(root)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    t0 = time.time()
    proc = run_alone(  # (the window's own background processes ended with the run: bench_launch.run_alone)
        ["xvfb-run", "-a", "-s", "-screen 0 1280x800x24", sys.executable, "-c", probe, str(work / "store"), str(work)],
        env=env,
        timeout=600,
        cwd=root,  # not this checkout: `python -c` puts the current folder first on sys.path
    )
    marks = json.loads(proc.stdout.strip().splitlines()[-1])
    keys = ("window", "reviewable", "loaded")
    return {**{k: marks[k] - t0 for k in keys}, "cpu": marks["cpu_reviewable"]}


def summary(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} [{min(values):.2f}-{max(values):.2f}]"


def paired(before: list[dict[str, float]], after: list[dict[str, float]], key: str) -> str:
    """The median of the rounds' differences in `key` (ms, after minus before) and the rounds after was faster."""
    diffs = [b[key] - a[key] for a, b in zip(before, after, strict=True)]
    return f"{key} {statistics.median(diffs) * 1000:+.0f} ms ({sum(d < 0 for d in diffs)}/{len(diffs)} faster)"


def main() -> None:
    old, new, rounds, store = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
    cold = sys.argv[5:] == ["cold"]
    checkouts = {"before": old, "after": new}
    probes = {name: probe_of(root) for name, root in checkouts.items()}
    base = Path(tempfile.mkdtemp(prefix="plur-launch-ab-"))
    for name, root in checkouts.items():
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "plur_desk")], check=True)
        shutil.copytree(store, base / name / "store", ignore=shutil.ignore_patterns("engrams.db*"))
        config = base / name / "config" / "plur-desk"
        config.mkdir(parents=True)
        (config / "settings.yaml").write_text("last_reviewer: Bench\n")
        run(root, probes[name], base / name)  # cold: fills the cache
    results: dict[str, list[dict[str, float]]] = {name: [] for name in checkouts}
    loads = [os.getloadavg()[0]]
    for index in range(rounds):
        for name in list(checkouts)[:: 1 if index % 2 == 0 else -1]:
            if cold:
                shutil.rmtree(base / name / "cache", ignore_errors=True)
            results[name].append(run(checkouts[name], probes[name], base / name))
    loads.append(os.getloadavg()[0])
    for name, runs in results.items():
        cols = {key: summary([r[key] for r in runs]) for key in ("window", "reviewable", "cpu", "loaded")}
        print(f"{name:7s} " + "  ".join(f"{key} {value}" for key, value in cols.items()))
    print(
        "paired  "
        + "  ".join(
            paired(results["before"], results["after"], key) for key in ("window", "reviewable", "cpu", "loaded")
        )
    )
    print(f"{'cold' if cold else 'warm'}, load average {loads[0]:.1f} -> {loads[1]:.1f}")
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
