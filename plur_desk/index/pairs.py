"""Candidate pairs for the contradiction finder without comparing every engram with every other (50k² is 1.25e9).

Each statement is reduced to keys: its content words (PLUR's FTS tokens, lightly stemmed) and each pair of
adjacent content words. Two statements that could be a substituted slot or a flipped polarity of one another
share most of their words, so they share keys; pairs are counted key by key with numpy, and keys so common that
they say nothing about the subject (more than `max_df` statements) are skipped, as a search engine would.
"""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Iterable

import numpy as np

from plur_desk.domain.plur_rules.tension_rules import fts_tokenize
from plur_desk.domain.similar.contradiction_lexicon import stem
from plur_desk.infra.jobs import checkpoint

# A substituted slot or a flipped polarity leaves most words in place: pairs sharing less than this share of the
# shorter statement's keys are different statements (no labelled conflict in tests/data shares less than 0.5).
MIN_RATIO = 0.4
NEIGHBOUR_DF = 5000  # for one statement, keys in up to this many statements are still counted
PAIR_BUDGET = 12_000_000  # co-occurrences of keys in more than `max_df` statements counted at most
SCAN_PIECE = 1 << 19  # key co-occurrences counted at once by `pairs` (up to ~50 bytes each while counting)


def statement_keys(statement: str) -> list[str]:
    tokens = [stem(t) for t in fts_tokenize(statement)]
    return list(dict.fromkeys(tokens + [f"{x} {y}" for x, y in itertools.pairwise(tokens)]))


