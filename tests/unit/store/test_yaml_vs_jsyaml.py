"""The YAML reader and writer agree with the real js-yaml 4.3 (the library PLUR uses) on random documents."""

from __future__ import annotations

import math
import random

import pytest

from plur_desk.store.lists.yaml_dump import dump_engrams_document, dump_tensions_document
from plur_desk.store.lists.yaml_load import Unsupported, load_general, parse_item_fast
from plur_desk.store.lists.yaml_types import JsTimestamp, js_number_to_string, resolve_plain

from support.node import run_node

TRICKY = [
    "",
    " ",
    "a",
    "true",
    "True",
    "yes",
    "no",
    "on",
    "off",
    "y",
    "N",
    "null",
    "~",
    "NULL",
    "<<",
    "0",
    "-0",
    "+0",
    "012",
    "0x1F",
    "0o17",
    "0b101",
    "1_000",
    "1e3",
    "1.50",
    ".5",
    "+.5",
    "-.inf",
    ".nan",
    ".NaN",
    "1e400",
    "1:30",
    "0936e75230430234",
    "fb58da1a31e7a719",
    "2026-01-01",
    "2026-1-1",
    "2026-12-02T08:57:56.653Z",
    "2026-12-02 08:57",
    "+_",
    "- a",
    "-a",
    "-",
    "? x",
    ":x",
    "a: b",
    "a:b",
    "a #b",
    "a#b",
    "#x",
    "x#",
    "'q'",
    '"dq"',
    "it's",
    'say "hi"',
    "tab\there",
    "cr\rx",
    "nl\nx",
    "trail\n",
    "\nlead",
    "two\n\n",
    "  indented",
    "x  ",
    "ünïcödé",
    "日本語のテスト記録",
    "emoji 😀 here",
    "\u2028sep",
    "\x85nel",
    "\xa0nbsp",
    "\x00nul",
    "\x7fdel",
    "\ufeffbom",
    "[x]",
    "{x}",
    "[]",
    "{}",
    "a, b",
    "&anchor",
    "*alias",
    "!tag",
    "|pipe",
    ">gt",
    "%pct",
    "@at",
    "`bt",
    "=eq",
    "a\\b",
    "c:\\path",
    "Retired: tension T-2026-1202-001 resolved in favor of ENG-2026-12-02-002",
]


def _words(rng: random.Random) -> str:
    vocab = [
        "the",
        "CI",
        "pipeline",
        "uses",
        "Node",
        "20",
        "for",
        "all",
        "builds",
        "deploy",
        "freezes",
        "🚀",
        "日本",
        "x" * 30,
        "a",
        "—",
        "naïve",
        "e.g.",
        "foo:bar",
        "#tag",
        "-",
        "'",
        '"',
        "\\",
        "     ",
    ]
    return " ".join(rng.choice(vocab) for _ in range(rng.randint(1, 60)))


