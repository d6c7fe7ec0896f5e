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
