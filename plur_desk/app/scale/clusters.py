"""Clusters of near-duplicate drafts, kept up to date as engrams arrive, change and leave, at the cost of what changed.

Two engrams join when either is a draft, their scopes can meet in one session (PLUR's rule: equal, or either
global) and either their content_hash is equal or their vectors are at least `threshold` alike and no detail keeps
them apart (`domain.near_duplicate`); `cluster_graph` holds the links and cuts them into clusters. Approved
engrams take part so a cluster can say "already approved as ENG-…", and so each draft knows how close the
nearest approved engram is (novelty, for the risk order).

Upkeep: an engram whose statement, scope, role, content_hash or creation changed leaves and comes back; only the
engrams that came are compared (their vectors' rows against every vector's row of the table, in numpy, which
frees the interpreter lock), and only the graph's parts they touch are cut again. Vectors are the rows of a
`VectorTable` (search's cache when embeddings are used), named by index and never copied. A similarity is the
exact one of `exact_similarity`, so the result is the same whatever order the engrams came in: `update` after any
sequence of changes gives what one `update` of the final engrams gives (tests/unit/app/test_clusters_upkeep.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import compress, filterfalse
from operator import is_not
from pathlib import Path

import numpy as np

from plur_desk.app.scale.cluster_graph import Cluster, Graph, Item, Member, pair
from plur_desk.app.scale.cluster_pairs import Compared, Slots, compare
from plur_desk.domain.plur_rules.derived import content_hash
from plur_desk.domain.similar.near_duplicate import agreement_key, detail_conflict
from plur_desk.index.embeddings import DIM, Embedder, VectorCache
from plur_desk.index.near_dupes import lexical_vectors
from plur_desk.index.vector_matrix import VectorTable
from plur_desk.infra.jobs import checkpoint, checkpoints

__all__ = [
    "IN_PROCESS_MAX",
    "THRESHOLDS",
    "Cluster",
    "ClusterIndex",
    "Member",
    "changed_ids",
    "embedding_vectorizer",
    "make_cluster_index",
]

THRESHOLDS = {"embedding": 0.82, "lexical": 0.6}  # precision >= 0.95 on tests/data/near_duplicate_pairs.txt
# statements without a vector the window's clusters embed themselves (a few seconds of the model at most); with
# more, they wait for the embedding process (`ScaleView.open(wait_for_vectors=True)`)
IN_PROCESS_MAX = 256
Vectorizer = Callable[[list[str]], np.ndarray]
# statements vectorized at a time: a block's word vectors are 16 MB, not the whole store's at once (at 50,000
# engrams two 400 MB temporaries, allocated and freed while the window ran: its thread stalled 111-290 ms)
VECTORIZE_BLOCK = 2048


class TableVectors:
    """Vectors of statements in a table of the index's own, by statement (word overlap, or a test's vectorizer)."""

    def __init__(self, vectorize: Vectorizer) -> None:
        self.vectorize = vectorize
        self.table: VectorTable | None = None

    def rows(self, statements: list[str]) -> np.ndarray:
        missing = [s for s in dict.fromkeys(statements) if self.table is None or s not in self.table]
        for start in range(0, len(missing), VECTORIZE_BLOCK):
            block = missing[start : start + VECTORIZE_BLOCK]
            checkpoint()
            vectors = np.asarray(self.vectorize(block), dtype=np.float32)
            if self.table is None:
                self.table = VectorTable(vectors.shape[1])
            for statement, vector in zip(block, vectors, strict=True):
                self.table.put(statement, vector)
        table = self.table
        return np.array([table.row(s) for s in statements] if table is not None else [], dtype=np.int64)


class EmbeddingVectors:
    """Sentence vectors through the content_hash-keyed cache the search index shares: rows of its table, each
    statement embedded only when the cache has no vector for it yet."""

    def __init__(self, embed: Vectorizer, cache: VectorCache) -> None:
        self.embed = embed
        self.cache = cache

    @property
    def table(self) -> VectorTable:
        return self.cache.vectors

    def rows(self, statements: list[str]) -> np.ndarray:
        hash_of = self.cache.keys_of(statements)  # each text hashed once, shared with search
        hashes = [hash_of[s] for s in statements]
        missing = self.cache.missing(hashes)
        if missing:
            first = {h: s for h, s in zip(hashes, statements, strict=True)}
            self.cache.add(missing, self.embed([first[h] for h in missing]))
        return np.array([self.table.row(h) for h in hashes], dtype=np.int64)

    def __call__(self, statements: list[str]) -> np.ndarray:
        """The vectors themselves (a copy: for scripts and tests, not for the index)."""
        rows = self.rows(statements)
        return self.table.gather(rows) if len(rows) else np.zeros((0, DIM), dtype=np.float32)


class NearestApproved(Mapping[str, tuple[float, str]]):
    """Draft id -> (similarity, id) of the approved engram most like it (ties: the lowest id). Kept per vector row:
    drafts with one statement share it."""

    def __init__(self, index: ClusterIndex) -> None:
        self._index = index

    def __getitem__(self, ident: str) -> tuple[float, str]:
        item = self._index.items.get(ident)
        found = self._index.best.get(item.vrow) if item is not None and item.draft else None
        if found is None:
            raise KeyError(ident)
        return found

    def __iter__(self) -> Iterator[str]:
        best = self._index.best
        return (i for i, item in self._index.items.items() if item.draft and item.vrow in best)

    def __len__(self) -> int:
        return sum(1 for _ in self)


class ClusterIndex:
    def __init__(
        self,
        vectorize: Vectorizer | EmbeddingVectors = lexical_vectors,
        threshold: float = THRESHOLDS["lexical"],
        mode: str = "lexical",
        cache: VectorCache | None = None,
    ) -> None:
        self.vectorize = vectorize
        self.threshold = threshold
        self.mode = mode
        self.cache = cache
        self._source = vectorize if isinstance(vectorize, EmbeddingVectors) else TableVectors(vectorize)
        self._start_over(Graph({}))

    def _start_over(self, old: Graph) -> None:
        """Empty state (the reviewer's splits kept): the next update computes everything afresh."""
        self.items: dict[str, Item] = {}
        self.graph = Graph(self.items)
        self.graph.apart = old.apart
        self.slots = Slots()
        self.best: dict[int, tuple[float, str]] = {}  # vector row of drafts -> nearest approved (similarity, id)
        self.nearest_approved = NearestApproved(self)
        self._rescan: set[int] = set()  # vector rows whose nearest approved engram left
        self._keys: dict[tuple[tuple[str, ...], bool], int] = {}
        self._records: Mapping[str, dict[str, object]] = {}  # each engram's record as last read
        self._row_drafts: dict[int, set[str]] = {}  # vector row -> the drafts with that statement
        self._near_changed: set[str] | None = None  # drafts whose nearest approved may have moved (None: all)

    # -- maintenance -----------------------------------------------------------------------------------------

    def update(
        self,
        engrams: Iterable[dict[str, object]] | Mapping[str, dict[str, object]],
        created_of: Callable[[dict[str, object]], str],
        diff: set[str] | None = None,
    ) -> int:
        """Take the store's engrams (a list, or a dict by id that is not changed afterwards); returns how many were
        (re)compared. Retired ones simply leave.

        A record that is the very object seen last time is unchanged (the session replaces the record of an engram
        that changed, and never edits one in place: the draft queue relies on the same), so only the others are
        read: given a dict, a change of one engram at 50,000 costs a few passes in C over the ids, not a pass of
        Python over every engram. `diff`: those ids, when the caller found them already against `seen`."""
        records, items = self._records, self.items
        now: Mapping[str, dict[str, object]] = (
            engrams if isinstance(engrams, Mapping) else {str(engram.get("id")): engram for engram in engrams}
        )
        wanted: dict[str, tuple[object, ...] | None] = {}
        for ident in diff if diff is not None else changed_ids(records, now):
            engram: dict[str, object] | None = now.get(ident)
            statement = engram.get("statement") if engram is not None else None
            if engram is None or engram.get("status") != "active" or not isinstance(statement, str):
                wanted[ident] = None
                continue
            scope, draft = str(engram.get("scope", "")), engram.get("commitment") == "draft"
            wanted[ident] = (statement, scope, draft, engram.get("content_hash"), created_of(engram))
        changed = [i for i, seen in wanted.items() if seen is not None and (i not in items or items[i].seen != seen)]
        before = {i: items[i] for i in changed if i in items}
        left = [i for i, seen in wanted.items() if seen is None and i in items]
        try:
            self._drop(left + list(before))
            self._add([self._item(i, wanted[i], before.get(i)) for i in changed])  # type: ignore[arg-type]
            self.graph.settle()
        except BaseException:
            # Half an update (the model or its cache failed, memory ran out) would stay half: the records it took
            # count as seen, so later updates skip them. Start over instead; the next update recomputes it all.
            self._start_over(self.graph)
            raise
        self._records = now
        return len(changed)

    @property
    def seen(self) -> Mapping[str, dict[str, object]]:
        """The records of the last update (empty after a failed one)."""
        return self._records

    def take_near_changed(self) -> set[str] | None:
        """The drafts whose nearest approved engram may have changed since the last call (None: any of them)."""
        moved, self._near_changed = self._near_changed, set()
        return moved

    def _item(self, ident: str, seen: tuple[object, ...], before: Item | None) -> Item:
        statement, scope, draft, digest, created = seen
        assert isinstance(statement, str) and isinstance(draft, bool) and isinstance(created, str)
        same_text = before is not None and before.statement == statement
        if same_text and before is not None and before.seen[3] == digest:
            digest = before.digest
        else:
            digest = str(digest or content_hash(statement))
        item = Item(ident, statement, str(scope), str(digest), draft, created, seen)
        if same_text and before is not None:  # the same statement: the same vector row and agreement key
            item.vrow, item.key = before.vrow, before.key
        return item

    def _drop(self, gone: list[str]) -> None:
        left_approved = set()
        for ident in gone:
            item = self.items.pop(ident)
            self.slots.live[item.slot] = False
            self.graph.leave(item)
            if not item.draft:
                left_approved.add(ident)
            elif item.vrow in self._row_drafts:
                self._row_drafts[item.vrow].discard(ident)
                self._near(ident)
        if left_approved:
            self._rescan.update(row for row, (_s, a) in self.best.items() if a in left_approved)

    def _add(self, added: list[Item]) -> None:
        fresh = [item for item in added if item.vrow < 0]
        for item, row in zip(fresh, self._source.rows([i.statement for i in fresh]).tolist(), strict=True):
            item.vrow = row
        for item in added:
            if item.key < 0:
                item.key = self._keys.setdefault(agreement_key(item.statement), len(self._keys))
        new = self.slots.add(added)
        for item in added:
            self.items[item.id] = item
            self.graph.join(item)
            if item.draft:
                self._row_drafts.setdefault(item.vrow, set()).add(item.id)
                self._near(item.id)
        table = self._source.table
        if table is None or (not added and not self._rescan):
            return
        found = compare(table, self.slots, new, self._rescan, self.best, self.threshold)
        self._rescan.clear()
        self._take(found)
        self.slots.compact_if_sparse(self.items)

    def _take(self, found: Compared) -> None:
        ids = self.slots.ids
        for left, right, sim in checkpoints(found.similar):  # (a detail check per link: steps, infra/turns.py)
            a, b = self.items[ids[left]], self.items[ids[right]]
            if a.id > b.id:
                a, b = b, a
            if not self.graph.is_apart(a.id, b.id) and detail_conflict(a.statement, b.statement) is None:
                self.graph.link(a.id, b.id, min(sim, 1.0))
        best = self.best
        moved = [r for r in found.cleared if r in best] + [r for r, v in found.nearest.items() if best.get(r) != v]
        for row in found.cleared:
            best.pop(row, None)
        best.update(found.nearest)
        for row in moved:
            for ident in self._row_drafts.get(row, ()):
                self._near(ident)

    def _near(self, ident: str) -> None:
        if self._near_changed is not None:
            self._near_changed.add(ident)

    def keep_apart(self, ident: str, others: list[str]) -> None:
        """A reviewer's split: these pairs never join again while this index lives."""
        self.graph.keep_apart(ident, others)
        self.graph.settle(for_reviewer=True)

    # -- queries ---------------------------------------------------------------------------------------------

    def clusters(self) -> list[Cluster]:
        return self.graph.clusters()

    def cluster_of(self) -> dict[str, Cluster]:
        return {m.id: c for c in self.clusters() for m in c.members}

    def similar_links(self) -> dict[tuple[str, str], float]:
        """Every similar link (same-content links follow from the content_hashes), for tests and scripts."""
        return {pair(a, b): s for a, links in self.graph.similar.items() for b, s in links.items()}


def changed_ids(before: Mapping[str, object], after: Mapping[str, object]) -> set[str]:
    """The ids whose record is not the very object it was (changed, came or left), found by passes in C (no Python
    per engram: at 50,000 a Python pass holds the interpreter lock for milliseconds)."""
    ids = list(after)
    olds = list(map(before.get, ids))
    changed = set(compress(ids, map(is_not, olds, after.values())))
    if len(before) != len(ids) - olds.count(None):  # some left (no set of every key built when none did)
        changed.update(filterfalse(after.__contains__, before))
    return changed


def embedding_vectorizer(embed: Vectorizer, cache: VectorCache) -> EmbeddingVectors:
    """Sentence vectors through the content_hash-keyed cache the search index shares; only new text is embedded."""
    return EmbeddingVectors(embed, cache)


def make_cluster_index(cache_path: Path | None, semantic: bool = True) -> ClusterIndex:
    """Embeddings when the model is installed (and wanted), else word overlap; each with its own threshold."""
    embedder = Embedder.load() if semantic else None  # the session search uses
    if embedder is None:
        return ClusterIndex()
    cache = VectorCache.open(cache_path)  # search's vectors, when it has the store open
    return ClusterIndex(embedding_vectorizer(embedder.embed, cache), THRESHOLDS["embedding"], "embedding", cache=cache)
