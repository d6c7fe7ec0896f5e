"""Review at scale: clusters for 10,000 drafts, the writer ledger over a million history lines, and the keys a
reviewer presses per draft cleared on a 5,000-draft queue with 30 % near-duplicates, with and without clusters.

    python bench/bench_scale.py [--drafts 10000] [--queue 5000] [--lines 1000000] [--out bench/results/scale.md]

Stores are written by the real PLUR (`saveEngrams`, learn()'s shape; tests/node/make_scale_store.mjs). Each timing
runs in a fresh process (cold). Statements come from templates: a lesson is a kind of fact with its details
(service, tool, version, number, person); a near-duplicate restates the same lesson in another form; a sibling
changes one detail ("Node 20" / "Node 22") and is a different lesson that must not be clustered.

Keys per draft cleared, the model (keyboard only, the selection moves on by itself after each decision):
  without clusters: approve the first draft of each lesson (A: 1 key), reject each later restatement with a
  remembered reason (R, Enter: 2 keys).
  with clusters: a cluster whose members are all one lesson is settled with one key; a member of another lesson
  is split off (1 key) and then decided as above; drafts outside clusters are decided as above.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.node import plur_env, run_node  # noqa: E402

SERVICES = [
    "billing",
    "search",
    "auth",
    "payments",
    "gateway",
    "reports",
    "ingest",
    "mailer",
    "scheduler",
    "profile",
    "inventory",
    "checkout",
]
TOOLS = ["Node", "Python", "Postgres", "Redis", "Java", "Go"]
PEOPLE = ["Alice", "Bob", "Carol", "Dmitri", "Esther", "Farid", "Grace", "Hiro"]
UNITS = ["seconds", "minutes"]
FORMS = {
    "runtime": [
        "The {s} service uses {t} {v}",
        "{t} {v} runs the {s} service",
        "The {s} service runs on {t} {v}",
        "the {s} service uses {t} {v}!",
    ],
    "timeout": [
        "Timeouts for {s} calls are {n} {u}",
        "Calls to the {s} service time out after {n} {u}",
        "timeouts for {s} calls are {n} {u}.",
    ],
    "owner": [
        "{p} reviews all changes to the {s} module",
        "All changes to the {s} module are reviewed by {p}",
        "{p} reviews every change to the {s} module",
    ],
    "retention": [
        "Logs of the {s} service are kept for {n} days",
        "The {s} service keeps its logs for {n} days",
        "logs of the {s} service are kept for {n} days!",
    ],
}
WRITERS = [("agent:claude-code", "opus"), ("agent:codex", "gpt-5"), ("agent:cursor", "")]


def lesson(rng: random.Random) -> tuple[str, dict[str, object]]:
    kind = rng.choice(list(FORMS))
    params: dict[str, object] = {"s": rng.choice(SERVICES)}
    if kind == "runtime":
        params |= {"t": rng.choice(TOOLS), "v": rng.randint(8, 30)}
    elif kind == "timeout":
        params |= {"n": rng.randint(2, 120), "u": rng.choice(UNITS)}
    elif kind == "owner":
        params |= {"p": rng.choice(PEOPLE)}
    else:
        params |= {"n": rng.randint(3, 400)}
    return kind, params


def queue(n: int, dup_ratio: float, seed: int = 7) -> list[dict[str, object]]:
    """n drafts, dup_ratio of them restating an earlier lesson in another form; ids of lessons as ground truth."""
    rng = random.Random(seed)
    lessons: dict[str, tuple[str, dict[str, object]]] = {}
    used: dict[str, set[int]] = {}
    out: list[dict[str, object]] = []
    while len(out) < n:
        if lessons and rng.random() < dup_ratio:
            key = rng.choice(list(lessons))
            kind, params = lessons[key]
            free = [i for i in range(len(FORMS[kind])) if i not in used[key]]
            if not free:
                continue
        else:
            kind, params = lesson(rng)
            key = kind + json.dumps(params, sort_keys=True)
            if key in lessons:
                continue
            lessons[key], used[key] = (kind, params), set()
            free = list(range(len(FORMS[kind])))
        form = rng.choice(free)
        used[key].add(form)
        writer, model = rng.choice(WRITERS)
        day = 1 + len(out) * 28 // n
        out.append(
            {
                "statement": FORMS[kind][form].format(**params),
                "scope": rng.choice(["project:web", "project:web", "global"]),
                "commitment": "draft",
                "asserted_by": writer,
                "model": model,
                "created_at": f"2026-11-{day:02d}T{len(out) % 24:02d}:00:00.000Z",
                "lesson": key,
            }
        )
    return out


def make_store(root: Path, specs: list[dict[str, object]]) -> list[str]:
    ids = run_node("make_scale_store.mjs", payload=specs, env=plur_env(root, root.parent / "home"), timeout=600)
    assert isinstance(ids, dict)
    return list(ids["ids"])


CLUSTER_PROBE = r"""
import json, sys, time
from pathlib import Path
from plur_desk.app.review.bootstrap import open_session
from plur_desk.app.scale.clusters import ClusterIndex, make_cluster_index
from plur_desk.app.review.rows import created_of
session = open_session(Path(sys.argv[1]), "bench", load_history=False, use_cache=False)
engrams = list(session.all_engrams())
out = {"engrams": len(engrams)}
for mode in sys.argv[2].split(","):
    index = ClusterIndex() if mode == "lexical" else make_cluster_index(None, True)
    if index.mode != mode:
        continue
    t = time.perf_counter(); vectors = index.vectorize([str(e["statement"]) for e in engrams]); embed = time.perf_counter() - t
    index = ClusterIndex(index.vectorize, index.threshold, index.mode, cache=index.cache)
    cpu = time.process_time()
    t = time.perf_counter(); index.update(engrams[:-100], created_of); clusters = index.clusters(); cold = time.perf_counter() - t
    cpu = time.process_time() - cpu
    t = time.perf_counter(); index.update(engrams, created_of); index.clusters(); incr = time.perf_counter() - t
    out[mode] = {"vectors_s": embed, "cold_s": cold, "cpu_s": cpu, "incremental_100_s": incr, "clusters": len(clusters),
                 "clustered": sum(c.size for c in clusters), "threshold": index.threshold}
