"""Near-duplicate clusters: the labelled set's precision floor, the detail rules, and incremental upkeep."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from plur_desk.app.review.rows import created_of
from plur_desk.app.scale.clusters import THRESHOLDS, ClusterIndex, embedding_vectorizer
from plur_desk.domain.plur_rules.derived import content_hash
from plur_desk.domain.similar.near_duplicate import agreement_key, detail_conflict, details_of, scopes_overlap
from plur_desk.index.embeddings import Embedder, VectorCache
from plur_desk.index.near_dupes import lexical_vectors

PAIRS = Path(__file__).resolve().parents[2] / "data" / "near_duplicate_pairs.txt"


def labelled() -> list[tuple[bool, str, str]]:
    out = []
    for line in PAIRS.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            label, a, b = (part.strip() for part in line.split(" | "))
            out.append((label == "same", a, b))
    return out


def _engram(ident: str, statement: str, scope: str = "project:web", commitment: str = "draft") -> dict[str, object]:
    return {
        "id": ident,
        "status": "active",
        "scope": scope,
        "statement": statement,
        "commitment": commitment,
        "content_hash": content_hash(statement),
        "created_at": f"2026-11-01T00:00:{int(ident[-3:]) % 60:02d}.000Z",
    }


def _judge(index: ClusterIndex, a: str, b: str) -> bool:
    """The pair as the clusterer sees it: two drafts in one scope, together or not."""
    fresh = ClusterIndex(index.vectorize, index.threshold, index.mode)
    fresh.update([_engram("ENG-2026-11-01-001", a), _engram("ENG-2026-11-01-002", b)], created_of)
    return bool(fresh.clusters())


def _precision_recall(index: ClusterIndex) -> tuple[float, float]:
    tp = fp = fn = 0
    for same, a, b in labelled():
        joined = _judge(index, a, b)
        tp += joined and same
        fp += joined and not same
        fn += same and not joined
    return tp / max(tp + fp, 1), tp / max(tp + fn, 1)


def test_labelled_set_has_both_kinds_and_detail_pairs() -> None:
    pairs = labelled()
    assert sum(s for s, _a, _b in pairs) >= 60
    assert sum(not s for s, _a, _b in pairs) >= 80
    assert (
        False,
        "The CI pipeline uses Node 20 for all builds",
        "The CI pipeline uses Node 22 for all builds",
    ) in pairs


def test_lexical_precision_floor_at_default_threshold() -> None:
    precision, recall = _precision_recall(ClusterIndex())
    print(f"lexical: precision {precision:.3f} recall {recall:.3f}")
    assert precision >= 0.95
    assert recall > 0.5


@pytest.mark.skipif(Embedder.model_file() is None, reason="embedding model package not installed")
def test_embedding_precision_floor_at_default_threshold(tmp_path: Path) -> None:
    embedder = Embedder.load()
    assert embedder is not None
    vectorize = embedding_vectorizer(embedder.embed, VectorCache(None))
    precision, recall = _precision_recall(ClusterIndex(vectorize, THRESHOLDS["embedding"], "embedding"))
    print(f"embedding: precision {precision:.3f} recall {recall:.3f}")
    assert precision >= 0.95
    assert recall > 0.7


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The CI pipeline uses Node 20 for all builds", "The CI pipeline uses Node 22 for all builds"),
        ("Timeouts are 10 seconds", "Timeouts are 10 minutes"),
        ("The worker retries failed jobs three times", "The worker retries failed jobs 5 times"),
        ("Alice reviews all changes to the auth module", "Bob reviews all changes to the auth module"),
        ("Use Postgres for new services", "Use MySQL for new services"),
        ("Always squash feature branches", "Never squash feature branches"),
        ("Deploys happen only on weekdays", "Deploys happen only on weekends"),
        ("Bob reviews every change to the checkout module", "Farid reviews every change to the reports module"),
        ("The deploy freeze is on Thursday and Friday afternoons", "The deploy freeze is every Friday afternoon"),
    ],
)
def test_a_detail_that_matters_keeps_drafts_apart(a: str, b: str) -> None:
    assert detail_conflict(a, b) is not None
    assert detail_conflict(b, a) is not None
    assert not _judge(ClusterIndex(threshold=0.0), a, b)  # even when "alike" is set to accept anything


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The worker retries failed jobs three times", "Failed jobs are retried 3 times by the worker"),
        ("Alice reviews all changes to the auth module", "All changes to the auth module are reviewed by Alice"),
        ("Never commit secrets to the repository", "Secrets must never be committed to the repository"),
    ],
)
def test_paraphrases_with_the_same_details_do_not_conflict(a: str, b: str) -> None:
    assert detail_conflict(a, b) is None


def test_scope_rule_is_plurs() -> None:
    assert scopes_overlap("global", "project:web")
    assert scopes_overlap("project:web", "project:web")
    assert not scopes_overlap("project:web", "project:api")


def test_same_hash_in_disjoint_scopes_is_not_a_duplicate() -> None:
    index = ClusterIndex()
    index.update(
        [
            _engram("ENG-2026-11-01-001", "Use tabs", "project:web"),
            _engram("ENG-2026-11-01-002", "Use tabs!", "project:api"),
        ],
        created_of,
    )
    assert index.clusters() == []


def test_incremental_add_and_leave_and_approved_anchor() -> None:
    index = ClusterIndex()
    base = [
        _engram("ENG-2026-11-01-001", "Run the test suite before pushing to main"),
        _engram("ENG-2026-11-01-002", "run the test suite, before pushing to main!"),
        _engram("ENG-2026-11-01-003", "Database backups run every 6 hours"),
    ]
    assert index.update(base, created_of) == 3
    [cluster] = index.clusters()
    assert set(cluster.drafts) == {"ENG-2026-11-01-001", "ENG-2026-11-01-002"}
    assert cluster.members[1].joined_by == "content_hash"
    approved = _engram("ENG-2026-11-01-004", "Run the test suite before pushing to main", commitment="decided")
    assert index.update([*base, approved], created_of) == 1  # only the newcomer is compared
    [cluster] = index.clusters()
    assert cluster.representative == "ENG-2026-11-01-004"
    assert cluster.approved == ("ENG-2026-11-01-004",)
    assert index.nearest_approved["ENG-2026-11-01-001"][1] == "ENG-2026-11-01-004"
    # the two drafts are decided: they leave, and so does the cluster
    assert index.update([base[2], approved], created_of) == 0
    assert index.clusters() == []
    assert "ENG-2026-11-01-001" not in index.nearest_approved


def test_a_chain_cannot_carry_a_detail_across() -> None:
    index = ClusterIndex(threshold=0.0)
    index.update(
        [
            _engram("ENG-2026-11-01-001", "The CI pipeline uses Node 20 for all builds"),
            _engram("ENG-2026-11-01-002", "The CI pipeline uses Node 20 for all its builds"),
            _engram("ENG-2026-11-01-003", "The CI pipeline uses Node 22 for all builds"),
        ],
        created_of,
    )
    for cluster in index.clusters():
        statements = {m.statement for m in cluster.members}
        assert not ({"The CI pipeline uses Node 22 for all builds"} < statements and len(statements) > 1)


def test_vectors_are_unit_length() -> None:
    vectors = lexical_vectors(["Use tabs", "", "日本語のテキスト"])
    norms = np.linalg.norm(vectors, axis=1)
    assert np.allclose(norms[[0, 2]], 1.0)


def test_agreement_key_is_what_the_details_say() -> None:
    """agreement_key is computed without the details cache; it must agree with the details detail_conflict uses."""
    for _same, a, b in labelled():
        for statement in (a, b):
            details = details_of(statement)
            assert agreement_key(statement) == (details.numbers, details.negated)
