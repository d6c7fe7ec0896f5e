"""The dumper decides a line of printable ASCII without walking it character by character; its answer is the
walk's for every such string, each quoting and folding rule included (the js-yaml differential tests compare
whole documents with the real js-yaml too)."""

from __future__ import annotations

import random

from plur_desk.store.lists import yaml_dump
from plur_desk.store.lists.yaml_types import is_ambiguous

# the characters js-yaml's rules name, a few ordinary ones, and the implicit types' spellings
TRICKY = " :#-?,[]{}&*!|=>'\"%@`\\+._/abcXYZ019"
EDGES = [
    "a",
    ":",
    "a:",
    "a: b",
    "a:b",
    "a #b",
    "a#b",
    "#a",
    " a",
    "a ",
    "true",
    "null",
    "1e3",
    "0x1F",
    "2026-12-06",
    "<<",
    "~",
    "- a",
    "-a",
    "x" * 120,
    "x" * 121,
    " " + "x" * 130,
    "y" * 200 + " :",
]


def test_printable_ascii_lines_take_the_walks_style() -> None:
    rng = random.Random(41)
    strings = EDGES + [
        "".join(rng.choice(TRICKY) for _ in range(rng.choice((1, 2, 3, 6, 12, 40, 119, 120, 121, 300))))
        for _ in range(20_000)
    ]
    checked = 0
    for text in strings:
        assert text.isascii() and text.isprintable()
        for single_line_only in (False, True):
            for double in (True, False):
                for width in (40, 120):
                    args = (text, single_line_only, width, is_ambiguous, double, True)
                    assert yaml_dump._choose_style(*args) == yaml_dump._choose_style_by_char(*args), args
                    checked += 1
    assert checked == len(strings) * 8


# beyond ASCII: printable letters, the edges of js-yaml's printable ranges, and what is not printable (NEL, NBSP,
# line and paragraph separators, the byte-order mark, U+FFFE), and characters beyond U+FFFF (two UTF-16 units)
WIDE = "\u00e9\u00fc\u65e5\u00a1\u2027\u202a\ud7ff\ue000\ufefe\uff00\ufffd\U0001f600\U0010ffff"
NOT_PRINTABLE = "\x85\xa0\u2028\u2029\ufeff\ufffe\x7f\t\n"


def test_printable_lines_beyond_ascii_take_the_walks_style() -> None:
    """Statements in any language: a line of characters js-yaml calls printable is decided without the walk, the
    width counted in UTF-16 units; any other character (line break, NEL, byte-order mark...) still walks."""
    rng = random.Random(42)
    alphabet = TRICKY + WIDE * 3 + NOT_PRINTABLE
    strings = [s.replace("a", "\u00e9") for s in EDGES] + [
        "".join(rng.choice(alphabet) for _ in range(rng.choice((1, 2, 3, 6, 12, 40, 60, 119, 120, 121, 300))))
        for _ in range(20_000)
    ]
    fast = 0
    for text in strings:
        fast += bool(yaml_dump._PRINTABLE_LINE.fullmatch(text)) and not text.isascii()
        for single_line_only in (False, True):
            for double in (True, False):
                for width in (40, 120):
                    args = (text, single_line_only, width, is_ambiguous, double, True)
                    assert yaml_dump._choose_style(*args) == yaml_dump._choose_style_by_char(*args), args
    assert fast > 1_000  # the new path was taken, not only the walk


def test_other_strings_still_walk() -> None:
    for text in ("a\nb", "tab\there", "caf\u00e9", "emoji \U0001f600", "\u2028"):
        args = (text, False, 120, is_ambiguous, True, True)
        assert yaml_dump._choose_style(*args) == yaml_dump._choose_style_by_char(*args)


def test_a_short_string_kept_once_dumped_is_dumped_again_as_a_fresh_dumper_would() -> None:
    """Dumper.scalar keeps short strings as dumped, by (string, level, key or value, block): the same string at
    another level or as a key must not get the kept form (a width, an indent or a key's rules differ)."""
    from plur_desk.store.lists.yaml_dump import SHORT_SCALAR, Dumper

    tricky = ["yes", "1.0", "null", "-", "a: b", "#x", " lead", "trail ", "x" * SHORT_SCALAR, "é", "0o17", "~"]
    tricky += ["multi\nline", "2026-12-07", "ENG-2026-1207-001", "'quoted'", '"dq"', "a" * 50 + " " + "b" * 13]
    kept = Dumper(double_quotes=True, line_width=40)
    for _ in range(2):  # the second pass answers from what the first kept
        for string in tricky:
            for level in (0, 1, 5, 30):
                for iskey in (False, True):
                    for inblock in (False, True):
                        fresh = Dumper(double_quotes=True, line_width=40)
                        assert kept.scalar(string, level, iskey, inblock) == fresh.scalar(string, level, iskey, inblock)
    assert len(kept._short) == len([s for s in tricky if len(s) <= SHORT_SCALAR]) * 16
