"""Vectors for near-duplicate search and the blocked matrix product that finds pairs above a threshold.

Two kinds of vectors: the sentence embeddings of `embeddings.py` when the model is installed, else hashed word
and character-trigram counts (a stable crc32 hash, so the same text always lands in the same columns). Both are
L2-normalised, so a dot product is a cosine similarity.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

import numpy as np

from plur_desk.domain.similar.near_duplicate import tokens_of
from plur_desk.index.vector_matrix import VectorTable, zeroed
from plur_desk.infra.jobs import checkpoint, checkpoints

LEXICAL_DIM = 2048
PIECE_FLOATS = 1 << 20  # per gathered float64 piece of an exact product (8 MB)


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def lexical_vectors(statements: list[str]) -> np.ndarray:
    """Hashed bag of stemmed words (weight 1) and character trigrams (weight 0.3), unit length."""
    out = zeroed((len(statements), LEXICAL_DIM))  # (rows are written one element at a time, below)
    for row, statement in enumerate(checkpoints(statements, 256)):  # a Python loop per statement: steps (turns.py)
        words = [_stem(w) for w in tokens_of(statement)]
        for word in words:
            out[row, zlib.crc32(b"w" + word.encode()) % LEXICAL_DIM] += 1.0
        text = " " + " ".join(words) + " "
        for i in range(len(text) - 2):
            out[row, zlib.crc32(b"c" + text[i : i + 3].encode()) % LEXICAL_DIM] += 0.3
    out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)  # in place: no second array
    return out


def exact_similarity(table: VectorTable, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """The cosine of table rows left[k] and right[k], computed so that a pair gets the same value in whatever order,
    batch or block it is asked for: float32 products are exact in float64, the sum of a row is numpy's fixed
    pairwise order, and the result is rounded to 6 decimals (a blocked matrix product's last bits depend on the
    block, which would make a cluster depend on the order engrams arrived in)."""
    out = np.empty(len(left), dtype=np.float64)
    piece = max(1, PIECE_FLOATS // table.dim)
    for start in range(0, len(left), piece):
        checkpoint()
        a = table.gather(left[start : start + piece]).astype(np.float64)
        # in place, the float32 factor widened in the ufunc's small buffers: the same products as a float64 copy
        # of both times each other, with one float64 piece (8 MB) held instead of three
        a *= table.gather(right[start : start + piece])
        out[start : start + piece] = np.round(a.sum(axis=1), 6)
    return out


def products(
    table: VectorTable, rows: np.ndarray, count: int, block: int = 256
) -> Iterator[tuple[int, int, np.ndarray]]:
    """For `rows` of the table in blocks: (index of the block's first row in `rows`, first table row of a chunk,
    the products of that chunk's rows with the block's, chunk rows x block). Each is one float32 matrix product
    over the chunk widened from the table's float16 (6 MB; the interpreter lock is free meanwhile), 4 MB at most."""
    for first in range(0, len(rows), block):
        left = table.gather(rows[first : first + block])
        for start, chunk in table.chunks(count):
            yield first, start, chunk.astype(np.float32) @ left.T


class ByRow:
    """Slots (an engram's place in the clusters' arrays) grouped by the table row of their vector."""

    def __init__(self, slots: np.ndarray, vrow: np.ndarray, size: int) -> None:
        rows = vrow[slots]
        self.slots = slots[np.argsort(rows, kind="stable")]
        self.counts = np.bincount(rows, minlength=size)
        self.starts = np.cumsum(self.counts) - self.counts

    def of(self, row: int) -> np.ndarray:
        start = int(self.starts[row])
        return self.slots[start : start + int(self.counts[row])]


def pair_pieces(
    hit_left: np.ndarray, hit_right: np.ndarray, left: ByRow, right: ByRow, limit: int = 1 << 18
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """For table-row pairs (hit_left[k], hit_right[k]): every (left slot, right slot, k) with the left slot on the
    first row and the right slot on the second, in pieces of about `limit` pairs (one hit can stand for many
    engrams when many share a statement)."""
    per_left, per_right = left.counts[hit_left], right.counts[hit_right]
    sizes = per_left * per_right
    ends = np.cumsum(sizes)
    start = 0
    while start < len(sizes):
        if sizes[start] > limit:  # one hit alone is too many: left slot by left slot
            rights = right.of(int(hit_right[start]))
            for slot in left.of(int(hit_left[start])).tolist():
                yield np.full(len(rights), slot), rights, np.full(len(rights), start)
            start += 1
            continue
        base = ends[start] - sizes[start]
        stop = max(start + 1, int(np.searchsorted(ends, base + limit, side="right")))
        hit = np.repeat(np.arange(start, stop), sizes[start:stop])
        offset = np.arange(len(hit)) - (ends[hit] - sizes[hit] - base)
        across = per_right[hit]
        lefts = left.slots[left.starts[hit_left[hit]] + offset // across]
        rights = right.slots[right.starts[hit_right[hit]] + offset % across]
        yield lefts, rights, hit
        start = stop
