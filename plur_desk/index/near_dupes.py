"""Vectors for near-duplicate search and the blocked matrix product that finds pairs above a threshold.

Two kinds of vectors: the sentence embeddings of `embeddings.py` when the model is installed, else hashed word
and character-trigram counts (a stable crc32 hash, so the same text always lands in the same columns). Both are
L2-normalised, so a dot product is a cosine similarity.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

import numpy as np

from plur_desk.domain.near_duplicate import tokens_of

LEXICAL_DIM = 2048


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def lexical_vectors(statements: list[str]) -> np.ndarray:
    """Hashed bag of stemmed words (weight 1) and character trigrams (weight 0.3), unit length."""
    out = np.zeros((len(statements), LEXICAL_DIM), dtype=np.float32)
    for row, statement in enumerate(statements):
        words = [_stem(w) for w in tokens_of(statement)]
        for word in words:
            out[row, zlib.crc32(b"w" + word.encode()) % LEXICAL_DIM] += 1.0
        text = " " + " ".join(words) + " "
        for i in range(len(text) - 2):
            out[row, zlib.crc32(b"c" + text[i : i + 3].encode()) % LEXICAL_DIM] += 0.3
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    normalised: np.ndarray = out / np.maximum(norms, 1e-12)
    return normalised


def similarity_blocks(
    vectors: np.ndarray, start: int, live: np.ndarray, block: int = 256
) -> Iterator[tuple[int, np.ndarray]]:
    """For rows start.. in blocks: (first row, similarities of those rows to every row), dead rows at -1. A block
    holds block x rows floats: 51 MB at 50,000 engrams (it was 512 rows, 102 MB, for a few percent of speed)."""
    dead = ~live
    for first in range(start, vectors.shape[0], block):
        sims = vectors[first : first + block] @ vectors.T
        sims[:, dead] = -1.0
        yield first, sims


def pairs_above(
    sims: np.ndarray, first: int, threshold: float, keys: np.ndarray | None = None
) -> list[tuple[int, int, float]]:
    """(i, j, similarity) with j < i, i the absolute row of a block that starts at `first`; with `keys`, only
    pairs whose keys are equal (a vectorised first cut before the slower per-pair rules)."""
    hits = sims >= threshold
    if keys is not None:
        hits &= keys[first : first + sims.shape[0], None] == keys[None, :]
    rows, cols = np.nonzero(hits)
    out = []
    for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
        i = first + r
        if c < i:
            out.append((i, c, float(sims[r, c])))
    return out
