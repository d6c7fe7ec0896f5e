"""The fast parser remembers lines it has read (`key: value` gives the same key and value wherever it stands): a
block read with the table full of other blocks' lines gives exactly what it gives with an empty table, and what
libyaml with js-yaml's typing gives, also where the same line text stands at another column, under a key with
nothing nested, twice in one mapping, or deeper than it may. The cheap probe for timestamps agrees with the regex
it replaced on every block."""

from __future__ import annotations

import math
import random
import re

import pytest

from plur_desk.infra.jsvalues import JsTimestamp
from plur_desk.store.lists import yaml_load
from plur_desk.store.lists.list_file import may_hold_dates
from plur_desk.store.lists.yaml_load import (
    KNOWN_LINES_MAX,
    YamlSyntaxError,
    forget_known_lines,
    load_general,
    parse_item,
    parse_item_fast,
)

# Few keys and scalars, so the same line text comes back in other blocks, at other columns and in other roles.
KEYS = ["status", "scope", "tags", "name", "positive", "a b", "10", "x"]
SCALARS = ["active", "0", "1", "0.5", "null", "true", '"2026-01-01"', "2026-01-01", "'q'", "[]", "{}", "x: y", "|"]


def _mapping(rng: random.Random, indent: int, depth: int) -> list[str]:
    lines = []
    for _ in range(rng.randint(1, 5)):
        key = rng.choice(KEYS)
        roll = rng.random()
        pad = " " * indent
        if depth < 3 and roll < 0.2:
            lines.append(f"{pad}{key}:")
            lines += _mapping(rng, indent + 2, depth + 1)
        elif depth < 3 and roll < 0.3:
            lines.append(f"{pad}{key}:")
            for _ in range(rng.randint(1, 3)):
                lines.append(f"{pad}  - {rng.choice(SCALARS[:8])}")
        elif roll < 0.35:
            lines.append(f"{pad}{key}:")  # nothing nested: null
        elif roll < 0.38:
            lines.append(f"{' ' * (indent + 2)}{key}: {rng.choice(SCALARS)}")  # deeper than it may be
        else:
            lines.append(f"{pad}{key}: {rng.choice(SCALARS)}")
    return lines


def _block(rng: random.Random, n: int) -> str:
    return "\n".join([f"  - id: ENG-{n}", *_mapping(rng, 4, 0)]) + "\n"


def _reading(text: str) -> tuple[str, object]:
    try:
        return "value", parse_item(text, 2)
    except YamlSyntaxError as exc:
        return "error", (str(exc), exc.line)


def _same(a: object, b: object) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)  # type: ignore[index]
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))  # type: ignore[arg-type]
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)  # type: ignore[arg-type]
    return a == b


@pytest.mark.parametrize("seed", range(6))
def test_a_block_reads_the_same_with_the_table_full_or_empty(seed: int) -> None:
    rng = random.Random(seed)
    blocks = [_block(rng, n) for n in range(300)]
    forget_known_lines()
    warm = [_reading(text) for text in blocks]  # each block with the lines of all the blocks before it known
    assert len(yaml_load._KNOWN_LINES) > 20
    outcomes = {"fast": 0, "libyaml": 0, "error": 0}
    for text, got in zip(blocks, warm, strict=True):
        forget_known_lines()
        assert _same(got, _reading(text)), text
        if got[0] == "error":
            outcomes["error"] += 1
            continue
        general = load_general(text)
        assert isinstance(general, list)
        assert _same(got[1], general[0]), text
        try:
            parse_item_fast(text, 2)
            outcomes["fast"] += 1
        except yaml_load.Unsupported:
            outcomes["libyaml"] += 1
    assert min(outcomes.values()) > 10, outcomes  # every way a block can go was taken


def test_remembered_lines_keep_their_context_checks() -> None:
    forget_known_lines()
    first = parse_item_fast("  - id: A\n    tags: []\n    knowledge:\n      name: x\n    status: active\n", 2)
    second = parse_item_fast("  - id: B\n    tags: []\n    knowledge:\n    status: active\n", 2)
    assert first == {"id": "A", "tags": [], "knowledge": {"name": "x"}, "status": "active"}
    assert second == {"id": "B", "tags": [], "knowledge": None, "status": "active"}
    more = [parse_item_fast(f"  - id: F{n}\n    tags: []\n    extra: {{}}\n", 2) for n in range(3)]
    made = [first["tags"], second["tags"], *(m["tags"] for m in more), *(m["extra"] for m in more)]
    assert len({id(value) for value in made}) == 8  # `[]` and `{}` are new in each engram, never one shared
    assert first["status"] is second["status"]
    with pytest.raises(YamlSyntaxError, match="duplicated mapping key 'status'") as raised:
        parse_item("  - id: C\n    status: active\n    status: active\n", 2)
    assert raised.value.line == 3
    with pytest.raises(yaml_load.Unsupported):  # `    status: active` two columns deeper than its mapping
        parse_item_fast("  - id: D\n    knowledge:\n      name: x\n        status: active\n", 2)
    nested = parse_item_fast("  - id: E\n    knowledge:\n      status: active\n    status: active\n", 2)
    assert nested == {"id": "E", "knowledge": {"status": "active"}, "status": "active"}


def test_the_table_is_emptied_when_full(monkeypatch) -> None:
    monkeypatch.setattr(yaml_load, "KNOWN_LINES_MAX", 8)
    forget_known_lines()
    for n in range(40):
        assert parse_item_fast(f"  - id: A\n    n{n}: 1\n    status: active\n", 2) == {
            "id": "A",
            f"n{n}": 1,
            "status": "active",
        }
        assert len(yaml_load._KNOWN_LINES) <= 8
    assert KNOWN_LINES_MAX >= 1 << 12  # the real table holds a store's repeated lines


_OLD_PROBE = re.compile(rb"(?:^|[\s\[{,])[0-9]{4}-[0-9]", re.M)


@pytest.mark.parametrize("seed", range(3))
def test_the_date_probe_finds_what_the_old_pattern_found(seed: int) -> None:
    rng = random.Random(seed)
    alphabet = [b"2026", b"2026-", b"-", b"0", b"1", b" ", b"\n", b"\t", b"[", b"{", b",", b'"', b"x", b"\r", b"\x0b"]
    texts = [b"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(5000)]
    texts += [b"2026-1", b"x2026-1", b"\n2026-1", b" 2026-1", b'"2026-01-01"', b"key: 2026-01-01\n", b"[2026-1]"]
    found = 0
    for text in texts:
        expected = _OLD_PROBE.search(text) is not None
        assert may_hold_dates(text) is expected, text
        found += expected
    assert 100 < found < len(texts) - 100
    assert isinstance(parse_item_fast("  - id: A\n    t: 2026-01-01\n", 2)["t"], JsTimestamp)
