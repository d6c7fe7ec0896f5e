"""Nested mappings and lists that engrams repeat are one object across the parsed entries of a store file, in the
window's own parse and in the parse workers' results; a value is shared only with one of the same types and order,
and the parsed values read exactly as before."""

from __future__ import annotations

import marshal
import math
from pathlib import Path

import numpy as np

from plur_desk.domain.plur_rules.derived import content_hash
from plur_desk.domain.plur_rules.engram_rules import engram_problems
from plur_desk.index.embeddings import VectorCache
from plur_desk.store.lists.list_file import ENGRAMS, ListFile
from plur_desk.store.lists.parse_pool import parse_chunk
from plur_desk.store.lists.shared_values import share_nested
from plur_desk.store.lists.yaml_load import load_general, parse_item

NESTED = ("knowledge_type", "attribution", "feedback_signals", "tags", "associations", "episode_ids")


def _item(n: int, positive: str = "0", strength: str = "0.5", tags: str = "      - deploy\n") -> str:
    return (
        f"  - id: ENG-2026-01-01-{n:03d}\n"
        "    status: active\n"
        "    type: behavioral\n"
        "    scope: global\n"
        f"    statement: Use spaces, never tabs, item {n}\n"
        "    knowledge_type:\n"
        "      memory_class: procedural\n"
        "      cognitive_level: apply\n"
        "    tags:\n"
        f"{tags}"
        "    activation:\n"
        f"      retrieval_strength: {strength}\n"
        "      storage_strength: 1\n"
        "      frequency: 1\n"
        "      last_accessed: '2026-01-01'\n"
        "    associations: []\n"
        "    attribution:\n"
        "      asserted_by: agent:codex\n"
        "      runtime:\n"
        "        name: plur-core\n"
        "    feedback_signals:\n"
        f"      positive: {positive}\n"
        "      negative: 0\n"
        "    episode_ids: []\n"
    )


def _same(a: object, b: object) -> bool:
    """Equal with the same types and key order (True is not 1, 0.0 is not 0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return math.copysign(1, a) == math.copysign(1, b) and (a == b or (math.isnan(a) and math.isnan(b)))  # type: ignore[arg-type]
    return a == b


def test_a_store_files_entries_share_what_they_repeat(tmp_path: Path) -> None:
    path = tmp_path / "engrams.yaml"
    path.write_text("engrams:\n" + "".join(_item(n) for n in range(1, 5)))
    snapshot = ListFile.read(path, ENGRAMS, engram_problems)
    values = [entry.value for entry in snapshot.entries]
    assert all(entry.valid for entry in snapshot.entries)
    for key in NESTED:
        assert len({id(value[key]) for value in values}) == 1, key  # type: ignore[index]
    assert values[0]["associations"] is values[0]["episode_ids"]  # type: ignore[index]  # two empty lists, one object
    assert len({id(value) for value in values}) == 4  # each entry keeps its own top-level mapping
    general = load_general("".join(_item(n) for n in range(1, 5)))
    assert isinstance(general, list) and all(_same(v, g) for v, g in zip(values, general, strict=True))


def test_the_parse_workers_results_share_within_a_chunk() -> None:
    text = "".join(_item(n) for n in range(1, 4)).encode()
    starts = [i for i in range(len(text)) if text.startswith(b"  - id:", i)]
    spans = list(zip(starts, [*starts[1:], len(text)], strict=True))
    values = [value for _digest, value in marshal.loads(parse_chunk(text, spans, 2, "engrams"))]
    assert len(values) == 3
    for key in NESTED:
        assert len({id(value[key]) for value in values}) == 1, key


def test_only_values_of_the_same_types_and_order_are_one() -> None:
    variants = {
        "int": _item(1, positive="0"),
        "bool": _item(2, positive="false"),
        "float": _item(3, positive="0.0"),
        "negative zero": _item(4, positive="-0.0"),
        "string": _item(5, positive="'0'"),
        "null": _item(6, positive="null"),
    }
    table: dict[bytes, object] = {}
    parsed = {name: share_nested(parse_item(text, 2), table) for name, text in variants.items()}
    signals = [value["feedback_signals"] for value in parsed.values()]  # type: ignore[index]
    assert len({id(s) for s in signals}) == len(signals)
    for name, text in variants.items():
        general = load_general(text)
        assert isinstance(general, list) and _same(parsed[name], general[0]), name
    assert parsed["int"]["knowledge_type"] is parsed["null"]["knowledge_type"]  # type: ignore[index]
    ordered = share_nested(parse_item(_item(7, tags="      - ci\n      - deploy\n"), 2), table)
    reversed_ = share_nested(parse_item(_item(8, tags="      - deploy\n      - ci\n"), 2), table)
    assert ordered["tags"] == ["ci", "deploy"] and reversed_["tags"] == ["deploy", "ci"]  # type: ignore[index]
    assert ordered["tags"] is not parsed["int"]["tags"]  # type: ignore[index]


def test_a_content_hash_is_one_string_in_the_record_the_vector_cache_and_a_computed_hash(tmp_path: Path) -> None:
    statement = "Use spaces, never tabs, item 1"
    digest = content_hash(statement)
    path = tmp_path / "engrams.yaml"
    path.write_text("engrams:\n" + _item(1) + f"    content_hash: {digest}\n")
    record = ListFile.read(path, ENGRAMS, engram_problems).entries[0].value
    assert isinstance(record, dict) and record["content_hash"] == digest
    assert record["content_hash"] is content_hash(statement)  # computed again: the same object
    cache_file = tmp_path / "vectors.npz"
    np.savez(cache_file, keys=np.array([digest]).astype(str), vectors=np.ones((1, 384), dtype=np.float16))
    cache = VectorCache(cache_file)
    (key,) = [k for k in cache.vectors if k == digest]
    assert key is record["content_hash"]
