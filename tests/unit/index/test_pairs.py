"""The key index that proposes candidate pairs without comparing every statement with every other."""

from __future__ import annotations

import subprocess
import sys
from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from plur_desk.index import pairs as pairs_module
from plur_desk.index.pairs import MIN_RATIO, PairIndex, statement_keys

STATEMENTS = [
    "Deploys go through Caddy on the edge hosts.",
    "Deploys go through nginx on the edge hosts.",
    "The office plants are watered on Mondays.",
    "Deploys go through Caddy on the edge hosts, which also terminate TLS.",
    "API tokens expire after thirty days.",
]


def _pairs(index):
    i, j, shared = index.pairs()
    return {(int(a), int(b)): int(s) for a, b, s in zip(i, j, shared, strict=True)}


def test_statements_sharing_most_words_are_paired_and_others_not():
    index = PairIndex([statement_keys(s) for s in STATEMENTS])
    found = _pairs(index)
    assert (0, 1) in found and (0, 3) in found and (1, 3) in found
    assert not [p for p in found if 2 in p or 4 in p]
    assert found[(0, 3)] > found[(0, 1)]  # the refinement shares more keys than the substituted slot


def test_keys_in_every_statement_are_skipped_but_rarer_shared_words_still_count():
    statements = [f"The user prefers tool{k} for task{k % 50}" for k in range(400)]
    index = PairIndex([statement_keys(s) for s in statements], max_df=20, budget=0)
    found = _pairs(index)
    assert found and all(a % 50 == b % 50 for a, b in found)  # only pairs about the same task


def test_top_partners_keeps_each_statements_best_pairs():
    i = np.array([0, 0, 0, 1, 2])
    j = np.array([1, 2, 3, 2, 3])
    shared = np.array([5, 4, 1, 3, 2])
    keep = PairIndex.top_per_statement(i, j, shared, 1)
    # 0's best is (0,1); 1's best is (0,1); 2's best is (0,2); 3's best is (2,3)
    assert keep.tolist() == [True, True, False, False, True]


def test_neighbours_of_a_new_statement():
    index = PairIndex([statement_keys(s) for s in STATEMENTS])
    near = index.neighbours(statement_keys("Deploys go through Traefik on the edge hosts."))
    assert {doc for doc, _ in near} == {0, 1, 3}
    assert index.neighbours(statement_keys("Completely unrelated words here")) == []


def test_the_index_holds_four_bytes_an_occurrence_and_counts_pairs_past_two_to_the_31():
    """The pair index lives as long as the window (1.5 million key occurrences at 50,000 engrams): 4 bytes each,
    not 16. With more than 46,341 statements a pair's code (i x size + j) passes 2**31: still counted right."""
    import tracemalloc

    size = 60_000
    keys = [[f"w{n % 7}", f"v{n % 11}", f"u{n % 13}"] for n in range(size)]
    keys[size - 2] = keys[size - 1] = ["rare1", "rare2", "rare3"]
    tracemalloc.start()
    index = PairIndex(keys, max_df=20, budget=0)  # the common words are not counted: only the rare pair
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert held < 3 * size * 4 + size * 4 + 100_000  # occurrences x 4 + the per-statement key counts
    i, j, shared = index.pairs()
    assert list(zip(i.tolist(), j.tolist(), shared.tolist(), strict=True)) == [(size - 2, size - 1, 3)]
    assert index.neighbours(["rare1", "rare2", "rare3"]) == [(size - 2, 3), (size - 1, 3)]


_BUILD_PEAK = """
import tracemalloc
from datetime import datetime, timezone
from plur_desk.app.conflicts.finder import ConflictFinder
words = [f"word{k}" for k in range(400)]
engrams = [
    {"id": f"ENG-{n}", "status": "active", "scope": "global",
     "statement": " ".join(words[(n * 7 + k * 13) % 400] for k in range(16))}
    for n in range(20_000)
]
tracemalloc.start()
before = tracemalloc.get_traced_memory()[0]
finder = ConflictFinder(engrams, [], datetime(2026, 1, 1, tzinfo=timezone.utc))
held, peak = tracemalloc.get_traced_memory()
print(held - before, peak - before, finder.index.size)
"""


