"""Quality floors of the contradiction finder on the labelled pairs in tests/data (quality, not wall time)."""

from __future__ import annotations

import json

import pytest

from support.conflict_eval import load_rows, precision_at, precision_recall, score_rows

FLOOR_PRECISION = 0.85
FLOOR_RECALL = 0.6


def test_the_evaluation_set_is_what_the_issue_asks_for():
    rows = load_rows()
    kinds = {str(r["kind"]).split(".")[0] for r in rows}
    assert len(rows) >= 300
    assert {"slot", "negation", "quantity"} <= kinds  # contradictions of each kind
    assert {"paraphrase", "refinement", "event_log", "scope", "supersedes"} <= kinds  # hard negatives
    # Five texts appear twice on purpose: once as a contradiction, once in other scopes or linked by supersedes.
    assert len({json.dumps(r, sort_keys=True) for r in rows}) == len(rows)


@pytest.mark.parametrize("semantic", [False, True], ids=["tokens", "minilm"])
def test_precision_and_recall_at_the_default_threshold(semantic):
    scored, source = score_rows(load_rows(), semantic)
    if semantic and source != "minilm":
        pytest.skip("the embedding model (the `embeddings` extra) is not installed")
    precision, recall, _hits, _predicted = precision_recall(scored, 0.5)
    assert precision >= FLOOR_PRECISION, precision
    assert recall >= FLOOR_RECALL, recall
    assert precision_at(scored, 20) >= FLOOR_PRECISION
    assert precision_at(scored, 50) >= FLOOR_PRECISION
    # Well above similarity alone, at the baseline's own best threshold.
    best = max(
        precision_recall(scored, t / 100, "similarity")[0]
        for t in range(50, 100, 5)
        if precision_recall(scored, t / 100, "similarity")[1] >= FLOOR_RECALL
    )
    assert precision - best >= 0.1, (precision, best)


def test_hard_negatives_of_the_prefilter_never_pass_it():
    scored, _ = score_rows(load_rows(), semantic=False)
    gated = [s for s in scored if s.row["kind"] in ("scope", "supersedes", "domain")]
    assert gated and all(s.gate is not None and s.score == 0 for s in gated)
