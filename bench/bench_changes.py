"""Cost of the watched baseline and of finding agent changes at 50,000 engrams with 500 agent changes.

    python bench/bench_changes.py [--engrams 50000] [--changes 500] [--store DIR]

With --store the store, the bench reviewer's key and the caches are kept in DIR, and a later run reuses them (it
measures without building the store again).

The store is written by the real PLUR (tests/node/make_store.mjs); watching starts (`plur-desk changes --start`),
then PLUR's own loadEngrams/saveEngrams apply the agent changes (promotions, rewrites, retirements, pins). Times a
warm open, reading and verifying the baseline, detection, and `plur-desk changes --json` beside `plur-desk check
--json` and PLUR's `list()`. Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from plur_desk.app.changes.baseline_read import read_baseline  # noqa: E402
from plur_desk.app.review.bootstrap import open_session  # noqa: E402
from plur_desk.app.review.reviewer import READER  # noqa: E402
from plur_desk.app.trust.verifier import TrustChecker  # noqa: E402
from plur_desk.store import baseline  # noqa: E402

from support.node import plur_env, run_node  # noqa: E402

CPU: dict[str, list[float]] = {}  # the commands' CPU seconds (user + system), which the machine's load hardly moves


def _cli(store: Path, *args: str) -> tuple[float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "plur_desk", *args, str(store), "--json"], capture_output=True)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    CPU.setdefault(args[0], []).append(used)
    return seconds, proc.returncode


def _span(values: list[float]) -> str:
    return f"{min(values):.3f} s (worst {max(values):.3f} s)"


def _build(store: Path, env: dict[str, str], ns: argparse.Namespace, rows: list[tuple[str, str]]) -> int:
    """The store written by PLUR, watched, then changed by PLUR's own load and save; returns the changes made."""
    payload = {"n": ns.engrams, "drafts_ratio": 0.08, "tensions": 500, "rng": "mulberry32"}
    run_node("make_store.mjs", payload=payload, env=env, timeout=1800)
    open_session(store, READER)  # fills the parse cache: the opens below are warm
    start = time.perf_counter()
    writer = open_session(store, "Bench Reviewer", load_history=False)
    writer.watch.start()
    rows.append(("start watching (open + snapshot + sign)", f"{time.perf_counter() - start:.2f} s"))
    ids = sorted(writer.engrams_by_id())
    active = [i for i in ids if writer.engram(i)["status"] == "active"]  # type: ignore[index]
    drafts = [i for i in active if writer.engram(i)["commitment"] == "draft"]  # type: ignore[index]
    decided = [i for i in active if i not in set(drafts)]
    quarter = ns.changes // 4
    changes = [{"id": i, "fields": {"commitment": "decided"}} for i in drafts[:quarter]]
    changes += [
        {"id": i, "fields": {"statement": f"Rewritten by an agent, number {n}"}}
        for n, i in enumerate(decided[:quarter])
    ]
    changes += [{"id": i, "fields": {"status": "retired"}} for i in decided[quarter : 2 * quarter]]
    changes += [
        {"id": i, "fields": {"pinned": True}} for i in decided[2 * quarter : 2 * quarter + ns.changes - 3 * quarter]
    ]
    run_node("bench_plur.mjs", payload={"op": "mutate", "changes": changes}, env=env, timeout=900)
    return len(changes)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--engrams", type=int, default=50_000)
    parser.add_argument("--changes", type=int, default=500)
    parser.add_argument("--store", type=Path, help="keep the store (and its key and caches) here; reused when there")
    ns = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = ns.store.resolve() if ns.store else Path(tmp)
        os.environ["XDG_DATA_HOME"] = str(work / "data")  # the bench reviewer's key stays in the work folder
        os.environ["XDG_CACHE_HOME"] = str(work / "cache")
        os.environ["XDG_CONFIG_HOME"] = str(work / "config")  # and the trust file naming it
        store, home = work / "store", work / "home"
        env = plur_env(store, home)
        rows: list[tuple[str, str]] = []
        made = ns.changes if (store / "engrams.yaml").exists() else _build(store, env, ns, rows)
        rows.append(("baseline file", f"{baseline.path_of(store).stat().st_size / 1e6:.1f} MB"))
        _measure(store, env, rows, made)


