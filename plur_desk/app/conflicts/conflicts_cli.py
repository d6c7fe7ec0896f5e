"""`plur-desk conflicts [STORE] [--json] [--limit N]`: likely contradictions found locally; never writes the store."""

from __future__ import annotations

import json
import sys
import time

from plur_desk.app.conflicts.conflict_actions import recorded_pair_keys
from plur_desk.app.conflicts.finder import ConflictCandidate, ConflictFinder, ScanResult, Vectors
from plur_desk.app.review.session import ReviewSession
from plur_desk.domain.similar.contradiction import DEFAULT_THRESHOLD
from plur_desk.infra.errors import PlurDeskError
from plur_desk.infra.paths import cache_dir, default_store_path, store_parser


def finder_for(
    session: ReviewSession, vectors: Vectors | None = None, threshold: float = DEFAULT_THRESHOLD
) -> ConflictFinder:
    """The finder over what the session shows now; every recorded tension pair is excluded, as in PLUR's scan."""
    return ConflictFinder(
        session.all_engrams(), recorded_pair_keys(session), session.now(), vectors=vectors, threshold=threshold
    )


def cached_vectors(session: ReviewSession) -> Vectors | None:
    """MiniLM vectors the app already computed for this store (never computed here: that takes minutes)."""
    from plur_desk.app.search.store_search import SearchService

    service = SearchService(session, cache_dir())
    if not service.vectors.vectors:
        return None
    embedder = service.embedder()
    return Vectors(service.vectors.vectors, embedder.embed if embedder is not None else None)


def _row(session: ReviewSession, candidate: ConflictCandidate) -> dict[str, object]:
    row = candidate.to_json()
    for side in ("a", "b"):
        engram = session.engram(str(row[f"engram_{side}"])) or {}
        row[f"commitment_{side}"] = engram.get("commitment")
        row[f"scope_{side}"] = engram.get("scope")
    return row


def _text(result: ScanResult, shown: list[ConflictCandidate], seconds: float) -> str:
    lines = []
    for c in shown:
        lines.append(f"{c.score:.2f}  {c.engram_a}  {c.engram_b}  {c.rule}/{c.kind}")
        lines.append(f"      A: {c.statement_a}")
        lines.append(f"      B: {c.statement_b}")
        lines.append(f"      why: {c.explanation()}")
    lines.append(
        f"({len(shown)} of {len(result.candidates)} candidates shown; {result.pairs_judged} pairs passed PLUR's "
        f"pre-filter of {result.pairs_keyed} looked at; {seconds:.1f} s)"
    )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    description = "List likely contradictions in a PLUR store, found offline (no API key); writes nothing."
    parser = store_parser("conflicts", description, json="print JSON")
    parser.add_argument("--limit", type=int, default=50, help="show at most N candidates (default 50)")
    parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD, help="minimum score (0..1)")
    parser.add_argument("--no-semantic", action="store_true", help="token overlap only, even with cached vectors")
    ns = parser.parse_args(argv)
    from plur_desk.app.review.bootstrap import open_session

    try:
        session = open_session(default_store_path(ns.store), "cli", load_history=False)
    except PlurDeskError as exc:
        sys.stderr.write(f"plur-desk conflicts: {exc}\n")
        return 2
    started = time.perf_counter()
    vectors = None if ns.no_semantic else cached_vectors(session)
    result = finder_for(session, vectors, ns.threshold).scan()
    seconds = time.perf_counter() - started
    shown = result.candidates[: max(0, ns.limit)]
    if ns.json:
        payload = {
            "threshold": ns.threshold,
            "total": len(result.candidates),
            "pairs_looked_at": result.pairs_keyed,
            "pairs_judged": result.pairs_judged,
            "skipped_by_prefilter": dict(result.gated),
            "similarity": "minilm" if vectors is not None else "tokens",
            "candidates": [_row(session, c) for c in shown],
        }
        sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(_text(result, shown, seconds) + "\n")
    return 0
