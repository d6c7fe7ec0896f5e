"""The similarity matrix kept by id answers what stacking every vector afresh answers, through changes, removals
and vectors arriving while the embedding runs."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from plur_desk.index.embeddings import VectorCache
from plur_desk.index.vector_matrix import VectorMatrix, VectorTable

DIM = 8


def _unit(rng: np.random.Generator) -> np.ndarray:
    v = rng.normal(size=DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def _fresh(engrams: dict[str, str], vectors: dict[str, np.ndarray], query: np.ndarray, k: int, exclude: str | None):
    """The way similar() did it before: stack the vectors of every engram that has one, for each query."""
    ids = [i for i, h in engrams.items() if h in vectors and i != exclude]
    if not ids:
        return []
    scores = np.stack([vectors[engrams[i]] for i in ids]) @ query
    order = sorted(range(len(ids)), key=lambda n: -scores[n])[:k]
    return [(ids[n], float(scores[n])) for n in order]


def _same(got, expected) -> None:
    """Same scores best first; among equal scores (two engrams with the same content) any order, same ids, except
    at the cut-off, where either of the tied engrams may be the one kept."""
    assert np.allclose([s for _i, s in got], [s for _i, s in expected])
    last = expected[-1][1] if expected else None
    assert sorted(i for i, s in got if s != last) == sorted(i for i, s in expected if s != last)


def test_updates_by_id_match_a_fresh_stack() -> None:
    rng = np.random.default_rng(3)
    vectors = {f"h{n}": _unit(rng) for n in range(40)}
    engrams = {f"E{n}": f"h{n}" for n in range(50)}  # E40..E49: no vector yet
    matrix = VectorMatrix(DIM)
    matrix.rebuild(engrams.items(), vectors)
    assert len(matrix) == 40
    for step in range(30):
        query = _unit(rng)
        exclude = f"E{step}"
        _same(matrix.nearest(query, 5, exclude=exclude), _fresh(engrams, vectors, query, 5, exclude))
        # an edit changes one engram's hash, a retirement removes another, a new one arrives, vectors arrive
        edited = f"E{rng.integers(0, 50)}"
        engrams[edited] = f"h{rng.integers(0, 60)}"
        gone = f"E{rng.integers(0, 50)}"
        engrams.pop(gone, None)
        added = f"N{step}"
        engrams[added] = f"h{rng.integers(0, 60)}"
        matrix.update({edited: engrams.get(edited), gone: None, added: engrams[added]}, vectors)
        if step % 5 == 0:
            vectors[f"h{40 + step // 5}"] = _unit(rng)
            matrix.take_new_vectors(vectors)
    assert len(matrix) == sum(1 for h in engrams.values() if h in vectors)


def test_among_narrows_and_nothing_left_is_empty() -> None:
    rng = np.random.default_rng(5)
    vectors = {f"h{n}": _unit(rng) for n in range(10)}
    engrams = {f"E{n}": f"h{n}" for n in range(10)}
    matrix = VectorMatrix(DIM)
    matrix.rebuild(engrams.items(), vectors)
    query = _unit(rng)
    got = matrix.nearest(query, 10, among={"E2", "E7", "missing"})
    assert {i for i, _s in got} == {"E2", "E7"}
    assert matrix.nearest(query, 3, among=set()) == []
    assert VectorMatrix(DIM).nearest(query, 3) == []


def test_over_the_vector_table_it_refers_to_rows_and_answers_the_same(monkeypatch) -> None:
    """Built over the cache's VectorTable the matrix copies no vector (it names table rows), across chunks of the
    table and vectors added while it is in use, and answers what a matrix over a plain dict answers."""
    from plur_desk.index import vector_matrix

    monkeypatch.setattr(vector_matrix, "CHUNK", 16)  # several chunks
    rng = np.random.default_rng(11)
    table = VectorTable(DIM)
    plain: dict[str, np.ndarray] = {}
    for n in range(40):
        plain[f"h{n}"] = _unit(rng)
        table.put(f"h{n}", plain[f"h{n}"])
    engrams = {f"E{n}": f"h{n % 45}" for n in range(60)}  # some share a vector, some have none yet
    referring, copying = VectorMatrix(DIM), VectorMatrix(DIM)
    referring.rebuild(engrams.items(), table)
    copying.rebuild(engrams.items(), plain)
    for step in range(20):
        query = _unit(rng)
        got, expected = referring.nearest(query, 6, exclude=f"E{step}"), copying.nearest(query, 6, exclude=f"E{step}")
        assert [i for i, _s in got] == [i for i, _s in expected]
        assert np.allclose([s for _i, s in got], [s for _i, s in expected])
        _same(got, _fresh(engrams, plain, query, 6, f"E{step}"))
        if step % 4 == 0:
            key = f"h{40 + step // 4}"
            plain[key] = _unit(rng)
            table.put(key, plain[key])
            assert referring.take_new_vectors(table) and copying.take_new_vectors(plain)
        edited = f"E{step * 3}"
        engrams[edited] = f"h{(step * 7) % 45}"
        referring.update({edited: engrams[edited]}, table)
        copying.update({edited: engrams[edited]}, plain)
    assert referring._table is table and len(table) == len(plain)  # the vectors exist once
    assert np.array_equal(table["h3"], plain["h3"]) and table.get("missing") is None
    with pytest.raises(ValueError, match="one vector table"):
        referring.update({"E1": "h1"}, VectorTable(DIM))


# measured in a fresh interpreter: in the suite's own process, memory other tests freed may be what a new array gets
RESIDENT = """
import os, numpy as np
from plur_desk.index.vector_matrix import VectorTable, zeroed
def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
before = resident()
{make}
print(resident() - before)
"""


def _grown_by(make: str) -> int:
    code = RESIDENT.format(make=make)
    return int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_a_zeroed_array_is_resident_before_python_writes_into_it() -> None:
    # its pages are faulted in by numpy's fill (the interpreter lock free), not one by one by later row writes
    size = 64 << 20
    assert _grown_by(f"a = np.zeros({size // 4}, dtype=np.float32)") < size // 2  # what the test tells apart
    assert _grown_by(f"a = zeroed(({size // 4 // 2048}, 2048)); assert a.dtype == np.float32 and not a.any()") >= (
        size * 0.9
    )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_a_table_chunk_is_resident_from_its_first_row() -> None:
    # a chunk: 4,096 rows x 4,096 floats = 64 MB
    put = 't = VectorTable(4096); t.put("a", np.ones(4096, dtype=np.float32)); assert float(t["a"].sum()) == 4096.0'
    assert _grown_by(put) >= (64 << 20) * 0.9


def test_a_table_holds_its_vectors_as_float16_and_reads_them_out_as_float32() -> None:
    """50,000 embeddings of 384 are the window's largest numeric holder: the vector cache's table stores them as its
    file does (float16), 38 MB instead of 77; what anyone reads out is float32, equal to the float16 values widened."""
    import tracemalloc

    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(3 * 4096, 384)).astype(np.float32)  # three whole chunks
    tracemalloc.start()
    table = VectorCache(None).vectors
    for n, vector in enumerate(vectors):
        table.put(f"k{n}", vector)
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert held < len(vectors) * 384 * 3  # float16: 2 bytes a value (+ the keys); float32 would be 4
    rounded = vectors.astype(np.float16).astype(np.float32)
    assert table["k7"].dtype == np.float32 and np.array_equal(table["k7"], rounded[7])
    assert np.array_equal(table.get("k9"), rounded[9])
    query = vectors[0] / np.linalg.norm(vectors[0])
    assert table.dot(query).dtype == np.float32
    assert np.allclose(table.dot(query), rounded @ query, rtol=1e-5, atol=1e-5)
    rows = np.array([5, 9000, 4100])
    assert table.gather(rows).dtype == np.float32 and np.array_equal(table.gather(rows), rounded[rows])
