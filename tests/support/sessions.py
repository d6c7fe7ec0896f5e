"""The small store most app tests share (six engrams: four drafts, one leaning, one decided; one tension between
the last two), its session opened the way the window opens one, and what a test reads back from disk.

`tests/unit/conftest.py` offers the session as the `session` fixture; a module with a store of its own defines its
own `session` fixture, which pytest prefers."""

from __future__ import annotations

import json
from pathlib import Path

from plur_desk.app.review.bootstrap import open_session
from plur_desk.app.review.session import ReviewSession
from plur_desk.infra.clock import FixedClock
from plur_desk.store.lists.yaml_dump import dump_engrams_document, dump_tensions_document
from plur_desk.store.plur_store import PlurStore

from support.moments import NOW


def engram(i: int, **extra: object) -> dict[str, object]:
    e: dict[str, object] = {
        "id": f"ENG-2026-11-0{i}-001",
        "version": 2,
        "status": "active",
        "type": "behavioral",
        "scope": "project:web",
        "statement": f"Statement number {i}",
        "commitment": "draft",
        "created_at": f"2026-11-0{i}T10:00:00.000Z",
        "content_hash": f"{i}" * 64,
        "x_custom": {"kept": True},
    }
    e.update(extra)
    return e


def small_session(tmp_path: Path) -> ReviewSession:
    root = tmp_path / "store"
    root.mkdir()
    engrams = [engram(i) for i in range(1, 7)]
    engrams[4]["commitment"] = "leaning"
    engrams[5]["commitment"] = "decided"
    (root / "engrams.yaml").write_text(dump_engrams_document({"engrams": engrams}))
    (root / "tensions.yaml").write_text(
        dump_tensions_document(
            [
                {
                    "id": "T-2026-1201-001",
                    "engram_a": "ENG-2026-11-05-001",
                    "engram_b": "ENG-2026-11-06-001",
                    "statement_a": "Statement number 5",
                    "statement_b": "Statement number 6",
                    "confidence": 0.9,
                    "reason": "conflict",
                    "detected_at": "2026-12-01T10:00:00.000Z",
                    "status": "detected",
                    "resolved_by": None,
                    "resolved_at": None,
                    "category": "factual",
                }
            ]
        )
    )
    return open_session(root, "Ada Reviewer", clock=FixedClock(NOW), use_cache=False)  # the one assembly path


def events(session: ReviewSession) -> list[dict[str, object]]:
    """This month's history events as written."""
    path = session.store.root / "history" / "2026-12.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def on_disk(session: ReviewSession, engram_id: str) -> object:
    """The engram as a fresh read of engrams.yaml finds it."""
    store = PlurStore(session.store.root)
    store.load()
    return next(e.value for e in store.engrams.entries if e.key == engram_id)


def reopen(root: Path, reviewer: str = "Someone Else") -> ReviewSession:
    """The store opened again for review by `reviewer`, as the window opens it: interrupted actions are finished
    (or kept and reported) first."""
    return open_session(root, reviewer, clock=FixedClock(NOW), use_cache=False, for_review=True, load_history=False)


def rewrite_statement(root: Path, engram_id: str, statement: str) -> None:
    """Another writer (an agent, a hand edit) changes one engram's statement on disk, rewriting the file whole."""
    from plur_desk.domain.plur_rules.derived import content_hash

    store = PlurStore(root)
    store.load()
    engrams = [dict(e.value) for e in store.engrams.entries]
    for record in engrams:
        if record["id"] == engram_id:
            record["statement"], record["content_hash"] = statement, content_hash(statement)
    (root / "engrams.yaml").write_text(dump_engrams_document({"engrams": engrams}))
