"""An update of the near-duplicate clusters that fails half way (the embedding model or its cache raising, memory
running out) must not leave the index believing it has seen what it never finished: the next update gives what a
computation from scratch gives, and the reviewer's splits are kept."""

from __future__ import annotations

import numpy as np
import pytest

from plur_desk.app.review.rows import created_of
from plur_desk.app.scale.clusters import ClusterIndex
from plur_desk.index.near_dupes import lexical_vectors


def _engram(n: int, text: str, draft: bool = True) -> dict[str, object]:
    return {
        "id": f"ENG-2026-11-01-{n:03d}",
        "status": "active",
        "scope": "global",
        "statement": text,
        "commitment": "draft" if draft else "decided",
        "created_at": "2026-11-01T00:00:00.000Z",
    }


class Flaky:
    """Word-overlap vectors that raise while `failing` is set, as a model or its cache can."""

    def __init__(self) -> None:
        self.failing = False

    def __call__(self, texts: list[str]) -> np.ndarray:
        if self.failing:
            raise MemoryError("embedding failed")
        return lexical_vectors(texts)


def _clusters(engrams: list[dict[str, object]]) -> list[list[str]]:
    fresh = ClusterIndex(lexical_vectors)
    fresh.update(engrams, created_of)
    return [c.drafts for c in fresh.clusters()]


def test_an_update_that_failed_is_done_in_full_by_the_next_one() -> None:
    vectors = Flaky()
    a, b = _engram(1, "Run the test suite before pushing to main"), _engram(2, "Deploys happen only on weekdays")
    index = ClusterIndex(vectors)
    index.update([a, b], created_of)
    assert index.clusters() == []
    b2 = dict(b, statement="Run the full test suite before pushing to main")  # an agent's edit: a new record
    vectors.failing = True
    with pytest.raises(MemoryError):
        index.update([a, b2], created_of)
    vectors.failing = False
    index.update([a, b2], created_of)  # the next refresh, with the very same records
    assert [c.drafts for c in index.clusters()] == _clusters([a, b2]) != []


def test_a_failed_update_keeps_the_reviewers_splits() -> None:
    vectors = Flaky()
    a, b = _engram(1, "Run the test suite before pushing to main"), _engram(2, "Run the full test suite before pushing")
    c = _engram(3, "Deploys happen only on weekdays")
    index = ClusterIndex(vectors)
    index.update([a, b, c], created_of)
    assert len(index.clusters()) == 1
    index.keep_apart(str(a["id"]), [str(b["id"])])
    assert index.clusters() == []
    c2 = dict(c, statement="Deploys happen only on weekdays, never on Fridays")
    vectors.failing = True
    with pytest.raises(MemoryError):
        index.update([a, b, c2], created_of)
    vectors.failing = False
    index.update([a, b, c2], created_of)
    assert index.clusters() == []  # the split still holds after the index started over


def test_a_reviewers_split_never_steps_aside_for_the_reviewers_own_decisions(monkeypatch) -> None:
    """A split is the reviewer's own key press, waited for: its cut must not pause like the analytics do while the
    reviewer is deciding (which the key press itself marked); the analytics' cut does pause."""
    from plur_desk.app.scale import cluster_graph

    paused: list[int] = []
    monkeypatch.setattr(cluster_graph, "_step_aside", lambda: paused.append(1))
    a, b = _engram(1, "Run the test suite before pushing to main"), _engram(2, "Run the full test suite before pushing")
    c = _engram(3, "Run the test suite before you push to main")
    index = ClusterIndex()
    index.update([a, b, c], created_of)
    assert paused  # the analytics' cut checked in at its joins
    paused.clear()
    index.keep_apart(str(a["id"]), [str(b["id"])])
    assert paused == []
    assert all({str(a["id"]), str(b["id"])} - set(cl.drafts) for cl in index.clusters())
