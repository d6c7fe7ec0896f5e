"""Clusters of near-duplicate drafts, kept up to date incrementally as drafts arrive and leave.

Two engrams join when their scopes can meet in one session (PLUR's rule: equal, or either global) and either
their content_hash is equal or their vectors are at least `threshold` alike and no detail keeps them apart
(`domain.near_duplicate`). Approved engrams take part so a cluster can say "already approved as ENG-…", and so
each draft knows how close the nearest approved engram is (novelty, for the risk order).

Incremental: only new or changed engrams are embedded and compared (new rows against every live row); a draft
that left only drops its edges. Clusters are the connected parts of the edge graph, joined strongest edge first
and never across a detail conflict, so a chain cannot carry "Node 20" into a cluster with "Node 22".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from plur_desk.domain.derived import content_hash
from plur_desk.domain.near_duplicate import agreement_key, detail_conflict, scopes_overlap
from plur_desk.index.embeddings import Embedder, VectorCache
from plur_desk.index.near_dupes import lexical_vectors, pairs_above, similarity_blocks

THRESHOLDS = {"embedding": 0.82, "lexical": 0.6}  # precision >= 0.95 on tests/data/near_duplicate_pairs.txt
Vectorizer = Callable[[list[str]], np.ndarray]


@dataclass(frozen=True)
class Member:
    id: str
    statement: str
    scope: str
    draft: bool
    joined_by: str  # "representative", "content_hash", or "similar 0.93 to ENG-…"
    similarity: float


@dataclass(frozen=True)
class Cluster:
    representative: str
    members: tuple[Member, ...]
    approved: tuple[str, ...]  # members that are already approved engrams

    @property
    def drafts(self) -> list[str]:
        return [m.id for m in self.members if m.draft]

    @property
    def size(self) -> int:
        return len(self.members)


@dataclass
class _Item:
    id: str
    statement: str
    scope: str
    digest: str
    draft: bool
    created: str
    row: int


@dataclass
class ClusterIndex:
    vectorize: Vectorizer = lexical_vectors
    threshold: float = THRESHOLDS["lexical"]
    mode: str = "lexical"
    cache: VectorCache | None = None
    apart: set[tuple[str, str]] = field(default_factory=set)  # pairs the reviewer split
    items: dict[str, _Item] = field(default_factory=dict)
    edges: dict[tuple[str, str], tuple[float, str]] = field(default_factory=dict)
    nearest_approved: dict[str, tuple[float, str]] = field(default_factory=dict)
    _vectors: np.ndarray | None = None
    _live: np.ndarray | None = None
    _row_ids: list[str] = field(default_factory=list)
    _keys: np.ndarray | None = None  # per row: an id of agreement_key(statement)
    _key_ids: dict[tuple[tuple[str, ...], bool], int] = field(default_factory=dict)

    # -- maintenance -----------------------------------------------------------------------------------------

    def update(self, engrams: Iterable[dict[str, object]], created_of: Callable[[dict[str, object]], str]) -> int:
        """Take the store's active engrams; returns how many were (re)compared. Retired ones simply leave."""
        wanted: dict[str, _Item] = {}
        for engram in engrams:
            if engram.get("status") != "active" or not isinstance(engram.get("statement"), str):
                continue
            statement = str(engram["statement"])
            digest = str(engram.get("content_hash") or content_hash(statement))
            ident = str(engram.get("id"))
            draft = engram.get("commitment") == "draft"
            wanted[ident] = _Item(ident, statement, str(engram.get("scope", "")), digest, draft, created_of(engram), -1)
        gone = {i for i, item in self.items.items() if _key(item) != _key(wanted.get(i))}
        if gone:
            self._drop(gone)
        added = [item for ident, item in wanted.items() if ident not in self.items]
        if added:
            self._add(added)
        return len(added)

    def _drop(self, gone: set[str]) -> None:
        for ident in gone:
            item = self.items.pop(ident)
            if self._live is not None:
                self._live[item.row] = False
            self.nearest_approved.pop(ident, None)
        self.edges = {k: v for k, v in self.edges.items() if k[0] not in gone and k[1] not in gone}
        stale = [d for d, (_s, a) in self.nearest_approved.items() if a in gone]
        for draft in stale:
            self.nearest_approved.pop(draft)
            self._rescan_nearest(draft)

    def _add(self, added: list[_Item]) -> None:
        vectors = np.asarray(self.vectorize([i.statement for i in added]), dtype=np.float32)  # no copy
        keys = np.array(
            [self._key_ids.setdefault(agreement_key(i.statement), len(self._key_ids)) for i in added], dtype=np.int64
        )
        start = 0 if self._vectors is None else self._vectors.shape[0]
        if self._vectors is None or self._live is None or self._keys is None:
            self._vectors, self._live, self._keys = vectors, np.ones(len(added), dtype=bool), keys
        else:
            self._vectors = np.vstack([self._vectors, vectors])
            self._live = np.concatenate([self._live, np.ones(len(added), dtype=bool)])
            self._keys = np.concatenate([self._keys, keys])
        for offset, item in enumerate(added):
            item.row = start + offset
            self.items[item.id] = item
            self._row_ids.append(item.id)
        approved = np.array([not self.items[i].draft if i in self.items else False for i in self._row_ids])
        approved &= self._live
        for first, sims in similarity_blocks(self._vectors, start, self._live):
            self._note_nearest(first, sims, approved)
            for i, j, sim in pairs_above(sims, first, self.threshold, self._keys):
                self._consider(self.items[self._row_ids[i]], self.items[self._row_ids[j]], sim)
        self._exact_pairs(added)
        self._compact_if_sparse()

    def _exact_pairs(self, added: list[_Item]) -> None:
        by_hash: dict[str, list[_Item]] = {}
        for item in self.items.values():
            by_hash.setdefault(item.digest, []).append(item)
        for item in added:
            for other in by_hash.get(item.digest, []):
                pair = _pair(item.id, other.id)
                if other.id == item.id or pair in self.apart or not (item.draft or other.draft):
                    continue
                if scopes_overlap(item.scope, other.scope):
                    self.edges[pair] = (1.0, "content_hash")

    def keep_apart(self, ident: str, others: list[str]) -> None:
        """A reviewer's split: these pairs never join again while this index lives."""
        for other in others:
            self.apart.add(_pair(ident, other))
            self.edges.pop(_pair(ident, other), None)

    def _consider(self, a: _Item, b: _Item, sim: float) -> None:
        if not (a.draft or b.draft) or not scopes_overlap(a.scope, b.scope) or _pair(a.id, b.id) in self.apart:
            return
        if a.digest == b.digest:
            self.edges[_pair(a.id, b.id)] = (1.0, "content_hash")
        elif detail_conflict(a.statement, b.statement) is None:
            self.edges[_pair(a.id, b.id)] = (min(sim, 1.0), "similar")

    def _note_nearest(self, first: int, sims: np.ndarray, approved_cols: np.ndarray) -> None:
        """`approved_cols`: the live rows that are approved engrams (the same for every block of one update)."""
        for r in range(sims.shape[0]):
            item = self.items[self._row_ids[first + r]]
            row = sims[r]
            if item.draft and approved_cols.any():
                col = int(np.argmax(np.where(approved_cols, row, -2.0)))
                self._offer(item.id, float(row[col]), self._row_ids[col])
            elif not item.draft:
                for col in np.nonzero(row >= 0.5)[0].tolist():
                    other = self.items.get(self._row_ids[col])
                    if other is not None and other.draft and col != first + r:
                        self._offer(other.id, float(row[col]), item.id)

    def _offer(self, draft: str, sim: float, approved: str) -> None:
        if sim > self.nearest_approved.get(draft, (-2.0, ""))[0]:
            self.nearest_approved[draft] = (sim, approved)

    def _rescan_nearest(self, draft: str) -> None:
        item = self.items.get(draft)
        if item is None or self._vectors is None or self._live is None:
            return
        sims = self._vectors[item.row] @ self._vectors.T
        for col in np.argsort(-sims).tolist():
            other = self.items.get(self._row_ids[col])
            if self._live[col] and other is not None and not other.draft:
                self.nearest_approved[draft] = (float(sims[col]), other.id)
                return

    def _compact_if_sparse(self) -> None:
        if self._vectors is None or self._live is None or self._live.sum() * 2 >= len(self._live):
            return
        keep = np.nonzero(self._live)[0]
        self._vectors = self._vectors[keep]
        self._keys = self._keys[keep] if self._keys is not None else None
        self._row_ids = [self._row_ids[r] for r in keep.tolist()]
        self._live = np.ones(len(keep), dtype=bool)
        for row, ident in enumerate(self._row_ids):
            self.items[ident].row = row

    # -- queries ---------------------------------------------------------------------------------------------

    def clusters(self) -> list[Cluster]:
        parent: dict[str, str] = {}
        members: dict[str, list[str]] = {}

        def find(x: str) -> str:
            while parent.get(x, x) != x:
                x = parent[x]
            return x

        for (a, b), (_sim, _how) in sorted(self.edges.items(), key=lambda kv: -kv[1][0]):
            ra, rb = find(a), find(b)
            if ra == rb or self._cannot_link(members.get(ra, [ra]), members.get(rb, [rb])):
                continue
            parent[rb] = ra
            members[ra] = members.get(ra, [ra]) + members.pop(rb, [rb])
        out = [self._cluster(ids) for ids in members.values()]
        out = [c for c in out if len(c.drafts) >= 1 and c.size >= 2]
        out.sort(key=lambda c: (-c.size, c.representative))
        return out

    def _cannot_link(self, left: list[str], right: list[str]) -> bool:
        if len(left) * len(right) > 400:
            left, right = left[:20], right[:20]
        for a in left:
            for b in right:
                ia, ib = self.items[a], self.items[b]
                if ia.digest != ib.digest and detail_conflict(ia.statement, ib.statement) is not None:
                    return True
        return False

    def _cluster(self, ids: list[str]) -> Cluster:
        items = [self.items[i] for i in ids]
        approved = sorted(i.id for i in items if not i.draft)
        rep = self._representative(items)
        out = [Member(rep.id, rep.statement, rep.scope, rep.draft, "representative", 1.0)]
        for item in sorted(items, key=lambda i: (i.created, i.id)):
            if item.id == rep.id:
                continue
            sim, how = self._link(item.id, ids)
            out.append(Member(item.id, item.statement, item.scope, item.draft, how, sim))
        return Cluster(rep.id, tuple(out), tuple(approved))

    def _representative(self, items: list[_Item]) -> _Item:
        """An approved member if there is one; else the draft most like the others (ties: the oldest)."""
        approved = [i for i in items if not i.draft]
        if approved:
            return min(approved, key=lambda i: (i.created, i.id))
        degree = {i.id: 0.0 for i in items}
        for x in items:
            for y in items:
                edge = self.edges.get(_pair(x.id, y.id)) if x.id < y.id else None
                if edge is not None:
                    degree[x.id] += edge[0]
                    degree[y.id] += edge[0]
        return min(items, key=lambda i: (-degree[i.id], i.created, i.id))

    def _link(self, ident: str, ids: list[str]) -> tuple[float, str]:
        best = (0.0, "")
        for other in ids:
            edge = self.edges.get(_pair(ident, other))
            if edge is not None and edge[0] > best[0]:
                best = (edge[0], "content_hash" if edge[1] == "content_hash" else f"similar to {other}")
        return best

    def cluster_of(self) -> dict[str, Cluster]:
        return {m.id: c for c in self.clusters() for m in c.members}


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