class PairIndex:
    """Keys → statements, for a whole-store pair count (`pairs`) or the neighbours of one statement."""

    def __init__(self, keys: Iterable[Iterable[str]], max_df: int = 300, budget: int = PAIR_BUDGET) -> None:
        """`keys`: each statement's keys, taken one statement at a time (a generator: the finder's 50,000 lists of
        new strings, ~1.5 million objects, were ~150 MB at once beside the window's load; only `ids` keeps one
        string per distinct key)."""
        self.max_df = max_df
        self.budget = budget
        ids: dict[str, int] = {}
        # machine integers from the start: turning a list of 700,000 Python ints into an array is one call that
        # holds the interpreter lock ~70 ms (a stall of the window when this is built behind it); 4 bytes each
        docs, kids, counts = array("i"), array("i"), array("i")
        for doc, doc_keys in enumerate(keys):
            n = len(kids)
            kids.extend([ids.setdefault(key, len(ids)) for key in doc_keys])
            counts.append(len(kids) - n)
            docs.extend(itertools.repeat(doc, len(kids) - n))
        self.size = len(counts)
        self.key_counts = np.frombuffer(counts, dtype=np.int32).copy() if counts else np.zeros(0, dtype=np.int32)
        self.ids = ids
        doc_array, key_array = np.frombuffer(docs, dtype=np.int32), np.frombuffer(kids, dtype=np.int32)
        order = np.argsort(key_array, kind="stable")  # by key, then statement (`docs` is in statement order)
        # Held for the window's life: the statements of each key, 4 bytes an occurrence (1.5 million at 50,000
        # engrams: 6 MB; as int64 with each occurrence's key beside it, 23 MB). A key's occurrences are
        # _docs[_starts[key]:_starts[key + 1]].
        self._docs = doc_array[order]
        self._starts = np.searchsorted(key_array[order], np.arange(len(ids) + 1, dtype=np.int32))

    def _useful_keys(self) -> np.ndarray:
        """Keys shared by at most `max_df` statements, then more common ones, rarest first, while the pair count
        stays within the budget (a store where one subject word is in thousands of statements still gets its
        rarer shared words counted)."""
        sizes = np.diff(self._starts)
        shared = np.nonzero(sizes >= 2)[0]
        order = shared[np.argsort(sizes[shared], kind="stable")]
        cost = np.cumsum(sizes[order] * (sizes[order] - 1) // 2)
        return order[(sizes[order] <= self.max_df) | (cost <= self.budget)]

    def postings(self, key: str) -> np.ndarray:
        kid = self.ids.get(key)
        if kid is None:
            return self._docs[:0]
        return self._docs[self._starts[kid] : self._starts[kid + 1]]

    def pairs(self, min_shared: int = 2, min_ratio: float = MIN_RATIO) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(i, j, shared keys) for every pair i < j sharing at least `min_shared` keys and `min_ratio` of the
        shorter statement's keys (fewer for statements with few keys), by i then j.

        Counted a piece at a time: the pairs of a run of statements as their i, at most SCAN_PIECE co-occurrences
        (more only for one statement alone), so the peak is the piece's, not the store's. Every key in up to
        `max_df` statements is counted whatever the budget: at 50,000 distinct statements 4,693 keys in 100 to 300
        statements each are 69 million co-occurrences: 3.8 GB counted at once, 54 MB in pieces (tracemalloc)."""
        useful = self._useful_keys()
        sizes = np.diff(self._starts)
        counted = np.zeros(len(self.ids), dtype=bool)
        counted[useful] = True
        occurs = np.repeat(counted, sizes)
        # The share is taken of the keys that were counted: a word in every statement says nothing either way.
        per_doc = np.bincount(self._docs[occurs], minlength=self.size)
        # each counted occurrence pairs with the later statements of its key (a key's statements are in order)
        at = np.flatnonzero(occurs)
        later = np.repeat(self._starts[1:], sizes)[occurs] - at - 1
        del occurs
        at, later = at[later > 0], later[later > 0]
        if not len(at):
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty
        first = self._docs[at]
        order = np.argsort(first, kind="stable")
        at, later, first = at[order], later[order], first[order]
        del order
        done = np.concatenate([[0], np.cumsum(later)])  # co-occurrences before each occurrence
        bounds = np.concatenate([[0], np.flatnonzero(np.diff(first)) + 1, [len(first)]])  # where each i starts
        reached = done[bounds]
        found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        piece = 0
        while piece < len(bounds) - 1:
            end = max(int(np.searchsorted(reached, reached[piece] + SCAN_PIECE, side="right")) - 1, piece + 1)
            lo, hi = bounds[piece], bounds[end]
            j, counts = self._count(at[lo:hi], later[lo:hi], first[lo:hi])
            i = j // self.size
            j -= i * self.size  # (in place: a piece's distinct pairs are often nearly all it counted)
            shorter = per_doc[i]
            np.minimum(shorter, per_doc[j], out=shorter)
            keep = counts >= np.maximum(np.minimum(min_shared, shorter), 1)
            keep &= counts >= min_ratio * shorter
            del shorter
            found.append((i[keep], j[keep], counts[keep]))
            piece = end
            checkpoint()
        i, j, counts = (np.concatenate(part) for part in zip(*found, strict=True))
        return i, j, counts

    def _count(self, at: np.ndarray, later: np.ndarray, first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The distinct pair codes (i x size + j, in order) of these occurrences and the later ones of their keys,
        and how often each occurs: `first[k]` is the statement at `_docs[at[k]]`, paired with the `later[k]`
        after it."""
        ends = np.cumsum(later)
        partner = np.arange(int(ends[-1]), dtype=np.int64)
        partner += np.repeat(at + 1 - (ends - later), later)  # the position in _docs of each pair's j
        codes = np.repeat(first.astype(np.int64) * self.size, later)  # (codes are up to size² > 2**31)
        codes += self._docs[partner]
        del partner
        codes.sort()
        new = np.empty(len(codes), dtype=bool)
        new[0] = True
        np.not_equal(codes[1:], codes[:-1], out=new[1:])
        starts = np.flatnonzero(new)
        del new
        return codes[starts], np.diff(starts, append=len(codes))

    @staticmethod
    def top_per_statement(i: np.ndarray, j: np.ndarray, shared: np.ndarray, k: int) -> np.ndarray:
        """Mask of the pairs that are among the `k` most-shared partners of at least one of their statements."""
        n = len(i)
        ends = np.concatenate([i, j])
        which = np.concatenate([np.arange(n), np.arange(n)])
        order = np.lexsort((-np.concatenate([shared, shared]), ends))
        by_doc = ends[order]
        rank = np.arange(2 * n) - np.searchsorted(by_doc, by_doc, side="left")
        keep = np.zeros(n, dtype=bool)
        keep[which[order][rank < k]] = True
        return keep

    def neighbours(
        self, keys: Iterable[str], min_shared: int = 2, limit: int = 200, min_ratio: float = MIN_RATIO
    ) -> list[tuple[int, int]]:
        """(statement, shared keys) for one statement not in the index, most shared first."""
        keys = list(keys)
        found = [self.postings(k) for k in keys]
        found = [p for p in found if 0 < len(p) <= NEIGHBOUR_DF]
        if not found:
            return []
        docs, counts = np.unique(np.concatenate(found), return_counts=True)
        shorter = np.minimum(self.key_counts[docs], len(keys))
        keep = (counts >= np.maximum(np.minimum(min_shared, shorter), 1)) & (counts >= min_ratio * shorter)
        docs, counts = docs[keep], counts[keep]
        order = np.argsort(-counts, kind="stable")[:limit]
        return [(int(docs[k]), int(counts[k])) for k in order]
