"""Strings in canonical bytes (signatures, the hash chain): ASCII goes through the json module's C encoder, and
gives exactly what the escaping pattern gives (JSON.stringify's escapes); DEL and anything non-ASCII take the
pattern (tests/integration/test_signed_decisions.py has the real PLUR verify what is signed)."""

from __future__ import annotations

import random

from plur_desk.store.history import chain


def _by_pattern(text: str) -> str:
    return '"' + chain._NEEDS_ESCAPE.sub(chain._escape, text) + '"'


def test_ascii_strings_are_escaped_as_json_stringify_escapes_them() -> None:
    rng = random.Random(41)
    alphabet = [chr(c) for c in range(0x80)]  # every ASCII character, controls, quote, backslash and DEL included
    strings = ["", '"', "\\", "\x7f", "a\x7fb", "\x00\x1f\b\f\n\r\t", "plain words: 42"] + [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(20_000)
    ]
    for text in strings:
        assert chain._js_string(text) == _by_pattern(text), repr(text)


def test_other_strings_keep_the_pattern() -> None:
    for text in ("caf\u00e9", "\u2028 \u2029", "\ud800 lone", "emoji \U0001f600", "\x7f"):
        assert chain._js_string(text) == _by_pattern(text)
    assert chain._js_string("\ud800") == '"\\ud800"' and chain._js_string("\x7f") == '"\x7f"'
