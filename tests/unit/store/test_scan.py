"""A search in pieces finds exactly what one search finds, wherever the pieces fall (the file's layout check uses it
so the window's thread is not held for the whole file)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plur_desk.store.lists.list_file import ENGRAMS, TENSIONS
from plur_desk.store.scan import search_in_pieces

# store-like bytes: newlines, the indents and dashes the layout patterns look for, and text
TEXT = st.lists(
    st.sampled_from([b"\n", b" ", b"  ", b"- ", b"  - ", b"    ", b"a", b"id: x", b"\n\n"]), max_size=60
).map(b"".join)


@settings(max_examples=400, deadline=None)
@given(data=TEXT, piece=st.integers(1, 12), cut=st.tuples(st.integers(0, 8), st.integers(0, 8)))
def test_the_pieces_find_the_match_one_search_finds(data, piece, cut):
    start, end = cut[0], max(0, len(data) - cut[1])
    for pattern in (ENGRAMS.bad_line, TENSIONS.bad_line):
        whole = pattern.search(data, start, end)
        found = search_in_pieces(pattern, data, start, end, reach=8, piece=piece)
        assert (found and found.span()) == (whole and whole.span())


def test_a_match_whose_lookahead_crosses_a_piece_s_end_is_judged_with_its_context():
    data = b"entries:\n  - id: a\n    x: 1\n  - id: b\n"
    newline = data.index(b"\n  - id: b")
    assert ENGRAMS.bad_line.search(data, 0, len(data) - 1) is None
    # a piece ending right after that newline would see it without the "  - " that follows: no match either way
    assert search_in_pieces(ENGRAMS.bad_line, data, 8, len(data) - 1, reach=8, piece=newline - 7) is None
    bad = data.replace(b"\n  - id: b", b"\nid: b")
    assert search_in_pieces(ENGRAMS.bad_line, bad, 8, len(bad) - 1, reach=8, piece=newline - 7).start() == newline


def test_reach_and_piece_must_be_positive():
    with pytest.raises(ValueError, match="positive"):
        search_in_pieces(re.compile(rb"x"), b"x", 0, 1, reach=0)
