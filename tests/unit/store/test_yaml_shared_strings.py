"""Short scalars the parser reads are one object across engrams, also after the parse cache or a parse worker has
carried them through marshal; the values are unchanged (the differential tests against js-yaml say so too)."""

from __future__ import annotations

import marshal

from plur_desk.store.lists.yaml_load import SHARED_UP_TO, parse_item_fast


def _item(n: int) -> str:
    return (
        f"  - id: ENG-2026-01-01-{n:03d}\n"
        "    status: active\n"
        "    scope: 'group:org/platform'\n"
        '    created_at: "2026-01-01T07:26:09.058Z"\n'
        '    updated_at: "2026-01-01T07:26:09.058Z"\n'
        f"    statement: Use spaces, never tabs, item {n}\n"
        "    tags:\n"
        "      - deploy\n"
        "      - 'ci'\n"
        f"    content_hash: {'ab' * 32}\n"
    )


def test_short_values_are_one_object_across_engrams_and_through_marshal() -> None:
    first, second = parse_item_fast(_item(1), 2), parse_item_fast(_item(2), 2)
    assert first["scope"] == "group:org/platform" and first["tags"] == ["deploy", "ci"]
    for key in ("status", "scope", "created_at"):
        assert first[key] is second[key]
    assert first["created_at"] is first["updated_at"]
    assert first["tags"][0] is second["tags"][0] and first["tags"][1] is second["tags"][1]  # type: ignore[index]
    carried = [marshal.loads(marshal.dumps(value)) for value in (first, second)]  # two cache chunks, two workers
    assert carried == [first, second]
    assert carried[0]["scope"] is carried[1]["scope"] is first["scope"]
    assert len(str(first["content_hash"])) > SHARED_UP_TO
    assert first["content_hash"] == "ab" * 32
