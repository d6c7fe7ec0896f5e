"""Kept up to date change by change, the clusters are exactly what one computation from scratch gives, and that
is what the definition says, pair by pair (a plain reference below, every pair compared, every link listed)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plur_desk.app.review.rows import created_of
from plur_desk.app.scale.clusters import Cluster, ClusterIndex, Member
from plur_desk.domain.plur_rules.derived import content_hash
from plur_desk.domain.similar.near_duplicate import agreement_key, detail_conflict, scopes_overlap
from plur_desk.index.near_dupes import lexical_vectors

from support.vectors import small_vector_chunks

STATEMENTS = [
    "Run the test suite before pushing to main",
    "run the test suite, before pushing to main!",  # the same content_hash as the first
    "Run the full test suite before pushing to main",
    "Run the test suite before you push to main",
    "The CI pipeline uses Node 20 for all builds",
    "The CI pipeline uses Node 20 for all its builds",
    "The CI pipeline uses Node 22 for all builds",
    "Never squash feature branches",
    "Always squash feature branches",
    "Squash feature branches before merging",
    "Database backups run every 6 hours",
    "Database backups run every six hours",
    "Deploys happen only on weekdays",
    "Deploys happen only on weekends",  # a detail swapped: never with the one above, though both are alike
    "Deploys happen only on weekdays and weekends",  # alike with both, in conflict with neither
    "deploys happen only on weekdays.",
    "Use tabs",
    "",
]
SCOPES = ["global", "project:web", "project:api"]
ROLES = ["draft", "draft", "decided", "leaning"]


def _id(n: int) -> str:
    return f"ENG-2026-11-01-{n:03d}"


def _engram(n: int, statement: int, scope: int, role: int, hashing: int) -> dict[str, object]:
    text = STATEMENTS[statement]
    engram: dict[str, object] = {
        "id": _id(n),
        "status": "active",
        "scope": SCOPES[scope],
        "statement": text,
        "commitment": ROLES[role],
        "created_at": f"2026-11-01T00:00:{n % 7:02d}.000Z",  # ties in creation, broken by id
    }
    _set_hash(engram, hashing)
    return engram


def _set_hash(engram: dict[str, object], hashing: int) -> None:
    """0: PLUR's own hash of the statement; 1: none (computed); 2: a stale one, of another statement."""
    engram.pop("content_hash", None)
    if hashing == 0:
        engram["content_hash"] = content_hash(str(engram["statement"]))
    elif hashing == 2:
        engram["content_hash"] = content_hash(STATEMENTS[(STATEMENTS.index(str(engram["statement"])) + 1) % 4])


def _apply(engrams: dict[str, dict[str, object]], apart: list[tuple[str, str]], op: tuple[int, ...]) -> None:
    kind, target, a, b = op
    ids = sorted(engrams)
    kind -= 3  # 0 to 3: a new engram (stores grow as they change)
    if kind <= 0 or not ids:
        n = len(ids) + 1
        engrams[_id(n)] = _engram(n, a % len(STATEMENTS), b % len(SCOPES), (a + b) % len(ROLES), a % 3)
        return
    key = ids[target % len(ids)]
    engram = engrams[key] = dict(engrams[key])  # a changed record is replaced, as the session does
    if kind == 1:  # the statement edited (its content_hash follows, as PLUR's update writes it)
        engram["statement"] = STATEMENTS[a % len(STATEMENTS)]
        _set_hash(engram, b % 3)
    elif kind == 2:  # approved
        engram["commitment"] = "decided"
    elif kind == 3:  # rejected, or back again (an undo)
        engram["status"] = "active" if engram["status"] == "retired" else "retired"
    elif kind == 4:
        engram["scope"] = SCOPES[a % len(SCOPES)]
    elif kind == 5:  # the reviewer splits two apart
        other = ids[a % len(ids)]
        if other != engram["id"]:
            apart.append((str(engram["id"]), other))
    elif kind == 6:
        _set_hash(engram, a % 3)
    elif kind == 7:  # back to a draft (an undo of an approve)
        engram["commitment"] = "draft"
    else:
        engram["created_at"] = f"2026-10-{1 + a % 28:02d}T00:00:00.000Z"