print(json.dumps(out))
"""

QUEUE_PROBE = r"""
import json, sys
from pathlib import Path
from plur_desk.app.review.bootstrap import open_session
from plur_desk.app.scale.clusters import ClusterIndex, make_cluster_index
from plur_desk.app.review.rows import created_of
session = open_session(Path(sys.argv[1]), "bench", load_history=False, use_cache=False)
out = {}
for mode in sys.argv[2].split(","):
    index = ClusterIndex() if mode == "lexical" else make_cluster_index(None, True)
    if index.mode != mode:
        continue
    index.update(session.all_engrams(), created_of)
    out[mode] = [[m.id for m in c.members] for c in index.clusters()]
print(json.dumps(out))
"""


def keys_without(order: list[str], lesson_of: dict[str, str], seen: set[str] | None = None) -> int:
    seen = set() if seen is None else seen
    keys = 0
    for ident in order:
        keys += 2 if lesson_of[ident] in seen else 1
        seen.add(lesson_of[ident])
    return keys


def keys_with(order: list[str], lesson_of: dict[str, str], clusters: list[list[str]]) -> tuple[int, int, int]:
    """(keys, pure clusters, drafts split off)."""
    keys, pure, split, seen = 0, 0, 0, set()
    clustered: set[str] = set()
    leftovers: list[str] = []
    for members in clusters:
        rep_lesson = lesson_of[members[0]]
        keys += 1  # settle: approve the representative, reject the rest of its lesson
        seen.add(rep_lesson)
        odd = [m for m in members if lesson_of[m] != rep_lesson]
        keys += len(odd)  # split each stranger off
        split += len(odd)
        pure += not odd
        leftovers += odd
        clustered |= set(members)
    rest = [i for i in order if i not in clustered or i in leftovers]
    return keys + keys_without(rest, lesson_of, seen), pure, split


def run(probe: str, *args: str) -> dict[str, object]:
    proc = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, check=True,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": tempfile.gettempdir()})  # fmt: skip
    return dict(json.loads(proc.stdout))


def bench_clusters(tmp: Path, drafts: int, modes: str) -> dict[str, object]:
    root = tmp / "clusters"
    make_store(root, queue(drafts, 0.3, seed=11))
    return run(CLUSTER_PROBE, str(root), modes)


def bench_queue(tmp: Path, n: int, modes: str) -> dict[str, object]:
    specs = queue(n, 0.3)
    root = tmp / "queue"
    ids = make_store(root, specs)
    lesson_of = {i: str(s["lesson"]) for i, s in zip(ids, specs, strict=True)}
    order = sorted(ids)
    result: dict[str, object] = {
        "drafts": n,
        "lessons": len(set(lesson_of.values())),
        "without": keys_without(order, lesson_of),
    }
    for mode, clusters in run(QUEUE_PROBE, str(root), modes).items():
        assert isinstance(clusters, list)
        keys, pure, split = keys_with(order, lesson_of, clusters)
        result[mode] = {"keys": keys, "clusters": len(clusters), "pure": pure, "split": split}
    return result


LEDGER_PROBE = r"""
import json, sys, time
from pathlib import Path
from plur_desk.app.scale.writers import ledger_from_files
from plur_desk.app.history.history_index import HistoryIndex
from plur_desk.app.scale.writers import Ledger
from plur_desk.store.history.log import HistoryLog
from datetime import datetime, UTC
cpu = time.process_time()
t = time.perf_counter(); ledger = ledger_from_files(Path(sys.argv[1]) / "history"); read = time.perf_counter() - t
t = time.perf_counter(); stats = ledger.stats([], datetime(2026, 12, 2, tzinfo=UTC)); joined = time.perf_counter() - t
cpu = time.process_time() - cpu
index = HistoryIndex(HistoryLog(Path(sys.argv[1]))); index.load()
live = Ledger(); live.sync(index.lines); live.stats([], datetime(2026, 12, 2, tzinfo=UTC))
with open(Path(sys.argv[1]) / "history" / "2026-12.jsonl", "a") as f:
    f.write(Path(sys.argv[2]).read_text())
