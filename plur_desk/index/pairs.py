"""Candidate pairs for the contradiction finder without comparing every engram with every other (50k² is 1.25e9).

Each statement is reduced to keys: its content words (PLUR's FTS tokens, lightly stemmed) and each pair of
adjacent content words. Two statements that could be a substituted slot or a flipped polarity of one another
share most of their words, so they share keys; pairs are counted key by key with numpy, and keys so common that
they say nothing about the subject (more than `max_df` statements) are skipped, as a search engine would.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

import numpy as np

from plur_desk.domain.contradiction_lexicon import stem
from plur_desk.domain.tension_rules import fts_tokenize

# A substituted slot or a flipped polarity leaves most words in place: pairs sharing less than this share of the
# shorter statement's keys are different statements (no labelled conflict in tests/data shares less than 0.5).
MIN_RATIO = 0.4


def statement_keys(statement: str) -> list[str]:
    tokens = [stem(t) for t in fts_tokenize(statement)]
    return list(dict.fromkeys(tokens + [f"{x} {y}" for x, y in itertools.pairwise(tokens)]))


class PairIndex:
    """Keys → statements, for a whole-store pair count (`pairs`) or the neighbours of one statement."""

    def __init__(self, keys: Sequence[Iterable[str]], max_df: int = 300) -> None:
        self.max_df = max_df
        self.size = len(keys)
        ids: dict[str, int] = {}
        docs: list[int] = []
        kids: list[int] = []
        self.key_counts = np.zeros(self.size, dtype=np.int32)
        for doc, doc_keys in enumerate(keys):
            n = 0
            for key in doc_keys:
                docs.append(doc)
                kids.append(ids.setdefault(key, len(ids)))
                n += 1
            self.key_counts[doc] = n
        self.ids = ids
        order = np.lexsort((np.asarray(docs, dtype=np.int64), np.asarray(kids, dtype=np.int64)))
        self._docs = np.asarray(docs, dtype=np.int64)[order]
        sorted_keys = np.asarray(kids, dtype=np.int64)[order]
        self._starts = np.searchsorted(sorted_keys, np.arange(len(ids) + 1))

    def postings(self, key: str) -> np.ndarray:
        kid = self.ids.get(key)
        if kid is None:
            return self._docs[:0]
        return self._docs[self._starts[kid] : self._starts[kid + 1]]

    def pairs(self, min_shared: int = 2, min_ratio: float = MIN_RATIO) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(i, j, shared keys) for every pair i < j sharing at least `min_shared` keys and `min_ratio` of the
        shorter statement's keys (fewer for statements with few keys)."""
        sizes = np.diff(self._starts)
        useful = np.nonzero((sizes >= 2) & (sizes <= self.max_df))[0]
        chunks: list[np.ndarray] = []
        triu: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for kid in useful:
            start, end = self._starts[kid], self._starts[kid + 1]
            group = self._docs[start:end]
            n = int(end - start)
            if n not in triu:
                triu[n] = np.triu_indices(n, 1)
            left, right = triu[n]
            chunks.append(group[left] * self.size + group[right])
        if not chunks:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty
        codes, counts = np.unique(np.concatenate(chunks), return_counts=True)
        i, j = codes // self.size, codes % self.size
        shorter = np.minimum(self.key_counts[i], self.key_counts[j])
        keep = (counts >= np.maximum(np.minimum(min_shared, shorter), 1)) & (counts >= min_ratio * shorter)
        return i[keep], j[keep], counts[keep]

    def neighbours(
        self, keys: Iterable[str], min_shared: int = 2, limit: int = 400, min_ratio: float = MIN_RATIO
    ) -> list[tuple[int, int]]:
        """(statement, shared keys) for one statement not in the index, most shared first."""
        keys = list(keys)
        found = [self.postings(k) for k in keys]
        found = [p for p in found if 0 < len(p) <= self.max_df * 4]
        if not found:
            return []
        docs, counts = np.unique(np.concatenate(found), return_counts=True)
        shorter = np.minimum(self.key_counts[docs], len(keys))
        keep = (counts >= np.maximum(np.minimum(min_shared, shorter), 1)) & (counts >= min_ratio * shorter)
        docs, counts = docs[keep], counts[keep]
        order = np.argsort(-counts, kind="stable")[:limit]
        return [(int(docs[k]), int(counts[k])) for k in order]