# -- the reference: the definition, pair by pair ------------------------------------------------------------------


def _sim(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.round((a.astype(np.float64) * b.astype(np.float64)).sum(), 6))


def reference(
    engrams: list[dict[str, object]], threshold: float, apart: set[tuple[str, str]]
) -> tuple[list[Cluster], dict[str, tuple[float, str]]]:
    items = {}
    for e in engrams:
        if e.get("status") == "active" and isinstance(e.get("statement"), str):
            text = str(e["statement"])
            digest = str(e.get("content_hash") or content_hash(text))
            items[str(e["id"])] = (text, str(e.get("scope", "")), digest, e.get("commitment") == "draft", created_of(e))
    vectors = {i: lexical_vectors([item[0]])[0] for i, item in items.items()}
    same, similar = _reference_links(items, vectors, threshold, apart)
    out = [_reference_cluster(items, group, same, similar) for group in _reference_groups(items, same, similar)]
    out.sort(key=lambda c: (-c.size, c.representative))
    return out, _reference_nearest(items, vectors)


def _reference_links(
    items: dict[str, tuple], vectors: dict[str, np.ndarray], threshold: float, apart: set[tuple[str, str]]
) -> tuple[set[tuple[str, str]], dict[tuple[str, str], float]]:
    ids = sorted(items)
    same: set[tuple[str, str]] = set()
    similar: dict[tuple[str, str], float] = {}
    for x, a in enumerate(ids):
        for b in ids[x + 1 :]:
            (ta, sa, da, fa, _), (tb, sb, db, fb, _) = items[a], items[b]
            if not (fa or fb) or not scopes_overlap(sa, sb) or (a, b) in apart or (b, a) in apart:
                continue
            sim = _sim(vectors[a], vectors[b])
            if da == db:
                same.add((a, b))
            elif sim >= threshold and agreement_key(ta) == agreement_key(tb) and detail_conflict(ta, tb) is None:
                similar[(a, b)] = min(sim, 1.0)
    return same, similar


def _reference_groups(items: dict[str, tuple], same: set, similar: dict) -> list[list[str]]:
    """Same-content links make the first groups (members by id); similar links join them, strongest first."""
    ids = sorted(items)
    parent = {i: i for i in ids}

    def find(x: str) -> str:
        while parent[x] != x:
            x = parent[x]
        return x

    for a, b in same:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    members: dict[str, list[str]] = {}
    for i in ids:
        members.setdefault(find(i), []).append(i)
    for (a, b), _s in sorted(similar.items(), key=lambda kv: (-kv[1], kv[0])):
        ra, rb = find(a), find(b)
        if ra == rb or _conflict(items, members[ra], members[rb]):
            continue
        parent[rb] = ra
        members[ra] = members[ra] + members.pop(rb)
    return [group for group in members.values() if len(group) >= 2 and any(items[i][3] for i in group)]


def _reference_nearest(items: dict[str, tuple], vectors: dict[str, np.ndarray]) -> dict[str, tuple[float, str]]:
    nearest = {}
    approved = [i for i in sorted(items) if not items[i][3]]
    for d in sorted(items):
        if items[d][3] and approved:
            sims = [(_sim(vectors[d], vectors[a]), a) for a in approved]
            top = max(s for s, _a in sims)
            nearest[d] = (top, min(a for s, a in sims if s == top))
    return nearest


def _conflict(items: dict[str, tuple], left: list[str], right: list[str]) -> bool:
    if len(left) * len(right) > 400:
        left, right = left[:20], right[:20]
    return any(
        items[a][2] != items[b][2] and detail_conflict(items[a][0], items[b][0]) is not None
        for a in left
        for b in right
    )