index.refresh()
t = time.perf_counter(); fed = live.sync(index.lines); live.stats([], datetime(2026, 12, 2, tzinfo=UTC)); incr = time.perf_counter() - t
print(json.dumps({"cold_s": read + joined, "cpu_s": cpu, "feed_s": read, "stats_s": joined, "incremental_s": incr, "fed": fed,
                  "writers": len(stats), "created": sum(s.created for s in stats), "decided": sum(s.decided for s in stats)}))
"""


GUI_PROBE = r"""
import json, sys, time
from pathlib import Path
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from plur_desk.app.settings import Settings, SettingsStore
from plur_desk.ui.app import make_application
from plur_desk.ui.main_window import MainWindow
from plur_desk.ui.scale.scale_support import ScaleController
app = make_application()
ScaleController.semantic_clusters = False
win = MainWindow(SettingsStore(Path(sys.argv[2]) / "settings.yaml"), Settings(reviewer_name="bench"), "bench")
win.show()
win.open_path(Path(sys.argv[1]))
def wait(predicate, limit=600.0):
    end = time.monotonic() + limit
    while not predicate() and time.monotonic() < end:
        app.processEvents(); time.sleep(0.002)
wait(lambda: win.session is not None and win.session.history.loaded and win.jobs.pending("session") == 0 and win.scale.view is not None
     and win.jobs.pending("scale") == 0 and bool(win.scale.risk))
gaps, last = [], [time.perf_counter()]
def tick():
    now = time.perf_counter(); gaps.append(now - last[0]); last[0] = now
