"""Helpers importable from any test module (tests/ is on sys.path via conftest)."""

from __future__ import annotations

from pathlib import Path

from plur_desk.store.lists.yaml_dump import dump_engrams_document


def write_big_store(root: Path, count: int) -> Path:
    """A PLUR-layout store of `count` drafts written with the js-yaml-exact dumper (no Node needed)."""
    root.mkdir(parents=True)
    engrams = []
    for i in range(1, count + 1):
        engrams.append(
            {
                "id": f"ENG-2026-12-01-{i:03d}",
                "version": 2,
                "status": "active",
                "type": "procedural",
                "scope": "project:web",
                "statement": f"Fact {i}: the build cache for service {i % 17} is cleared weekly",
                "commitment": "draft",
                "created_at": "2026-12-01T10:00:00.000Z",
                "activation": {
                    "retrieval_strength": 0.7,
                    "storage_strength": 1,
                    "frequency": 0,
                    "last_accessed": "2026-12-01",
                },
                "tags": ["ci", "cache"],
                "sources": [{"scope": "project:web", "session_id": None, "stored_at": "2026-12-01T10:00:00.000Z"}],
            }
        )
    (root / "engrams.yaml").write_text(dump_engrams_document({"engrams": engrams}))
    return root
