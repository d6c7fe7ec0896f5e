"""One matrix of engram vectors for similarity, built once and then updated by id, instead of stacking every
vector again for each selection or query.

Rows are engrams (by id) whose statement's content hash has a vector; an engram whose vector is not computed yet waits under
its hash and gets its row when the vector arrives. A changed engram keeps its row (pointed at its new vector); a
removed one is masked. A row holds no vector of its own: it names the row of the `VectorTable` (the vector cache)
that holds it, so the vectors are in memory once; a plain mapping (a script, a test) is copied into a table of
the matrix's own. Readers (the read pool) and writers (the thread that syncs the search index) share one lock: a
query is one matrix product over the table, an update a few rows.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping

import numpy as np

Pairs = Iterable[tuple[str, str]]  # (engram id, the content hash of its statement: the key of its vector)
CHUNK = 4096  # rows per chunk of a VectorTable


def zeroed(shape: tuple[int, ...], dtype: type = np.float32) -> np.ndarray:
    """A zero-filled array whose memory is touched now, in one loop of numpy's that releases the interpreter lock
    (`fill`). An `np.zeros` array is mapped lazily: its pages were faulted in one by one as Python wrote rows
    into it, each fault inside a write that held the lock, and on this machine kind, with numpy's transparent huge
    pages, those faults were slow: filling the clusters' 20,000 x 2,048 word vectors stalled a 10 ms timer on the
    window's thread by 21 ms at p90 and 50 ms at most (0.9-1.9 / 3.6-5.3 ms with this, three runs; the fill's own
    time, 1.2-6 s, depends on how warm the machine's memory is either way)."""
    out: np.ndarray = np.empty(shape, dtype=dtype)
    out.fill(0)
    return out