timer = QTimer(); timer.setInterval(5); timer.timeout.connect(tick)
win.scale.view, win.scale.risk = None, {}
timer.start(); t = time.perf_counter()
win.scale.schedule()
wait(lambda: win.scale.view is not None and win.jobs.pending("scale") == 0 and bool(win.scale.risk))
total = time.perf_counter() - t
t = time.perf_counter(); win.scale.apply(); apply_s = time.perf_counter() - t
timer.stop()
print(json.dumps({"drafts": len(win.drafts.model.rows), "scale_s": total, "max_gap_ms": 1000 * max(gaps), "apply_ms": 1000 * apply_s}))
"""


def bench_gui(tmp: Path) -> dict[str, object]:
    root = tmp / "clusters"  # the 10,000-draft store of the cluster benchmark
    proc = subprocess.run([sys.executable, "-c", GUI_PROBE, str(root), str(tmp)], capture_output=True, text=True, check=True,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp), "QT_QPA_PLATFORM": "offscreen",
                               "XDG_CONFIG_HOME": str(tmp / "cfg"), "XDG_CACHE_HOME": str(tmp / "cache")})  # fmt: skip
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def history_line(rng: random.Random, month: int, i: int) -> str:
    ts = f"2026-{month:02d}-{1 + i % 28:02d}T{(i // 60) % 24:02d}:{i % 60:02d}:00.000Z"
    ident = f"ENG-2026-{month:02d}-{1 + i % 28:02d}-{i:05d}"
    roll = rng.random()
    if roll < 0.3:
        writer, _model = rng.choice(WRITERS)
        event = {"event": "engram_created", "engram_id": ident, "timestamp": ts, "data": {"type": "behavioral", "scope": "project:web"},
                 "actor": {"asserted_by": writer, "runtime": {"name": "plur-core"}}}  # fmt: skip
    elif roll < 0.4:
        human = {"asserted_by": "Ada", "kind": "human", "runtime": {"name": "plur-desk", "version": "0.1.0"}}
        target = f"ENG-2026-{month:02d}-{1 + (i - 7) % 28:02d}-{i - 7:05d}"
        if rng.random() < 0.7:
            event = {"event": "engram_updated", "engram_id": target, "timestamp": ts, "data": {"action": "approve", "field": "commitment", "from": "draft", "to": "decided"}, "actor": human}  # fmt: skip
        else:
            event = {"event": "engram_retired", "engram_id": target, "timestamp": ts, "data": {"action": "reject", "reason": rng.choice(["duplicate", "wrong", "too vague"]), "content_hash": "0" * 64, "statement": "x"}, "actor": human}  # fmt: skip
    else:
        event = {"event": rng.choice(["co_injection", "feedback_received", "injection_outcome"]), "engram_id": ident, "timestamp": ts,
                 "data": {"ids": [ident], "query_hash": "0123456789abcdef", "tokens_used": 120, "source": "inject"},
                 "actor": {"asserted_by": "unidentified", "runtime": {"name": "plur-core"}}}  # fmt: skip
    return json.dumps(event, separators=(",", ":"))


def bench_ledger(tmp: Path, lines: int) -> dict[str, object]:
    root = tmp / "ledger"
    (root / "history").mkdir(parents=True)
    rng = random.Random(3)
    per = lines // 12
    for month in range(1, 13):
        with open(root / "history" / f"2026-{month:02d}.jsonl", "w") as handle:
            handle.write("\n".join(history_line(rng, month, i) for i in range(per)) + "\n")
    appended = "\n".join(history_line(rng, 12, per + i) for i in range(1000)) + "\n"
    (tmp / "appended.jsonl").write_text(appended)
    result = run(LEDGER_PROBE, str(root), str(tmp / "appended.jsonl"))
    result["lines"] = per * 12
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--drafts", type=int, default=10_000)
    parser.add_argument("--queue", type=int, default=5_000)
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--modes", default="lexical,embedding")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "scale.md"))
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="plur-bench-scale-") as tmp:
        clusters = bench_clusters(Path(tmp), args.drafts, args.modes)
        gui = bench_gui(Path(tmp))
        keys = bench_queue(Path(tmp), args.queue, args.modes)
        ledger = bench_ledger(Path(tmp), args.lines)
    text = report(clusters, keys, ledger, gui)
    text += (
        f"\n\nMachine load average (2 cores, shared): {load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; "
        "wall times above include waiting for the CPU."
    )
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text + "\n")


def report(
    clusters: dict[str, object], keys: dict[str, object], ledger: dict[str, object], gui: dict[str, object]
) -> str:
    rows = ["## Clusters (fresh process, store written by PLUR)", "",
            "| method | drafts | vectors (embedding or hashing) | clusters, cold (CPU time) | +100 drafts, incremental | clusters found | drafts in clusters |",
            "|---|---|---|---|---|---|---|"]  # fmt: skip
    for mode in ("lexical", "embedding"):
        c = clusters.get(mode)
        if isinstance(c, dict):
            rows.append(f"| {mode} (threshold {c['threshold']}) | {clusters['engrams']:,} | {c['vectors_s']:.2f} s | {c['cold_s']:.2f} s ({c['cpu_s']:.2f} s) "
                        f"| {c['incremental_100_s']:.2f} s | {c['clusters']:,} | {c['clustered']:,} |")  # fmt: skip
    rows += [
        "",
        "In the window (lexical, the same store): ledger, clusters and risk recomputed from scratch in the background "
        f"while a 5 ms timer runs on the GUI thread: {gui['scale_s']:.2f} s for {gui['drafts']:,} drafts, longest GUI "
        f"thread gap {gui['max_gap_ms']:.0f} ms (applying the result to the queue: {gui['apply_ms']:.0f} ms).",
    ]
    n = int(keys["drafts"])  # type: ignore[call-overload]
    rows += ["", f"## Keys per draft cleared ({n:,} drafts, 30 % restatements, {keys['lessons']:,} distinct lessons)", "",
             "| queue | keys | keys per draft | clusters (pure / strangers split off) |", "|---|---|---|---|",
             f"| flat, no clusters | {keys['without']:,} | {int(keys['without']) / n:.2f} | - |"]  # type: ignore[call-overload]  # fmt: skip
    for mode in ("lexical", "embedding"):
        k = keys.get(mode)
        if isinstance(k, dict):
            rows.append(
                f"| with clusters ({mode}) | {k['keys']:,} | {k['keys'] / n:.2f} | {k['clusters']:,} ({k['pure']:,} / {k['split']:,}) |"
            )
    rows += ["", "## Writer ledger (fresh process)", "",
             "| history lines | cold: read + feed | join into stats | total cold (CPU time) | +1,000 appended lines, incremental | writers | created | decisions |",
             "|---|---|---|---|---|---|---|---|",
             f"| {ledger['lines']:,} | {ledger['feed_s']:.2f} s | {ledger['stats_s']:.2f} s | {ledger['cold_s']:.2f} s ({ledger['cpu_s']:.2f} s) | {ledger['incremental_s']:.3f} s "
             f"| {ledger['writers']} | {ledger['created']:,} | {ledger['decided']:,} |"]  # fmt: skip
    return "\n".join(rows)


if __name__ == "__main__":
    main()
