"""The local contradiction finder: quality on the labelled pairs, and speed on 50,000-engram stores.

    python bench/bench_conflicts.py [--n 50000] [--skip-scale] [--out bench/results/conflicts.md]

Quality: precision and recall at the default threshold and precision at the top 20/50 on tests/data, for the
detector (token overlap, and MiniLM when the `embeddings` extra is installed) side by side with similarity alone
(the same PLUR pre-filter, then the similarity as the score, at several thresholds and at its best F1).
Speed, each figure in a fresh process: a store-wide scan of a store made by tests/node/make_store.mjs (PLUR's own
learn() shapes, random words) and of a generated store of realistic statements with a high conflict density
(services x facts x values), and the pre-approval check of one draft (median and max of 50 drafts).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.conflict_eval import Scored, load_rows, precision_at, precision_recall, score_rows  # noqa: E402
from support.node import plur_env, run_node  # noqa: E402

PROBE = r"""
import json, resource, statistics, sys, time
from pathlib import Path
from plur_desk.app.review.bootstrap import open_session
from plur_desk.app.conflicts.conflicts_cli import finder_for
out = {}
t = time.perf_counter()
session = open_session(Path(sys.argv[1]), "bench", load_history=False, use_cache=False)
out["load_s"] = time.perf_counter() - t
t = time.perf_counter()
finder = finder_for(session)
out["build_s"] = time.perf_counter() - t
t = time.perf_counter()
result = finder.scan()
out["scan_s"] = time.perf_counter() - t
out["pairs_keyed"], out["pairs_judged"], out["candidates"] = result.pairs_keyed, result.pairs_judged, len(result.candidates)
out["gated"] = dict(result.gated)
drafts = [e for e in session.all_engrams() if e.get("commitment") == "draft" and e.get("status") == "active"][:50]
times = []
for draft in drafts:
    t = time.perf_counter()
    finder.check(draft)
    times.append(time.perf_counter() - t)
out["check_median_ms"] = statistics.median(times) * 1000
out["check_max_ms"] = max(times) * 1000
out["engrams"] = len(finder.engrams)
out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""

EMBED_PROBE = r"""
import json, statistics, time
from plur_desk.index.embeddings import Embedder
e = Embedder.load()
if e is None:
    print(json.dumps(None))
else:
    e.embed(["warm up"])
    times = []
    for text in ["API tokens for the billing service expire after 90 days.", "Deploys go through nginx on the edge hosts."] * 10:
        t = time.perf_counter(); e.embed([text]); times.append(time.perf_counter() - t)
    print(json.dumps({"embed_one_ms": statistics.median(times) * 1000}))
"""

# -- quality ---------------------------------------------------------------------------------------------------


def _best_f1(scored: list[Scored]) -> tuple[float, float, float]:
    best = (0.0, 0.0, 0.0, 0.0)
    for t in range(30, 100):
        p, r, _, _ = precision_recall(scored, t / 100, "similarity")
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        if f1 > best[0]:
            best = (f1, t / 100, p, r)
    return best[1], best[2], best[3]


def quality() -> str:
    rows = load_rows()
    lines = [
        f"### Quality on {len(rows)} labelled pairs (tests/data/contradiction_pairs.jsonl, "
        f"{sum(1 for r in rows if r['y'])} contradictions)",
        "",
        "| scorer | threshold | precision | recall | flagged | P@20 | P@50 |",
        "|---|---|---|---|---|---|---|",
    ]
    per_kind: dict[str, dict[str, tuple[int, int]]] = {}
    for semantic in (False, True):
        scored, source = score_rows(rows, semantic)
        if semantic and source != "minilm":
            lines.append("| (MiniLM not installed: `pip install '.[embeddings]'`) | | | | | | |")
            continue
        p, r, _hits, flagged = precision_recall(scored, 0.5)
        lines.append(
            f"| **detector**, similarity by {source} | 0.50 (default) | {p:.3f} | {r:.3f} | {flagged} | "
            f"{precision_at(scored, 20):.2f} | {precision_at(scored, 50):.2f} |"
        )
        for t in (0.8, 0.9):
            bp, br, _, bf = precision_recall(scored, t, "similarity")
            lines.append(f"| similarity alone ({source}) | {t:.2f} | {bp:.3f} | {br:.3f} | {bf} | | |")
        t, bp, br = _best_f1(scored)
        lines.append(
            f"| similarity alone ({source}), its best F1 | {t:.2f} | {bp:.3f} | {br:.3f} | | "
            f"{precision_at(scored, 20, 'similarity'):.2f} | {precision_at(scored, 50, 'similarity'):.2f} |"
        )
        kinds: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for s in scored:
            kinds[str(s.row["kind"])][0] += 1
            kinds[str(s.row["kind"])][1] += int(s.score >= 0.5)
        per_kind[source] = {k: (v[0], v[1]) for k, v in kinds.items()}
    lines += [
        "",
        "Flagged at the default threshold, by kind of pair (contradictions: want all; the rest: want none):",
        "",
    ]
    sources = list(per_kind)
    lines.append("| kind | label | pairs | " + " | ".join(f"flagged ({s})" for s in sources) + " |")
    lines.append("|---|---|---|" + "---|" * len(sources))
    labels = {str(r["kind"]): r["y"] for r in rows}
    for kind in sorted(labels, key=lambda k: (-labels[k], k)):
        counts = [per_kind[s][kind] for s in sources]
        label = "contradiction" if labels[kind] else "compatible"
        lines.append(f"| {kind} | {label} | {counts[0][0]} | " + " | ".join(str(c[1]) for c in counts) + " |")
    return "\n".join(lines)


