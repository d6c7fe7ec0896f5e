"""PLUR's scan gates and tension-record rules, as ported (PLUR-FORMAT.md §4.1, §9)."""

from __future__ import annotations

from datetime import UTC, datetime

from plur_desk.domain.plur_rules.engram_rules import tension_problems
from plur_desk.domain.plur_rules.tension_rules import (
    GateContext,
    add_relation,
    blocked_by,
    categorize,
    fts_tokenize,
    new_tension,
    next_tension_id,
    pair_key,
    subject_tokens,
)

NOW = datetime(2026, 12, 2, 9, 30, tzinfo=UTC)
CTX = GateContext(frozenset(), NOW)


def _e(ident, statement, **extra):
    return {"id": ident, "status": "active", "scope": "global", "statement": statement, **extra}


def test_fts_tokenize_and_subject_tokens_follow_plur():
    assert fts_tokenize("The CI pipeline's cache, for Node 20.5!") == ["pipeline", "cache", "node"]
    assert fts_tokenize("日本語") == ["日本", "本語"]
    assert subject_tokens("Deploys to production must go through Caddy") == frozenset({"deploys", "production"})
    assert subject_tokens("The CLI does not print colour") == frozenset()  # "cli" is too short: PLUR skips it too


def test_each_gate_blocks_in_plurs_order():
    a = _e("ENG-2026-01-01-001", "Deploys go through Caddy")
    b = _e("ENG-2026-01-02-001", "Deploys go through nginx")
    assert blocked_by(a, b, CTX) is None
    assert blocked_by({**a, "status": "retired"}, b, CTX) == "not active"
    assert blocked_by({**a, "scope": "project:x"}, {**b, "scope": "project:y"}, CTX) == "scopes differ"
    assert blocked_by({**a, "scope": "project:x"}, b, CTX) is None  # global overlaps everything
    assert blocked_by({**a, "domain": "dev.ci"}, {**b, "domain": "ops.pager"}, CTX) == "domains share no segment"
    assert blocked_by({**a, "domain": "dev.ci"}, {**b, "domain": "ops.dev"}, CTX) is None
    recorded = GateContext(frozenset({pair_key(b["id"], a["id"])}), NOW)
    assert blocked_by(a, b, recorded) == "already recorded as a tension"
    assert blocked_by({**a, "relations": {"superseded_by": [b["id"]]}}, b, CTX) == "linked by supersedes"
    assert blocked_by(a, {**b, "relations": {"supersedes": [a["id"]]}}, CTX) == "linked by supersedes"
    expired = {**b, "temporal": {"learned_at": "2026-01-02T00:00:00Z", "valid_until": "2026-06-30"}}
    assert blocked_by(a, expired, CTX) == "expired"
    snapshots = GateContext(frozenset(), NOW, ("metrics",))
    assert blocked_by({**a, "domain": "metrics.web"}, {**b, "domain": "metrics"}, snapshots) == "snapshot pair"
    assert blocked_by(a, _e("ENG-2026-01-03-001", "Office plants need water"), CTX) == "no shared subject"


def test_ids_categories_and_the_record_shape_are_plurs():
    assert next_tension_id([], NOW) == "T-2026-1202-001"
    assert next_tension_id(["T-2026-1202-001", "T-2026-1202-009", "T-2026-1201-044"], NOW) == "T-2026-1202-010"
    a = _e("ENG-2026-01-01-001", "Use Caddy")
    b = _e("ENG-2026-01-02-001", "Use nginx (not Caddy)")
    assert categorize(a["statement"], b["statement"], a, b) == "superseded"
    assert categorize("x", "y", a, b) == "temporal"
    assert categorize("x", "y", a, {**b, "id": "ENG-2026-01-01-002"}) == "factual"
    record = new_tension("T-2026-1202-001", a, b, 0.87654, "why", NOW)
    assert list(record) == [
        "id", "engram_a", "engram_b", "statement_a", "statement_b", "confidence", "reason", "detected_at",
        "status", "resolved_by", "resolved_at", "category",
    ]  # fmt: skip
    assert record["confidence"] == 0.877 and record["detected_at"] == "2026-12-02T09:30:00.000Z"
    assert tension_problems(record) == []


def test_add_relation_defaults_every_array_as_learn_does():
    engram = add_relation({"id": "ENG-1"}, "supersedes", "ENG-0")
    assert engram["relations"] == {
        "broader": [], "narrower": [], "related": [], "conflicts": [], "supersedes": ["ENG-0"], "superseded_by": [],
    }  # fmt: skip
    assert add_relation(engram, "supersedes", "ENG-0")["relations"]["supersedes"] == ["ENG-0"]  # no duplicates


def test_subject_tokens_share_one_string_per_word():
    """The contradiction finder keeps a subject set per engram: a word they share is one string, not one each."""
    from plur_desk.domain.plur_rules.tension_rules import subject_tokens

    first = subject_tokens("Deployment pipelines always pin versions")
    second = subject_tokens("Staging deployment pipelines never pin versions")
    shared = first & second
    assert shared == {"deployment", "pipelines", "versions"}
    assert all(next(t for t in first if t == word) is next(t for t in second if t == word) for word in shared)
