"""Where the suite's CPU goes: a pytest plugin that writes, per test, its wall seconds and the CPU seconds of the
worker process (all its threads) and of the child processes it waited for, one TSV per worker, then a summary by
file with `--summary`.

    PYTHONPATH=bench python -m pytest -q -n 3 --dist loadfile -p pytest_cpu        # writes $PYTEST_CPU_DIR/*.tsv
    python bench/pytest_cpu.py --summary [--top 40]                                  # CPU by test file

PYTEST_CPU_DIR defaults to the system's temp folder's pytest-cpu/; remove it between runs. A process's CPU under load
is higher than on a quiet machine: compare runs taken at the same load.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import pytest

OUT = Path(os.environ.get("PYTEST_CPU_DIR", Path(tempfile.gettempdir()) / "pytest-cpu"))


def _cpu(who: int) -> float:
    used = resource.getrusage(who)
    return used.ru_utime + used.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):  # type: ignore[no-untyped-def]
    wall, own, children = time.monotonic(), _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    yield
    OUT.mkdir(parents=True, exist_ok=True)
    with (OUT / f"{os.getpid()}.tsv").open("a") as out:
        out.write(
            f"{item.nodeid}\t{time.monotonic() - wall:.2f}\t{_cpu(resource.RUSAGE_SELF) - own:.2f}\t"
            f"{_cpu(resource.RUSAGE_CHILDREN) - children:.2f}\n"
        )


def summary(top: int) -> None:
    by_file: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for tsv in OUT.glob("*.tsv"):
        for line in tsv.read_text().splitlines():
            nodeid, wall, own, children = line.split("\t")
            row = by_file[nodeid.split("::")[0]]
            row[0], row[1], row[2] = row[0] + float(wall), row[1] + float(own), row[2] + float(children)
    rows = sorted(by_file.items(), key=lambda kv: -(kv[1][1] + kv[1][2]))
    print(f"{'CPU s':>7} {'own':>6} {'child':>6} {'wall':>6}  file")
    for name, (wall, own, children) in rows[:top]:
        print(f"{own + children:7.1f} {own:6.1f} {children:6.1f} {wall:6.1f}  {name}")
    own = sum(r[1] for _, r in rows)
    children = sum(r[2] for _, r in rows)
    print(f"all {len(rows)} files: {own + children:.0f} CPU s ({own:.0f} in the workers, {children:.0f} in children)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--summary", action="store_true")
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    if not args.summary:
        sys.exit(__doc__)
    summary(args.top)