# -- speed -----------------------------------------------------------------------------------------------------

_SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "po", "se", "da", "fu", "gi", "ho", "ju")
SERVICES = [a + b + c for a in _SYLLABLES for b in _SYLLABLES for c in ("n", "x", "r", "l", "m", "t", "k", "d", "")]
FACTS = [
    ("deploys go through {tool}", ["Caddy", "nginx", "Traefik", "Envoy", "HAProxy"]),
    ("stores its data in {tool}", ["PostgreSQL", "MySQL", "MongoDB", "DynamoDB", "SQLite"]),
    ("is owned by {person}", ["Priya", "Marcus", "Dana", "Tomasz", "Helen", "Raj", "Sofia", "Jonas"]),
    ("has a request timeout of {n} seconds", ["5", "10", "20", "30", "60"]),
    ("retries failed jobs {n} times", ["3", "5", "10"]),
    ("runs on Python {v}", ["3.10", "3.11", "3.12"]),
    ("is hosted in {place}", ["Frankfurt", "Dublin", "Virginia", "Oregon", "Singapore"]),
    ("sends its logs to {tool}", ["Datadog", "Loki", "Splunk", "Elasticsearch"]),
    ("keeps backups for {n} days", ["7", "14", "30", "90"]),
    ("is deployed on {day}", ["Mondays", "Tuesdays", "Wednesdays", "Thursdays"]),
    ("must be restarted during business hours", [""]),
    ("must not be restarted during business hours", [""]),
    ("uses feature flags for every release", [""]),
    ("requires {n} approvals before merging", ["1", "2", "3"]),
    ("exposes metrics on port {n}", ["9090", "9100", "8080"]),
]
SCOPES = ["global", "project:web", "project:api", "group:org/platform", "user:alice"]
DOMAINS = ["dev.ci", "dev.deploy", "ops.oncall", "dev.style", "data.db", None]


def realistic_store(root: Path, n: int, seed: int = 7) -> None:
    """Statements 'The <service> service <fact> <value>', PLUR-valid engrams written with plur_desk's dumper."""
    from plur_desk.domain.plur_rules.derived import content_hash
    from plur_desk.store.lists.yaml_dump import dump_engrams_document

    rng = random.Random(seed)
    services = SERVICES
    engrams = []
    per_day: dict[str, int] = defaultdict(int)
    for _ in range(n):
        template, values = rng.choice(FACTS)
        value = rng.choice(values)
        statement = (
            f"The {rng.choice(services)} service "
            + template.format(tool=value, person=value, n=value, v=value, place=value, day=value)
            + "."
        )
        day = f"2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}"
        per_day[day] += 1
        engram = {
            "id": f"ENG-{day}-{per_day[day]:03d}",
            "version": 2,
            "status": "active",
            "type": "behavioral",
            "scope": rng.choice(SCOPES),
            "statement": statement,
            "content_hash": content_hash(statement),
            "commitment": "draft" if rng.random() < 0.08 else rng.choice(["leaning", "decided", "exploring"]),
            "created_at": f"{day}T10:00:00.000Z",
        }
        domain = rng.choice(DOMAINS)
        if domain:
            engram["domain"] = domain
        engrams.append(engram)
    engrams.sort(key=lambda e: str(e["id"]))
    root.mkdir(parents=True)
    (root / "engrams.yaml").write_text(dump_engrams_document({"engrams": engrams}), encoding="utf-8")
    (root / "tensions.yaml").write_text("[]\n", encoding="utf-8")


def probe(store: Path, code: str = PROBE) -> dict:
    proc = subprocess.run([sys.executable, "-c", code, str(store)], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def speed(n: int, work: Path) -> str:
    plur_store, home, generated = work / "plur", work / "home", work / "realistic"
    home.mkdir()
    run_node("make_store.mjs", payload={"n": n, "drafts_ratio": 0.08}, env=plur_env(plur_store, home), timeout=1200)
    realistic_store(generated, n)
    rows = [
        "| store | engrams (active) | open store | build finder | scan | pairs sharing most words | judged (passed PLUR's "
        "pre-filter, 6 best partners each) | candidates ≥ 0.5 | check one draft (median / max of 50) | peak RSS |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, store in (
        ("make_store.mjs (PLUR learn() shapes, random words)", plur_store),
        ("services × facts × values", generated),
    ):
        r = probe(store)
        print(json.dumps({label: r}), file=sys.stderr)
        rows.append(
            f"| {label} | {r['engrams']:,} | {r['load_s']:.1f} s | {r['build_s']:.1f} s | {r['scan_s']:.1f} s | "
            f"{r['pairs_keyed']:,} | {r['pairs_judged']:,} | {r['candidates']:,} | "
            f"{r['check_median_ms']:.1f} / {r['check_max_ms']:.1f} ms | {r['peak_rss_mb']:.0f} MB |"
        )
    embed = probe(Path("."), EMBED_PROBE)
    if embed:
        rows += [
            "",
            f"With MiniLM installed, the check also embeds the draft once: {embed['embed_one_ms']:.1f} ms (median).",
        ]
    return (
        f"### Speed at {n:,} engrams (scan = key index, PLUR's pre-filter, detector; token similarity)\n\n"
        + "\n".join(rows)
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=50000)
    parser.add_argument("--skip-scale", action="store_true")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "conflicts.md"))
    args = parser.parse_args()
    parts = [quality()]
    if not args.skip_scale:
        with tempfile.TemporaryDirectory(prefix="plur-conflicts-") as tmp:
            parts.append(speed(args.n, Path(tmp)))
    text = "\n\n".join(parts)
    print(text)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n")


if __name__ == "__main__":
    main()
