"""One matrix of engram vectors for similarity, built once and then updated by id, instead of stacking every
vector again for each selection or query.

Rows are engrams (by id) whose content_hash has a vector; an engram whose vector is not computed yet waits under
its hash and gets its row when the vector arrives. A changed engram keeps its row (new vector written in place);
a removed one is masked. Readers (the read pool) and writers (the thread that syncs the search index) share one
lock: a query is one matrix product, an update a few rows.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping

import numpy as np

Pairs = Iterable[tuple[str, str]]  # (engram id, content_hash)


class VectorMatrix:
    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._lock = threading.Lock()
        self._store = np.zeros((0, dim), dtype=np.float32)  # capacity; rows [0, len(ids)) are in use
        self._matrix = self._store
        self._live = np.zeros(0, dtype=bool)
        self._ids: list[str] = []
        self._row: dict[str, int] = {}
        self._hash: dict[str, str] = {}  # engram id -> content_hash it is listed under (row or waiting)
        self._waiting: dict[str, set[str]] = {}  # content_hash without a vector yet -> engram ids
        self._vectors_seen = -1

    @property
    def built(self) -> bool:
        return self._vectors_seen >= 0

    def __len__(self) -> int:
        return int(self._live[: len(self._ids)].sum())

    def rebuild(self, pairs: Pairs, vectors: Mapping[str, np.ndarray]) -> None:
        """Every engram at once (after opening, or after PLUR rewrote the file)."""
        with self._lock:
            self._store = self._matrix = np.zeros((0, self.dim), dtype=np.float32)
            self._live = np.zeros(0, dtype=bool)
            self._ids, self._row, self._hash, self._waiting = [], {}, {}, {}
            self._place(list(pairs), vectors)
            self._vectors_seen = len(vectors)

    def update(self, changed: Mapping[str, str | None], vectors: Mapping[str, np.ndarray]) -> None:
        """These engrams changed: id -> its content_hash now, or None when it left the store."""
        with self._lock:
            present = []
            for engram_id, digest in changed.items():
                old = self._hash.pop(engram_id, None)
                if old is not None and engram_id in self._waiting.get(old, ()):
                    self._waiting[old].discard(engram_id)
                row = self._row.get(engram_id)
                if row is not None:
                    self._live[row] = False
                if digest is not None:
                    present.append((engram_id, digest))
            self._place(present, vectors)

    def take_new_vectors(self, vectors: Mapping[str, np.ndarray]) -> int:
        """Vectors computed since (the embedding process writes them as it goes): rows for the engrams waiting."""
        if len(vectors) == self._vectors_seen:
            return 0
        with self._lock:
            ready = [h for h in self._waiting if h in vectors]
            pairs = [(engram_id, h) for h in ready for engram_id in self._waiting.pop(h)]
            self._place(pairs, vectors)
            self._vectors_seen = len(vectors)
            return len(pairs)

    def _place(self, pairs: list[tuple[str, str]], vectors: Mapping[str, np.ndarray]) -> None:
        new_ids: list[str] = []
        new_rows: list[np.ndarray] = []
        for engram_id, digest in pairs:
            self._hash[engram_id] = digest
            vector = vectors.get(digest)
            if vector is None:
                self._waiting.setdefault(digest, set()).add(engram_id)
                continue
            row = self._row.get(engram_id)
            if row is None:
                self._row[engram_id] = len(self._ids) + len(new_ids)
                new_ids.append(engram_id)
                new_rows.append(np.asarray(vector, dtype=np.float32))
            elif row >= len(self._ids):  # listed twice in this batch: the later one holds
                new_rows[row - len(self._ids)] = np.asarray(vector, dtype=np.float32)
            else:
                self._matrix[row] = vector
                self._live[row] = True
        if new_rows:
            used, more = len(self._ids), len(new_rows)
            if used + more > len(self._store):  # grown by doubling: appending one engram copies nothing
                store = np.zeros((max(2 * len(self._store), used + more, 64), self.dim), dtype=np.float32)
                store[:used] = self._store[:used]
                live = np.zeros(len(store), dtype=bool)
                live[:used] = self._live[:used]
                self._store, self._live = store, live
            self._store[used : used + more] = np.stack(new_rows)
            self._live[used : used + more] = True
            self._ids.extend(new_ids)
        self._matrix = self._store[: len(self._ids)]

    def nearest(
        self, vector: np.ndarray, k: int, *, exclude: str | None = None, among: set[str] | None = None
    ) -> list[tuple[str, float]]:
        """The k rows closest to `vector` by cosine (rows are unit vectors), best first; `among` narrows them."""
        with self._lock:
            if not len(self._ids):
                return []
            scores = self._matrix @ np.asarray(vector, dtype=np.float32)
            mask = ~self._live[: len(self._ids)]
            if exclude is not None and exclude in self._row:
                mask = mask.copy()
                mask[self._row[exclude]] = True
            if among is not None:
                allowed = np.zeros(len(self._ids), dtype=bool)
                rows = [self._row[i] for i in among if i in self._row]
                allowed[rows] = True
                mask = mask | ~allowed
            scores = np.where(mask, -np.inf, scores)
            count = int((~mask).sum())
            if count == 0:
                return []
            take = min(k, count)
            top = np.argpartition(-scores, take - 1)[:take] if take < len(scores) else np.arange(len(scores))
            top = top[np.argsort(-scores[top], kind="stable")][:take]
            return [(self._ids[i], float(scores[i])) for i in top if not mask[i]]