class VectorTable(Mapping[str, np.ndarray]):
    """Vectors by key, stored once in chunks of CHUNK rows: a vector never moves once written, so growing copies
    nothing, and `VectorMatrix` refers to rows instead of copying them. Written by one thread at a time (its
    owner's lock); read from any: a row is published after its vector is written.

    `stored`: the element type kept. The vector cache keeps float16, as its file holds them: 50,000 embeddings are
    38 MB instead of 77, a vector read back from the file is the same either way, and a freshly computed one is
    rounded as saving and reopening would round it. Tables of exact values (the clusters' word-overlap vectors)
    keep float32. Whatever is read out is float32: a looked-up vector (a copy), `gather`'s rows, `dot`'s
    products; `chunks` gives the stored views."""

    def __init__(self, dim: int, stored: type = np.float32) -> None:
        self.dim, self.stored = dim, stored
        self._chunks: list[np.ndarray] = []
        self._row: dict[str, int] = {}
        self._keys: list[str] = []  # by row

    def __len__(self) -> int:
        return len(self._row)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys[: len(self._row)])

    def __contains__(self, key: object) -> bool:
        return key in self._row

    def __getitem__(self, key: str) -> np.ndarray:
        row = self._row[key]
        vector: np.ndarray = self._chunks[row // CHUNK][row % CHUNK].astype(np.float32)
        return vector

    def get(self, key: str, default: np.ndarray | None = None) -> np.ndarray | None:  # type: ignore[override]
        row = self._row.get(key)
        return default if row is None else self._chunks[row // CHUNK][row % CHUNK].astype(np.float32)

    def row(self, key: str) -> int | None:
        return self._row.get(key)

    def put(self, key: str, vector: np.ndarray) -> int:
        row = self._row.get(key)
        if row is None:
            row = len(self._keys)
            if row // CHUNK == len(self._chunks):
                self._chunks.append(zeroed((CHUNK, self.dim), self.stored))
            self._chunks[row // CHUNK][row % CHUNK] = vector
            self._keys.append(key)
            self._row[key] = row
        else:
            self._chunks[row // CHUNK][row % CHUNK] = vector
        return row

    def adopt(self, keys: list[str], matrix: np.ndarray) -> bool:
        """Into an empty table: `matrix`'s rows (one per key, all distinct, of the stored type) become its own, its
        chunks views of `matrix` instead of copies (a vector cache file read at open is not held twice while it is
        copied in: 38 MB at 50,000). False, and nothing changed, when that cannot be done (then `put` each)."""
        count = len(keys)
        if (
            self._keys
            or matrix.dtype != self.stored
            or matrix.shape != (count, self.dim)
            or not matrix.flags.c_contiguous
            or not matrix.flags.writeable
            or len(set(keys)) != count
        ):
            return False
        full = count - count % CHUNK
        chunks = [matrix[start : start + CHUNK] for start in range(0, full, CHUNK)]
        if full < count:  # the last chunk has room for more rows (`put` appends there)
            last = zeroed((CHUNK, self.dim), self.stored)
            last[: count - full] = matrix[full:]
            chunks.append(last)
        self._chunks = chunks  # rows are published after their vectors: chunks, then keys, then the rows by key
        self._keys = list(keys)
        self._row = dict(zip(keys, range(count), strict=True))
        return True

    def dot(self, vector: np.ndarray) -> np.ndarray:
        """The product of every row with `vector` (one float per row, in row order)."""
        count = len(self._keys)
        chunks = self._chunks[: (count + CHUNK - 1) // CHUNK]
        if not chunks:
            return np.zeros(0, dtype=np.float32)
        vector = np.asarray(vector, dtype=np.float32)
        return np.concatenate([chunk.astype(np.float32) @ vector for chunk in chunks])[:count]  # BLAS, float32

    def gather(self, rows: np.ndarray) -> np.ndarray:
        """The vectors of these rows, in their order (a copy of just those rows)."""
        out = np.empty((len(rows), self.dim), dtype=np.float32)
        which = rows // CHUNK
        for chunk in np.unique(which).tolist():
            pick = which == chunk
            out[pick] = self._chunks[chunk][rows[pick] % CHUNK]
        return out

    def chunks(self, count: int) -> Iterator[tuple[int, np.ndarray]]:
        """(first row, a view of the rows from there) for the first `count` rows, chunk by chunk: no copy."""
        for n, chunk in enumerate(self._chunks[: (count + CHUNK - 1) // CHUNK]):
            yield n * CHUNK, chunk[: min(CHUNK, count - n * CHUNK)]

    def as_float16(self) -> tuple[list[str], np.ndarray]:
        """Keys and their vectors in row order, as float16 (for saving)."""
        count = len(self._keys)
        out = np.zeros((count, self.dim), dtype=np.float16)
        for n, chunk in enumerate(self._chunks):
            rows = min(CHUNK, count - n * CHUNK)
            if rows <= 0:
                break
            out[n * CHUNK : n * CHUNK + rows] = chunk[:rows]
        return self._keys[:count], out


class VectorMatrix:
    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._lock = threading.Lock()
        self._table: VectorTable = VectorTable(dim)
        self._copying = True  # the vectors come from a plain mapping: copied into self._table
        self._src = np.zeros(0, dtype=np.int64)  # per row (capacity): the table row holding its vector
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
            self._copying = not isinstance(vectors, VectorTable)
            self._table = VectorTable(self.dim) if self._copying else vectors  # type: ignore[assignment]
            self._src, self._live = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
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

    def _source_row(self, digest: str, vectors: Mapping[str, np.ndarray]) -> int | None:
        if not self._copying:
            if vectors is not self._table:
                raise ValueError("a VectorMatrix follows the one vector table it was built over")
            return self._table.row(digest)
        vector = vectors.get(digest)
        return None if vector is None else self._table.put(digest, vector)

    def _place(self, pairs: list[tuple[str, str]], vectors: Mapping[str, np.ndarray]) -> None:
        new_ids: list[str] = []
        new_src: list[int] = []
        for engram_id, digest in pairs:
            self._hash[engram_id] = digest
            source = self._source_row(digest, vectors)
            if source is None:
                self._waiting.setdefault(digest, set()).add(engram_id)
                continue
            row = self._row.get(engram_id)
            if row is None:
                self._row[engram_id] = len(self._ids) + len(new_ids)
                new_ids.append(engram_id)
                new_src.append(source)
            elif row >= len(self._ids):  # listed twice in this batch: the later one holds
                new_src[row - len(self._ids)] = source
            else:
                self._src[row] = source
                self._live[row] = True
        if new_src:
            used, more = len(self._ids), len(new_src)
            if used + more > len(self._src):  # grown by doubling (8 bytes a row): appending copies nothing
                size = max(2 * len(self._src), used + more, 64)
                src, live = np.zeros(size, dtype=np.int64), np.zeros(size, dtype=bool)
                src[:used], live[:used] = self._src[:used], self._live[:used]
                self._src, self._live = src, live
            self._src[used : used + more] = new_src
            self._live[used : used + more] = True
            self._ids.extend(new_ids)

    def nearest(
        self, vector: np.ndarray, k: int, *, exclude: str | None = None, among: set[str] | None = None
    ) -> list[tuple[str, float]]:
        """The k rows closest to `vector` by cosine (rows are unit vectors), best first; `among` narrows them."""
        with self._lock:
            if not len(self._ids):
                return []
            scores = self._table.dot(np.asarray(vector, dtype=np.float32))[self._src[: len(self._ids)]]
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
