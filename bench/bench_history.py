"""History pane data at scale: a million-line history, time to the first page and to common filters.

    python bench/bench_history.py [--lines 1000000] [--out bench/results/history.md]

The log is written in PLUR 0.20's line shape across 12 month files (about 210 MB). PLUR itself has no history
view; its `readHistory(root, month)` is timed on the newest month for comparison.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.node import NODE_DIR, plur_env  # noqa: E402

PROBE = r"""
import json, resource, sys, time
from pathlib import Path
from plur_desk.app.history.history_index import HistoryFilter, HistoryIndex
from plur_desk.store.history.log import HistoryLog
t0 = time.perf_counter()
index = HistoryIndex(HistoryLog(Path(sys.argv[1])))
index.load_newest(200)
page = index.newest_first()[0:200]
first = time.perf_counter() - t0
t = time.perf_counter(); index.load(); full = time.perf_counter() - t
out = {"first_page_s": first, "full_load_s": full, "lines": len(index.lines)}
for name, flt in (("type", HistoryFilter(types=frozenset({"engram_updated"}))),
                  ("engram", HistoryFilter(engram_id="ENG-2026-06-01-4242")),
                  ("human", HistoryFilter(actor_kinds=frozenset({"human"}))),
                  ("text", HistoryFilter(text="project:api"))):
    t = time.perf_counter(); events = index.newest_first(flt); events[0:200]
    out[name + "_s"] = time.perf_counter() - t
t = time.perf_counter(); index.timeline("ENG-2026-06-01-4242"); out["timeline_s"] = time.perf_counter() - t
out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""

READ = """
import { readHistory } from '@plur-ai/core'
const t = performance.now(); const ev = readHistory(process.env.PLUR_PATH, '2026-12')
process.stdout.write(JSON.stringify({ seconds: (performance.now() - t) / 1000, events: ev.length }))
"""


def generate(root: Path, lines: int) -> None:
    (root / "history").mkdir(parents=True)
    (root / "engrams.yaml").write_text("engrams: []\n")
    rng = random.Random(1)
    per = lines // 12
    for month in range(1, 13):
        with open(root / "history" / f"2026-{month:02d}.jsonl", "w") as handle:
            for i in range(per):
                event = {
                    "event": rng.choice(["engram_created", "co_injection", "engram_updated", "feedback_received"]),
                    "engram_id": f"ENG-2026-{month:02d}-01-{i:03d}",
                    "timestamp": f"2026-{month:02d}-01T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}.000Z",
                    "data": {"type": "behavioral", "scope": rng.choice(["project:web", "project:api"])},
                    "actor": {"asserted_by": "agent:codex", "runtime": {"name": "plur-core"}},
                }
                handle.write(json.dumps(event, separators=(",", ":")) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "history.md"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="plur-bench-history-") as tmp:
        root = Path(tmp) / "store"
        generate(root, args.lines)
        ours = json.loads(
            subprocess.run([sys.executable, "-c", PROBE, str(root)], capture_output=True, text=True, check=True).stdout
        )
        (NODE_DIR / "_read_history.mjs").write_text(READ)
        try:
            env = plur_env(root, Path(tmp) / "home")
            theirs = json.loads(
                subprocess.run(
                    ["node", str(NODE_DIR / "_read_history.mjs")],
                    capture_output=True,
                    text=True,
                    check=True,
                    env=env,
                    cwd=NODE_DIR,
                ).stdout
            )
        finally:
            (NODE_DIR / "_read_history.mjs").unlink()
    size_mb = sum(p.stat().st_size for p in (root / "history").glob("*.jsonl")) / 1e6 if root.exists() else 0
    del size_mb
    text = "\n".join(
        [
            "| history lines | first page (200 newest) | all months loaded (background) | filter: type | filter: engram id | filter: human "
            "| filter: text | one engram's timeline | peak RSS | PLUR `readHistory` of one month |",
            "|---|---|---|---|---|---|---|---|---|---|",
            f"| {ours['lines']:,} | {ours['first_page_s']:.2f} s | {ours['full_load_s']:.2f} s | {ours['type_s']:.2f} s | {ours['engram_s']:.2f} s | "
            f"{ours['human_s']:.2f} s | {ours['text_s']:.2f} s | {ours['timeline_s']:.2f} s | {ours['peak_rss_mb']:.0f} MB "
            f"| {theirs['seconds']:.2f} s ({theirs['events']:,} events) |",
        ]
    )
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