def _key(item: _Item | None) -> tuple[object, ...] | None:
    return None if item is None else (item.statement, item.scope, item.draft)


def embedding_vectorizer(embed: Vectorizer, cache: VectorCache) -> Vectorizer:
    """Sentence vectors through the content_hash-keyed cache the search index shares; only new text is embedded."""

    def vectorize(statements: list[str]) -> np.ndarray:
        hashes = [content_hash(s) for s in statements]
        missing = cache.missing(hashes)
        if missing:
            first = {h: s for h, s in zip(hashes, statements, strict=True)}
            cache.add(missing, embed([first[h] for h in missing]))
        return np.stack([cache.vectors[h] for h in hashes]) if hashes else np.zeros((0, 384), dtype=np.float32)

    return vectorize


def make_cluster_index(cache_path: Path | None, semantic: bool = True) -> ClusterIndex:
    """Embeddings when the model is installed (and wanted), else word overlap; each with its own threshold."""
    embedder = Embedder.load() if semantic else None  # the session search uses
    if embedder is None:
        return ClusterIndex()
    cache = VectorCache.open(cache_path)  # search's vectors, when it has the store open
    return ClusterIndex(embedding_vectorizer(embedder.embed, cache), THRESHOLDS["embedding"], "embedding", cache=cache)