def _measure(store: Path, env: dict[str, str], rows: list[tuple[str, str]], made: int) -> None:
    opens, reads, detects, whole, cold, whole_cpu = [], [], [], [], [], []
    for _run in range(3):  # the machine is shared: the best and the worst of three
        start = time.perf_counter()
        session = open_session(store, READER)
        opens.append(time.perf_counter() - start)
        start = time.perf_counter()
        read = session.watch.read()
        reads.append(time.perf_counter() - start)
        start = time.perf_counter()
        found = session.watch.changes()
        detects.append(time.perf_counter() - start)
        session.watch._stamp = None  # the open's whole cost: read (the kept reading), detect
        start, cpu = time.perf_counter(), time.process_time()
        session.watch.changes()
        whole.append(time.perf_counter() - start)
        whole_cpu.append(time.process_time() - cpu)
        start = time.perf_counter()
        read_baseline(store, TrustChecker(store))  # without the kept reading: every line verified and unpacked
        cold.append(time.perf_counter() - start)
    rows.append(("warm open (no detection)", _span(opens)))
    rows.append((f"read + verify the baseline ({read.lines} lines)", _span(reads)))
    rows.append((f"detect, baseline read ({len(found)} changes)", _span(detects)))
    rows.append(("detection added to a warm open (kept reading + detect)", _span(whole)))
    rows.append(("the same, CPU of this process", _span(whole_cpu)))
    rows.append(("read + verify without the kept reading", _span(cold)))
    from plur_desk.app.changes.changes_fast import watched_table
    from plur_desk.infra.paths import cache_dir
    from plur_desk.store.lists.parse_cache import cache_path

    watched_table(cache_path(cache_dir(), store.resolve())).unlink(missing_ok=True)
    seconds, code = _cli(store, "changes")
    rows.append(("plur-desk changes --json, no watched table yet (its first run)", f"{seconds:.2f} s (exit {code})"))
    timed: dict[str, list[float]] = {"changes": [], "check": []}
    for name in ("changes", "check") * 3:  # side by side, alternating, so the machine's load falls on both alike
        seconds, code = _cli(store, name)
        timed[name].append(seconds)
        rows.append((f"plur-desk {name} --json", f"{seconds:.2f} s (exit {code})"))
    for name, values in timed.items():
        rows.append((f"plur-desk {name} --json, best (worst) of 3", _span(values)))
        cpu = CPU[name][-3:]
        rows.append((f"plur-desk {name} --json, CPU (user + system)", f"{min(cpu):.2f} s (worst {max(cpu):.2f} s)"))
    rows.append(("plur-desk changes --json, CPU of its first run (no table)", f"{CPU['changes'][0]:.2f} s"))
    listed = run_node("bench_plur.mjs", payload={"op": "list"}, env=env, timeout=900)
    rows.append(("PLUR list()", f"{listed['seconds']:.2f} s ({listed['count']} active)"))  # type: ignore[index]
    rows.append(("PLUR list(), CPU of the whole node process", f"{listed['cpu_seconds']:.2f} s"))  # type: ignore[index]
    width = max(len(r[0]) for r in rows)
    print(f"{len(session.engrams_by_id())} engrams, {made} agent changes")
    for label, value in rows:
        print(f"  {label:<{width}}  {value}")
    kinds: dict[str, int] = {}
    for change in found:
        kinds[change.kind] = kinds.get(change.kind, 0) + 1
    print("  kinds: " + json.dumps(kinds))


if __name__ == "__main__":
    main()
