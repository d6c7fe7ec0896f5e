"""Where one decision's time goes, from the session's `execute` to its signed event durable in history: each part of
the write timed (wall ms, and the calling thread's CPU ms), per decision, on a copy of a large store.

    python bench/bench_decision.py [--engrams 50000] [--history-lines 1000000] [--decisions 12] [--plur]

Headless (no window: bench_stall.py measures the window around it). The store is the real PLUR's
(tests/node/make_store.mjs, every statement distinct) with `--history-lines` events in PLUR 0.20's shape in the
months of 2025 (bench_stall.write_history), built under the system's temp folder and removed at the end. The first
decision of a session is reported apart (what it pays once), then the median and range of the others. `--plur` puts
the real PLUR's approve of one draft (`getById` + `updateEngram`, in Node) beside it, on the same store.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

FOLLOW = "plur_desk.app.changes.watch:ChangeWatch"
# The parts, in the order a decision runs them: (label, owner, attribute). Times are inclusive (a part that calls
# another part contains it); "rest" is the decision's total minus the top-level parts.
PARTS: list[tuple[str, str, str]] = [
    (
        "checks before the lock (seen, keys.yaml, signing setup)",
        "plur_desk.app.trust.session_signing:SessionSigning",
        "signed",
    ),
    ("engrams.yaml lock taken", "plur_desk.store.plur_store", "locked"),
    ("file re-read check (stat, reuse)", "plur_desk.store.plur_store:PlurStore", "_fresh"),
    ("edit applied (copy, validate, YAML item)", "plur_desk.store.plur_store:PlurStore", "_apply_edits"),
    ("history pre-flight (month file, chain mode)", "plur_desk.store.history.log:HistoryLog", "prepare"),
    ("new engrams.yaml staged (write, fsync, read back, hashes)", "plur_desk.store.plur_store", "stage_new_file"),
    (
        "journal record saved, then engrams.yaml renamed in",
        "plur_desk.store.plur_store:PlurStore",
        "_journal_and_replace",
    ),
    ("  of which the journal record saved (write, fsync, rename)", "plur_desk.store.journal:JournalRecord", "save"),
    ("new snapshot of the file", "plur_desk.store.lists.list_file:ListFile", "replaced"),
    ("history append (sign, chain, write, fsync)", "plur_desk.store.history.log:PreparedAppend", "commit"),
    ("journal record removed (unlink, dir fsync)", "plur_desk.store.journal:JournalRecord", "finish"),
    ("after: key registry, snapshot, history index", "plur_desk.app.review.writes:Writes", "changes"),
    ("after it is durable: the watched baseline follows (read, verify, sign, append)", FOLLOW, "follow"),
    (
        "**decision durable: its write returned (bench_stall's measure)**",
        "plur_desk.app.review.writes:Writes",
        "engrams",
    ),
]
NESTED = {"save", "engrams"}  # inside _journal_and_replace; the whole write (holds the parts above the follow)


class Clock:
    """Accumulates wall and thread-CPU ms per part for the decision under way."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = defaultdict(float)
        self.cpu: dict[str, float] = defaultdict(float)

    def reset(self) -> None:
        self.wall.clear()
        self.cpu.clear()

    def add(self, label: str, wall: float, cpu: float) -> None:
        self.wall[label] += wall * 1000
        self.cpu[label] += cpu * 1000


def instrument(clock: Clock) -> None:
    import importlib

    for label, owner, attr in PARTS:
        module_name, _, cls = owner.partition(":")
        module = importlib.import_module(module_name)
        target = getattr(module, cls) if cls else module
        original = getattr(target, attr)
        if attr == "locked":  # a context manager: time only the wait to take the lock

            @contextlib.contextmanager
            def timed_lock(*a: object, _o: Callable = original, _l: str = label, **k: object) -> Iterator[object]:
                w, c = time.perf_counter(), time.thread_time()
                with _o(*a, **k) as token:
                    clock.add(_l, time.perf_counter() - w, time.thread_time() - c)
                    yield token

            setattr(target, attr, timed_lock)
            continue

        def timed(*a: object, _o: Callable = original, _l: str = label, **k: object) -> object:
            w, c = time.perf_counter(), time.thread_time()
            try:
                return _o(*a, **k)
            finally:
                clock.add(_l, time.perf_counter() - w, time.thread_time() - c)

        setattr(target, attr, timed)


