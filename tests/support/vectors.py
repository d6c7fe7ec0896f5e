"""Vector tables of a few rows a chunk, for properties that build many small cluster indexes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from plur_desk.index import vector_matrix


@contextmanager
def small_vector_chunks(rows: int = 4) -> Iterator[None]:
    """Every VectorTable made inside holds `rows` rows a chunk instead of 4,096. A new table zero-fills its first
    chunk at once (vector_matrix.zeroed): 32 MB for the clusters' 2,048-wide word-overlap vectors, most of the time
    of a property that makes a fresh index for every step, on a busy machine. With a few rows a chunk, the small
    stores of these properties also cross chunk boundaries (`gather`, `dot`, `chunks`), as large stores do.
    No table made inside may be used after, nor one made before used inside."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(vector_matrix, "CHUNK", rows)
        yield