def _string(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.3:
        return rng.choice(TRICKY)
    if kind < 0.55:
        return _words(rng)
    if kind < 0.75:
        parts = [_words(rng) if rng.random() < 0.8 else rng.choice(["", " ", "  x"]) for _ in range(rng.randint(1, 5))]
        return "\n".join(parts) + rng.choice(["", "\n", "\n\n"])
    if kind < 0.85:
        return rng.choice(TRICKY) + rng.choice(TRICKY)
    return "".join(
        chr(rng.choice([rng.randint(32, 126), rng.randint(160, 0x2FFF), rng.randint(0x1F300, 0x1F6FF)]))
        for _ in range(rng.randint(1, 150))
    )


def _scalar(rng: random.Random) -> object:
    kind = rng.random()
    if kind < 0.6:
        return _string(rng)
    if kind < 0.7:
        return rng.randint(-(10**6), 10**6)
    if kind < 0.8:
        return rng.choice([0.7, 1.5, -2.25, 1e21, 1e-7, 123456.789, 0.1 + 0.2, 5e-324, 2**53 + 0.0, 1e16])
    return rng.choice([True, False, None])


def _value(rng: random.Random, depth: int) -> object:
    roll = rng.random()
    if depth < 3 and roll < 0.15:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if depth < 3 and roll < 0.3:
        return _mapping(rng, depth + 1)
    return _scalar(rng)


def _mapping(rng: random.Random, depth: int) -> dict:
    keys = ["id", "statement", "scope", "tags", "10", "2", "a b", "x:y", "é", _string(rng)[:20] or "k"]
    return {
        rng.choice(keys) + ("" if rng.random() < 0.7 else str(i)): _value(rng, depth) for i in range(rng.randint(0, 8))
    }


def _documents(seed: int, count: int) -> list[dict]:
    rng = random.Random(seed)
    docs = []
    for _ in range(count):
        engrams = []
        for _ in range(rng.randint(1, 3)):
            engram = {"id": f"ENG-2026-12-02-{rng.randint(1, 999):03d}", "statement": _string(rng)}
            engram.update(_mapping(rng, 0))
            engrams.append(engram)
        docs.append({"engrams": engrams})
    return docs


def _untag(value: object) -> object:
    if isinstance(value, dict):
        if set(value) == {"$date"}:
            return ("date", value["$date"])
        if set(value) == {"$num"}:
            return float(value["$num"])
        return {k: _untag(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_untag(v) for v in value]
    return value


def _ours(value: object) -> object:
    """Our reading, normalised like the JSON that came back from Node."""
    if isinstance(value, JsTimestamp):
        return ("date", None)
    if isinstance(value, dict):
        return {k: _ours(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_ours(v) for v in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def _same(a: object, b: object) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return a[0] == b[0]
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return (a == b and type(a) is type(b)) or (
        isinstance(a, (int, float))
        and isinstance(b, (int, float))
        and not isinstance(a, bool)
        and not isinstance(b, bool)
        and a == b
    )


@pytest.mark.interop
@pytest.mark.parametrize("seed", range(4))
def test_dump_is_byte_identical_to_jsyaml(seed):
    docs = _documents(seed, 400)
    requests = [{"op": "dump", "doc": d, "quote": '"'} for d in docs]
    requests += [{"op": "dump", "doc": d["engrams"], "quote": "'"} for d in docs]
    answers = run_node("jsyaml_oracle.mjs", payload=requests)
    mismatches = []
    for req, ans in zip(requests, answers, strict=True):
        ours = dump_engrams_document(req["doc"]) if req["quote"] == '"' else dump_tensions_document(req["doc"])
        if ours != ans["out"]:
            mismatches.append((req["doc"], ans["out"], ours))
    assert not mismatches, f"{len(mismatches)} of {len(requests)} differ; first: {mismatches[0]!r}"


@pytest.mark.interop
@pytest.mark.parametrize("seed", range(4))
def test_reading_jsyaml_output_gives_what_jsyaml_reads(seed):
    docs = _documents(100 + seed, 400)
    dumps = run_node("jsyaml_oracle.mjs", payload=[{"op": "dump", "doc": d, "quote": '"'} for d in docs])
    texts = [a["out"] for a in dumps]
    loads = run_node("jsyaml_oracle.mjs", payload=[{"op": "load", "text": t} for t in texts])
    fast_used = 0
    for text, answer in zip(texts, loads, strict=True):
        expected = _untag(answer["value"])
        general = _ours(load_general(text))
        assert _same(general, expected), (text, general, expected)
        items = text.split("\n  - ")
        for i, chunk in enumerate(items[1:], start=1):
            block = "  - " + chunk + ("\n" if i < len(items) - 1 else "")
            try:
                fast = parse_item_fast(block, 2)
            except Unsupported:
                continue
            fast_used += 1
            assert _same(_ours(fast), expected["engrams"][i - 1]), (block, fast, expected["engrams"][i - 1])
    assert fast_used > 300  # the fast path really covers js-yaml's output


@pytest.mark.interop
def test_plain_scalars_resolve_like_jsyaml():
    requests = [{"op": "load", "text": f"v: {s}\n"} for s in TRICKY if s and "\n" not in s and "\r" not in s]
    answers = run_node("jsyaml_oracle.mjs", payload=requests)
    for req, ans in zip(requests, answers, strict=True):
        if "error" in ans:
            with pytest.raises(Exception):  # noqa: PT011 -- js-yaml errored; any refusal of ours agrees
                load_general(req["text"])
            continue
        assert _same(_ours(load_general(req["text"])), _untag(ans["value"])), req["text"]


def test_js_number_formatting():
    cases = {
        1e21: "1e+21",
        1e-7: "1e-7",
        1e16: "10000000000000000",
        0.1 + 0.2: "0.30000000000000004",
        123456.789: "123456.789",
        5e-324: "5e-324",
        1.5e300: "1.5e+300",
        0.000001: "0.000001",
        -2.5: "-2.5",
    }
    for value, text in cases.items():
        assert js_number_to_string(value) == text


def test_resolve_plain_follows_jsyaml_not_yaml11():
    assert resolve_plain("0936e75230430234") == "0936e75230430234"
    assert resolve_plain("+_") == "+_"
    assert resolve_plain("+.5") == "+.5"
    assert resolve_plain("1_000") == "1_000"
    assert resolve_plain("yes") == "yes"
    assert resolve_plain("0x1F") == 31
    assert isinstance(resolve_plain("2026-01-01"), JsTimestamp)
