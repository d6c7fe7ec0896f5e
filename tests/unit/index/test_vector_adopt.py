"""The vector cache file read at open becomes the vector table's rows without a copy: the table's chunks are views
of the array read from the file, every lookup, product and later write works as on a table filled row by row, and
the file's arrays are not held twice while it is read."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from plur_desk.index.embeddings import DIM, VectorCache
from plur_desk.index.vector_matrix import CHUNK, VectorTable


def _rows(count: int, seed: int = 1) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    return [f"{n:064x}" for n in range(count)], rng.standard_normal((count, DIM)).astype(np.float16)


def test_adopted_rows_are_the_matrix_and_behave_as_put_ones() -> None:
    keys, matrix = _rows(2 * CHUNK + 5)
    adopted, filled = VectorTable(DIM, np.float16), VectorTable(DIM, np.float16)
    assert adopted.adopt(keys, matrix)
    for key, row in zip(keys, matrix, strict=True):
        filled.put(key, row)
    assert np.shares_memory(adopted._chunks[0], matrix) and np.shares_memory(adopted._chunks[1], matrix)
    assert list(adopted) == keys and len(adopted) == len(keys)
    query = np.ones(DIM, dtype=np.float32)
    assert np.array_equal(adopted.dot(query), filled.dot(query))
    assert np.array_equal(adopted[keys[-1]], filled[keys[-1]])
    rows = np.array([0, CHUNK + 3, 2 * CHUNK + 4])
    assert np.array_equal(adopted.gather(rows), filled.gather(rows))
    extra = np.full(DIM, 0.5, dtype=np.float32)
    assert adopted.put("new", extra) == filled.put("new", extra) == len(keys)  # appended after the adopted rows
    adopted.put(keys[1], extra)
    filled.put(keys[1], extra)
    assert np.array_equal(adopted.dot(query), filled.dot(query))


def test_adopt_refuses_what_it_cannot_take_whole() -> None:
    keys, matrix = _rows(10)
    table = VectorTable(DIM, np.float16)
    assert not table.adopt([*keys[:9], keys[0]], matrix)  # a repeated key: the first one read wins, row by row
    assert not table.adopt(keys, matrix.astype(np.float32))
    assert len(table) == 0
    table.put("first", matrix[0])
    assert not table.adopt(keys, matrix)  # not into a table that holds rows
    assert list(table) == ["first"]


_PEAK = """
import sys, tracemalloc
from plur_desk.index.embeddings import VectorCache
tracemalloc.start()
cache = VectorCache(__import__("pathlib").Path(sys.argv[1]))
print(tracemalloc.get_traced_memory()[1], len(cache.vectors))
"""


def test_a_cache_file_is_read_without_a_second_copy_of_its_rows(tmp_path: Path) -> None:
    """Measured in a process of its own: tracemalloc counts every thread's allocations, and a test run's other
    threads (a window's background work left from an earlier test) once added 6 MB to the peak here."""
    keys, matrix = _rows(20_000)
    path = tmp_path / "vectors.npz"
    np.savez(path, keys=np.array(keys).astype(str), vectors=matrix)
    cache = VectorCache(path)
    assert len(cache.vectors) == len(keys)
    assert np.array_equal(cache.vectors[keys[12_345]], matrix[12_345].astype(np.float32))
    out = subprocess.run([sys.executable, "-c", _PEAK, str(path)], capture_output=True, text=True, check=True)
    peak, count = (int(word) for word in out.stdout.split())
    assert count == len(keys)
    rows_and_keys = matrix.nbytes + np.array(keys).nbytes  # what np.load makes; a copy of the rows would add 15 MB
    assert peak < rows_and_keys + matrix.nbytes // 3