def build_store(work: Path, engrams: int, lines: int) -> Path:
    from bench_stall import write_history

    from support.stores import copy_store, make_plur_store

    template = make_plur_store(work / "templates", n=engrams, drafts_ratio=0.2, tensions=20, rng="mulberry32")
    store = copy_store(template, work / "store")
    ids = [line.split(": ", 1)[1].strip() for line in (store / "engrams.yaml").open() if line.startswith("  - id: ")]
    write_history(store, lines, ids)
    return store


def plur_approve(store: Path, home: Path, ids: list[str]) -> list[float]:
    """The real PLUR approving each draft (`getById` + `updateEngram`) in a Node process of its own, as a reviewer
    without plur_desk does: ms per approval, from the process's start (tests/node/bench_plur.mjs)."""
    from support.node import plur_env, run_node

    home.mkdir(parents=True, exist_ok=True)
    out = []
    for engram_id in ids:
        got = run_node(
            "bench_plur.mjs", payload={"op": "approve", "id": engram_id}, env=plur_env(store, home), timeout=900
        )
        out.append(float(got["seconds"]) * 1000)  # type: ignore[index]
    return out


def _p95(values: list[float]) -> float:
    """The 95th percentile as this bench has always taken it: the value at 95% of the way through the sorted list."""
    ordered = sorted(values)
    return ordered[int(0.95 * (len(ordered) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--engrams", type=int, default=50_000)
    parser.add_argument("--history-lines", type=int, default=1_000_000)
    parser.add_argument("--decisions", type=int, default=12)
    parser.add_argument("--plur", action="store_true", help="the real PLUR's approve beside it (slow at 50k)")
    parser.add_argument("--store", type=Path, default=None, help="a copy of this store (with its history) instead")
    parser.add_argument("--bulk", type=int, default=0, help="then one bulk approve of this many drafts, timed")
    parser.add_argument("--slowest", type=int, default=0, help="the parts of this many slowest decisions, each")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-decision-"))
    os.environ["XDG_DATA_HOME"] = str(work / "data")
    os.environ["XDG_CACHE_HOME"] = str(work / "cache")
    os.environ["XDG_CONFIG_HOME"] = str(work / "config")  # the trust file: not the user's own
    try:
        if args.store is not None:
            store = Path(shutil.copytree(args.store, work / "store"))
        else:
            store = build_store(work, args.engrams, args.history_lines)
        from plur_desk.app.review.session import ReviewSession
        from plur_desk.domain.commands import ApproveDrafts
        from plur_desk.domain.review import Reviewer
        from plur_desk.store.plur_store import PlurStore

        clock = Clock()
        instrument(clock)
        plur_store = PlurStore(store)
        plur_store.load()
        session = ReviewSession(plur_store, Reviewer("Bench Reviewer"))
        # what the window's load does before the reviewer can decide: the id index (finish_load), the history and
        # its chain mode (load_history), the signing modules and keyring backend (warm_up_signing)
        plur_store.engrams.by_key()
        session.load_history()
        from plur_desk.app.review.loading import warm_up_signing

        warm_up_signing()
        # the window's collector policy (ui/common/idle_collect.py, infra/memory.py): what the load made is kept out
        # of the cyclic collector's passes, and no automatic full pass runs (the window runs them when the reviewer
        # is idle); without it a full pass over the loaded store lands inside some decision, 0.5 s of CPU
        from plur_desk.infra.memory import defer_full_collections, keep_loaded_objects

        keep_loaded_objects()
        defer_full_collections()
        import gc

        full_passes: list[int] = []
        gc.callbacks.append(
            lambda phase, info: full_passes.append(1) if phase == "start" and info["generation"] == 2 else None
        )
        drafts = [row.id for row in session.queue.rows()]
        plur_ids = drafts[:3]
        rows: list[tuple[float, float, dict[str, float], dict[str, float]]] = []
        for _ in range(args.decisions):
            draft = drafts.pop()
            clock.reset()
            w, c = time.perf_counter(), time.process_time()
            session.execute(ApproveDrafts(tuple(session.writes.seen([draft]))))
            rows.append(
                ((time.perf_counter() - w) * 1000, (time.process_time() - c) * 1000, dict(clock.wall), dict(clock.cpu))
            )
        bulk: tuple[float, dict[str, float], float, dict[str, float]] | None = None
        if args.bulk:
            chosen, drafts = drafts[-args.bulk :], drafts[: -args.bulk]
            clock.reset()
            w, c = time.perf_counter(), time.process_time()
            session.execute(ApproveDrafts(tuple(session.writes.seen(chosen)), note="bulk"))
            bulk = (
                (time.perf_counter() - w) * 1000,
                dict(clock.wall),
                (time.process_time() - c) * 1000,
                dict(clock.cpu),
            )
        load = os.getloadavg()
        print(
            f"{len(plur_store.engrams.entries):,} engrams ({(store / 'engrams.yaml').stat().st_size >> 20} MB), "
            f"{sum(1 for p in (store / 'history').glob('*.jsonl') for _ in p.open('rb')):,} history lines; "
            f"load average {load[0]:.2f} {load[1]:.2f}; the window's collector policy, {len(full_passes)} full passes "
            "during the decisions"
        )
        first, rest = rows[0], rows[1:]
        print(f"| part | first decision: wall ms (CPU) | decisions 2–{len(rows)}: median wall ms [range] (CPU) |")
        print("|---|---|---|")
        for label, _o, _a in PARTS:
            walls = [r[2].get(label, 0.0) for r in rest]
            cpus = [r[3].get(label, 0.0) for r in rest]
            print(
                f"| {label} | {first[2].get(label, 0.0):.1f} ({first[3].get(label, 0.0):.1f}) | "
                f"{statistics.median(walls):.1f} [{min(walls):.1f}–{max(walls):.1f}] ({statistics.median(cpus):.1f}) |"
            )
        tops = {label for label, _owner, attr in PARTS if attr not in NESTED}

        def other(row: tuple[float, float, dict[str, float], dict[str, float]]) -> float:
            return row[0] - sum(v for k, v in row[2].items() if k in tops)

        totals = [r[0] for r in rest]
        print(
            f"| everything else (undo record, queue, command checks) | {other(first):.1f} | "
            f"{statistics.median(other(r) for r in rest):.1f} |"
        )
        print(
            f"| **key to durable signed event (the whole execute)** | **{first[0]:.0f}** ({first[1]:.0f} CPU) | "
            f"**{statistics.median(totals):.0f}** [{min(totals):.0f}–{max(totals):.0f}], p95 "
            f"{_p95(totals):.0f} ({statistics.median(r[1] for r in rest):.0f} CPU) |"
        )
        durable = sorted(r[2].get(PARTS[-1][0], 0.0) for r in rest)
        print(
            f"decisions 2–{len(rows)}: durable median {statistics.median(durable):.0f} ms, p95 {_p95(durable):.0f}, "
            f"max {durable[-1]:.0f}; the whole execute median {statistics.median(totals):.0f} ms, p95 "
            f"{_p95(totals):.0f}, max {max(totals):.0f}"
        )
        cpu, follow = sorted(r[1] for r in rest), sorted(r[3].get(PARTS[-2][0], 0.0) for r in rest)
        print(
            f"CPU ms of the whole execute: median {statistics.median(cpu):.0f}, p95 {_p95(cpu):.0f}, max {cpu[-1]:.0f}; "
            f"of the baseline's follow: median {statistics.median(follow):.0f}, max {follow[-1]:.0f}"
        )
        for n, row in sorted(enumerate(rest, 2), key=lambda item: -item[1][0])[: args.slowest]:
            spent = ", ".join(
                f"{label.strip()} {ms:.0f} ({row[3].get(label, 0.0):.0f})" for label, ms in row[2].items()
            )
            print(f"slow: decision {n}: {row[0]:.0f} ms ({row[1]:.0f} CPU); wall ms (CPU) per part: {spent}")
        if bulk is not None:
            parts = ", ".join(
                f"{label.strip()} {ms:.0f} ({bulk[3].get(label, 0.0):.0f} CPU)"
                for label, ms in bulk[1].items()
                if ms >= 1
            )
            print(
                f"bulk approve of {args.bulk}: **{bulk[0]:.0f} ms** ({bulk[2]:.0f} CPU; wall ms (CPU) per part: {parts})"
            )
        if args.plur:
            times = plur_approve(store, work / "home", plur_ids)
            if times:
                print(
                    f"PLUR getById + updateEngram, same store: median {statistics.median(times):.0f} ms "
                    f"[{min(times):.0f}–{max(times):.0f}] over {len(times)}"
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
