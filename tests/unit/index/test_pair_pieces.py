"""The clusters' numeric helpers: engram pairs behind vector-row pairs, in pieces of any size, and a similarity that
does not depend on the batch it is computed in."""

from __future__ import annotations

import numpy as np
import pytest

from plur_desk.index.near_dupes import ByRow, exact_similarity, pair_pieces
from plur_desk.index.vector_matrix import VectorTable


def _expected(hit_left, hit_right, vrow, left_slots, right_slots) -> list[tuple[int, int, int]]:
    return [
        (int(ls), int(rs), k)
        for k, (a, b) in enumerate(zip(hit_left, hit_right, strict=True))
        for ls in left_slots
        if vrow[ls] == a
        for rs in right_slots
        if vrow[rs] == b
    ]


@pytest.mark.parametrize("limit", [1, 3, 7, 1 << 18])
def test_every_engram_pair_behind_the_row_pairs_once_whatever_the_piece_size(limit: int) -> None:
    rng = np.random.default_rng(3)
    vrow = rng.integers(0, 6, size=40)  # 40 engrams on 6 vector rows: many share one
    left_slots = np.sort(rng.choice(40, size=15, replace=False))
    right_slots = np.arange(40)
    hit_left, hit_right = rng.integers(0, 6, size=12), rng.integers(0, 6, size=12)
    left, right = ByRow(left_slots, vrow, 6), ByRow(right_slots, vrow, 6)
    found = [
        (int(ls), int(rs), int(k))
        for lefts, rights, hits in pair_pieces(hit_left, hit_right, left, right, limit=limit)
        for ls, rs, k in zip(lefts, rights, hits, strict=True)
    ]
    assert sorted(found) == sorted(_expected(hit_left, hit_right, vrow, left_slots, right_slots))
    assert len(found) == len(set(found))


def test_exact_similarity_is_the_same_in_any_batch_and_order() -> None:
    rng = np.random.default_rng(4)
    table = VectorTable(384)
    vectors = rng.standard_normal((300, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for n, vector in enumerate(vectors):
        table.put(f"h{n}", vector)
    left, right = rng.integers(0, 300, size=500), rng.integers(0, 300, size=500)
    whole = exact_similarity(table, left, right)
    assert np.array_equal(whole, exact_similarity(table, right, left))
    assert np.array_equal(whole[7:9], exact_similarity(table, left[7:9], right[7:9]))
    assert np.allclose(whole, (vectors[left] * vectors[right]).sum(axis=1), atol=1e-5)


def test_exact_similarity_holds_two_pieces_at_a_time() -> None:
    """Each piece's products are made in place: one float64 piece (8 MB at PIECE_FLOATS) and a float32 one at once,
    not three float64 pieces; the clusters' comparison at the end of a store's load runs it beside everything the
    window holds."""
    import tracemalloc

    from plur_desk.index.near_dupes import PIECE_FLOATS

    rng = np.random.default_rng(5)
    table = VectorTable(384)
    for n, vector in enumerate(rng.standard_normal((500, 384)).astype(np.float32)):
        table.put(f"h{n}", vector)
    rows = PIECE_FLOATS // 384
    left, right = rng.integers(0, 500, size=rows), rng.integers(0, 500, size=rows)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    result = exact_similarity(table, left, right)
    peak = tracemalloc.get_traced_memory()[1] - before
    tracemalloc.stop()
    piece = rows * 384 * 8
    assert peak < 2.5 * piece, (peak, piece)  # ~2 (a gather makes temporaries); with three float64 pieces, ~3
    wide = table.gather(left).astype(np.float64) * table.gather(right).astype(np.float64)
    assert np.array_equal(result, np.round(wide.sum(axis=1), 6))