def test_the_finder_builds_its_pair_index_one_statement_at_a_time() -> None:
    """Each statement's keys (~30 new strings: words and adjacent pairs) are taken in and dropped before the next
    statement's are made: all 50,000 lists at once were ~120 MB beside the window's load, on top of what the index
    keeps. Measured in a process of its own (tracemalloc counts every thread)."""
    out = subprocess.run([sys.executable, "-c", _BUILD_PEAK], capture_output=True, text=True, check=True)
    held, peak, size = (int(word) for word in out.stdout.split())
    assert size == 20_000
    # 20,000 statements x 31 keys: their strings alone are ~35 MB; the index's arrays and the finder's ~8 MB
    assert peak - held < 16 << 20, (held, peak)


_SCAN_PEAK = """
import tracemalloc
import numpy as np
from plur_desk.index.pairs import PairIndex
n, families = 6000, 10
rng = np.random.default_rng(7)
groups = [rng.permutation(n) // 300 for _ in range(families)]  # each family: 20 keys of 300 statements each
index = PairIndex([f"f{f}-{groups[f][s]}" for f in range(families)] for s in range(n))
tracemalloc.start()
before = tracemalloc.get_traced_memory()[0]
i, j, shared = index.pairs()
print(tracemalloc.get_traced_memory()[1] - before, len(i), int(shared.min()))
"""


def test_the_store_wide_count_holds_a_bounded_piece_of_the_co_occurrences_at_once() -> None:
    """Every key in up to `max_df` statements is counted whatever the pair budget: 200 keys in 300 statements each
    are 9 million co-occurrences, 454 MB counted at once (3.8 GB at 50,000 distinct statements). Counted a piece of
    statements at a time, the peak is the piece's, whatever the number of keys. In a process of its own."""
    out = subprocess.run([sys.executable, "-c", _SCAN_PEAK], capture_output=True, text=True, check=True)
    peak, found, least = (int(word) for word in out.stdout.split())
    assert found > 10_000 and least >= 4  # sharing 4 of their 10 keys (0.4): the count did run
    assert peak < 40 << 20, peak


def reference_pairs(index: PairIndex, min_shared: int, min_ratio: float) -> tuple[np.ndarray, ...]:
    """The count as it was: every co-occurrence of every counted key at once, then one `np.unique`."""
    useful = index._useful_keys()
    counted = np.zeros(len(index.ids), dtype=bool)
    counted[useful] = True
    per_doc = np.bincount(index._docs[np.repeat(counted, np.diff(index._starts))], minlength=index.size)
    chunks = []
    for kid in useful:
        group = index._docs[index._starts[kid] : index._starts[kid + 1]].astype(np.int64)
        left, right = np.triu_indices(len(group), 1)
        chunks.append(group[left] * index.size + group[right])
    if not chunks:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    codes, counts = np.unique(np.concatenate(chunks), return_counts=True)
    i, j = codes // index.size, codes % index.size
    shorter = np.minimum(per_doc[i], per_doc[j])
    keep = (counts >= np.maximum(np.minimum(min_shared, shorter), 1)) & (counts >= min_ratio * shorter)
    return i[keep], j[keep], counts[keep]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    st.lists(st.lists(st.sampled_from([f"k{n}" for n in range(14)]), unique=True, max_size=8), max_size=40),
    st.integers(1, 12),
    st.integers(0, 60),
    st.integers(1, 3),
    st.sampled_from([0.0, 0.25, MIN_RATIO, 0.5, 1.0]),
    st.integers(1, 80),
)
def test_the_count_in_pieces_returns_exactly_what_counting_everything_at_once_did(
    keys: list[list[str]], max_df: int, budget: int, min_shared: int, min_ratio: float, piece: int
) -> None:
    """The same pairs, counts, order and types, with pieces as small as one statement's pairs."""
    index = PairIndex(keys, max_df=max_df, budget=budget)
    want = reference_pairs(index, min_shared, min_ratio)
    with mock.patch.object(pairs_module, "SCAN_PIECE", piece):
        got = index.pairs(min_shared, min_ratio)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.tolist() == w.tolist()
