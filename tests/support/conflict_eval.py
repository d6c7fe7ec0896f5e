"""The labelled contradiction pairs in tests/data as engrams, run through the finder; shared by a test and bench/."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from plur_desk.app.conflicts.finder import ConflictFinder, Vectors
from plur_desk.domain.plur_rules.derived import content_hash
from plur_desk.domain.plur_rules.tension_rules import blocked_by

DATA = Path(__file__).resolve().parent.parent / "data" / "contradiction_pairs.jsonl"
NOW = datetime(2026, 12, 1, tzinfo=UTC)
DEFAULT_DAYS = ("2026-02-10", "2026-05-21")  # engrams are usually learned on different days


@dataclass(frozen=True)
class Scored:
    row: dict[str, object]
    label: bool
    score: float  # the detector's score (0 when PLUR's pre-filter drops the pair)
    similarity: float  # the baseline's score (0 when the pre-filter drops the pair)
    gate: str | None
    rule: str
    explanation: str


def load_rows(path: Path = DATA) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _engram(ident: str, statement: str, day: str, scope: str, domain: str) -> dict[str, object]:
    return {
        "id": ident,
        "status": "active",
        "type": "behavioral",
        "scope": scope,
        "statement": statement,
        "domain": domain,
        "content_hash": content_hash(statement),
        "commitment": "decided",
        "temporal": {"learned_at": f"{day}T10:00:00.000Z"},
    }


def pair_engrams(n: int, row: dict[str, object]) -> tuple[dict[str, object], dict[str, object]]:
    day_a, day_b = str(row.get("da", DEFAULT_DAYS[0])), str(row.get("db", DEFAULT_DAYS[1]))
    if row.get("same_day"):
        day_a = day_b = "2026-03-03"
    a = _engram(
        f"ENG-{day_a}-{2 * n + 1:03d}",
        str(row["a"]),
        day_a,
        str(row.get("sa", "project:eval")),
        str(row.get("doma", "eval")),
    )
    b = _engram(
        f"ENG-{day_b}-{2 * n + 2:03d}",
        str(row["b"]),
        day_b,
        str(row.get("sb", "project:eval")),
        str(row.get("domb", "eval")),
    )
    if row.get("sup"):  # B replaced A, as learn(…, {supersedes: [A]}) records it
        b["relations"] = {"supersedes": [a["id"]]}
        a["relations"] = {"superseded_by": [b["id"]]}
    return a, b


def minilm_vectors(engrams: list[dict[str, object]]) -> Vectors | None:
    from plur_desk.index.embeddings import Embedder

    embedder = Embedder.load()
    if embedder is None:
        return None
    by_hash = {str(e["content_hash"]): str(e["statement"]) for e in engrams}
    keys = list(by_hash)
    matrix = embedder.embed([by_hash[k] for k in keys])
    return Vectors(dict(zip(keys, matrix, strict=True)), embedder.embed)


def score_rows(rows: list[dict[str, object]], semantic: bool) -> tuple[list[Scored], str]:
    pairs = [pair_engrams(n, row) for n, row in enumerate(rows)]
    engrams = [e for pair in pairs for e in pair]
    vectors = minilm_vectors(engrams) if semantic else None
    finder = ConflictFinder(engrams, (), NOW, vectors=vectors)
    out = []
    for row, (a, b) in zip(rows, pairs, strict=True):
        gate = blocked_by(a, b, finder.context)
        candidate = finder.score(a, b)
        passed = gate is None
        out.append(
            Scored(
                row,
                bool(row["y"]),
                candidate.score if passed else 0.0,
                candidate.similarity if passed else 0.0,
                gate,
                candidate.rule,
                candidate.explanation(),
            )
        )
    return out, "minilm" if vectors is not None else "tokens"


def precision_recall(scored: list[Scored], threshold: float, attr: str = "score") -> tuple[float, float, int, int]:
    predicted = [s for s in scored if getattr(s, attr) >= threshold and getattr(s, attr) > 0]
    hits = sum(1 for s in predicted if s.label)
    positives = sum(1 for s in scored if s.label)
    precision = hits / len(predicted) if predicted else 1.0
    return precision, hits / positives, hits, len(predicted)


def precision_at(scored: list[Scored], k: int, attr: str = "score") -> float:
    ranked = sorted(scored, key=lambda s: -getattr(s, attr))[:k]
    return sum(1 for s in ranked if s.label) / k
