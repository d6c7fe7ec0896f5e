"""PLUR 0.21's rules for its new fields, flagged by `check` with the field and the line, though 0.20 reads them all.

Sources (0.21 is not installable here): `packages/core/src/schemas/engram.ts` in the archived copy
agent-memory-atlas-archive/plur-ai--plur, at 7a917bfb (the pinned two-tier model: `pinned_tier:
z.enum(['hard', 'soft']).optional()`) and at 442dce94 (#1268: `sources[].validated_by: z.string().optional()`);
CHANGELOG 0.21.0 "Pinned engrams can be marked hard or soft" and "A team save is no longer swallowed" (#1268).
"""

from __future__ import annotations

import pytest

from plur_desk.app.check import run_check
from plur_desk.store.lists.yaml_dump import dump_engrams_document

from support.stores import plur

pytestmark = pytest.mark.interop

SOURCE = {"scope": "group:acme/eng", "session_id": None, "stored_at": "2026-12-01T08:00:00.000Z"}


def _engram(i: int, **extra: object) -> dict[str, object]:
    record: dict[str, object] = {
        "id": f"ENG-2026-12-01-{i:03d}",
        "status": "active",
        "type": "behavioral",
        "scope": "global",
        "statement": f"Statement {i}",
    }
    record.update(extra)
    return record


CASES: list[tuple[dict[str, object], str | None]] = [
    ({"pinned": True, "pinned_tier": "hard"}, None),
    ({"pinned": True, "pinned_tier": "soft"}, None),
    ({"pinned": True, "pinned_tier": "medium"}, "pinned_tier is 'medium'"),
    ({"pinned": True, "pinned_tier": None}, "pinned_tier is None"),
    ({"pinned": True, "pinned_tier": "HARD"}, "pinned_tier is 'HARD'"),
    ({"sources": [{**SOURCE, "validated_by": "group:acme/eng"}]}, None),
    ({"sources": [SOURCE, {**SOURCE, "validated_by": None}]}, "sources[1].validated_by must be a string"),
    ({"sources": [{**SOURCE, "validated_by": 7}]}, "sources[0].validated_by must be a string"),
    ({"sources": [{**SOURCE, "promoted_from": "group:acme/eng"}], "derived_from": "ENG-GPL-2026-12-01-001"}, None),
]


def test_021_field_rules_are_flagged_with_field_and_line(tmp_path, node_home):
    root = tmp_path / "store"
    root.mkdir()
    engrams = [_engram(i + 1, **fields) for i, (fields, _) in enumerate(CASES)]
    text = dump_engrams_document({"engrams": engrams})
    (root / "engrams.yaml").write_text(text)
    before = (root / "engrams.yaml").read_bytes()
    assert plur(root, node_home, [{"op": "load"}])[0]["quarantined"] == []  # 0.20 reads every one of them

    report = run_check(root, use_cache=False)
    lines = text.splitlines()
    found = {str(item["id"]): item for item in report.invalid}
    expected = {f"ENG-2026-12-01-{i + 1:03d}": why for i, (_, why) in enumerate(CASES) if why}
    assert sorted(found) == sorted(expected)
    for engram_id, why in expected.items():
        item = found[engram_id]
        assert why in str(item["reason"]) and "PLUR 0.21" in str(item["reason"]), item
        assert lines[int(item["line"]) - 1] == f"  - id: {engram_id}", item  # the line of the entry it names
    assert report.exit_code == 1
    assert (root / "engrams.yaml").read_bytes() == before
