"""`plur-desk check` on a store whose one entry is huge (the rest normal): time and peak memory.

    python bench/bench_oversized_entry.py [--mib 1024]

Before the per-entry limit, a 1 GiB entry took 150 s and 7.4 GB. Now the entry is refused unparsed (above
MAX_ENTRY_BYTES) and the file is held once in memory: 1 GiB took 17 s and 1.0 GiB peak RSS on the shared 2-core
build machine (the byte scans that cut the file into entries remain).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROBE = r"""
import resource, sys, time
from pathlib import Path
from plur_desk.app.check import run_check
t0 = time.perf_counter()
report = run_check(Path(sys.argv[1]))
took = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
reasons = [i["reason"] for i in report.invalid if "limit" in str(i["reason"])]
print(f"check: exit {report.exit_code}, {took:.1f} s, peak RSS {peak:.0f} MiB; {reasons}")
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=1024)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with open(root / "engrams.yaml", "wb") as out:
            out.write(b"engrams:\n  - id: ENG-2026-12-01-001\n    statement: Small one\n")
            out.write(b"  - id: ENG-2026-12-01-002\n    statement: ")
            chunk = b"word " * (1 << 18)
            for _ in range(args.mib * (1 << 20) // len(chunk)):
                out.write(chunk)
            out.write(b"\n    status: active\n")
        size = (root / "engrams.yaml").stat().st_size
        print(f"engrams.yaml: {size / (1 << 20):.0f} MiB")
        subprocess.run([sys.executable, "-c", PROBE, str(root)], check=True, env={"PYTHONPATH": str(ROOT)})


if __name__ == "__main__":
    main()