def _reference_cluster(items: dict[str, tuple], group: list[str], same: set, similar: dict) -> Cluster:
    def links(x: str) -> list[tuple[float, str, str]]:  # (weight, kind, other) inside the cluster
        out = []
        for y in group:
            edge = (min(x, y), max(x, y))
            if edge in same:
                out.append((1.0, "content_hash", y))
            elif edge in similar:
                out.append((similar[edge], "similar", y))
        return out

    approved = sorted(i for i in group if not items[i][3])
    if approved:
        rep = min(approved, key=lambda i: (items[i][4], i))
    else:
        rep = min(group, key=lambda i: (-math.fsum(w for w, _k, _o in links(i)), items[i][4], i))
    members = [Member(rep, items[rep][0], items[rep][1], items[rep][3], "representative", 1.0)]
    for i in sorted(group, key=lambda i: (items[i][4], i)):
        if i == rep:
            continue
        found = links(i)
        if any(k == "content_hash" for _w, k, _o in found):
            how, sim = "content_hash", 1.0
        else:
            sim = max(w for w, _k, _o in found)
            other = min(o for w, _k, o in found if w == sim)
            how = f"similar to {other}"
        members.append(Member(i, items[i][0], items[i][1], items[i][3], how, sim))
    return Cluster(rep, tuple(members), tuple(approved))


# -- the properties -----------------------------------------------------------------------------------------------

OPS = st.lists(
    st.tuples(st.integers(0, 11), st.integers(0, 40), st.integers(0, 40), st.integers(0, 40)), min_size=1, max_size=40
)


def _fresh(engrams: list[dict[str, object]], threshold: float, apart: list[tuple[str, str]]) -> ClusterIndex:
    index = ClusterIndex(threshold=threshold)
    for a, b in apart:
        index.keep_apart(a, [b])
    index.update(engrams, created_of)
    return index


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS, threshold=st.sampled_from([0.6, 0.3]))
def test_upkeep_change_by_change_equals_a_fresh_computation_and_the_definition(ops, threshold) -> None:
    with small_vector_chunks():
        _check_upkeep(ops, threshold)


def _check_upkeep(ops: list[tuple[object, ...]], threshold: float) -> None:
    engrams: dict[str, dict[str, object]] = {}
    apart: list[tuple[str, str]] = []
    index = ClusterIndex(threshold=threshold)
    for op in ops:
        before = len(apart)
        _apply(engrams, apart, op)
        for a, b in apart[before:]:
            index.keep_apart(a, [b])
        index.update(list(engrams.values()), created_of)  # unchanged records are the same objects
        listed = [dict(e) for e in engrams.values()]
        fresh = _fresh(listed, threshold, apart)
        assert index.clusters() == fresh.clusters()
        assert dict(index.nearest_approved) == dict(fresh.nearest_approved)
        clusters, nearest = reference(listed, threshold, set(apart))
        assert fresh.clusters() == clusters
        assert dict(fresh.nearest_approved) == nearest


def test_the_strongest_link_decides_a_chain_whatever_order_the_drafts_came_in() -> None:
    """weekdays ~ both (0.85) ~ weekends (0.86), and weekdays/weekends is a swapped detail: the stronger link joins
    first, so "weekends" stays with "both" and "weekdays" stays out, added in any order."""
    drafts = [_engram(n, STATEMENTS.index(text), 1, 0, 0) for n, text in enumerate(STATEMENTS[12:15], start=1)]
    for order in ([0, 1, 2], [2, 1, 0], [1, 0, 2]):
        index = ClusterIndex(threshold=0.6)
        for k in range(1, 4):
            index.update([drafts[i] for i in order[:k]], created_of)
        assert [{m.statement for m in c.members} for c in index.clusters()] == [
            {"Deploys happen only on weekends", "Deploys happen only on weekdays and weekends"}
        ]
