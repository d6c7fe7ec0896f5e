"""EngramView's display reads: what the detail panels show of a record, as stored, with PLUR's defaults."""

from __future__ import annotations

from plur_desk.domain.engram_view import EngramView


def test_fields_as_the_detail_shows_them():
    view = EngramView(
        {
            "id": "ENG-2026-11-01-001",
            "statement": "Use UTC",
            "scope": "project:web",
            "domain": None,
            "tags": ["time", 3],
            "episode_ids": "not a list",
            "write_count": 4,
            "sources": [{"session_id": "s2"}, {"session_id": "s1"}, {"session_id": "s2"}, "junk", {"other": 1}],
            "relations": {"superseded_by": [], "related": ["ENG-2", "ENG-3"], "note": "text"},
            "review": {"state": "approved", "by": "Ada"},
            "x_unknown": {"kept": True},
        }
    )
    assert (view.statement, view.scope, view.domain) == ("Use UTC", "project:web", "")
    assert view.listed("tags") == ["time", "3"]
    assert view.listed("episode_ids") == []
    assert (view.write_count, view.recurrence_count) == (4, 0)
    assert view.session_ids == ["s1", "s2"]
    assert view.relations == [("related", ["ENG-2", "ENG-3"])]
    assert view.review is not None and view.review["by"] == "Ada"
    assert view.get("x_unknown") == {"kept": True}


def test_an_engram_without_the_optional_fields():
    view = EngramView({"id": "ENG-2026-11-01-002", "statement": "s", "scope": "global", "sources": "junk"})
    assert view.write_count == 1  # PLUR's default
    assert view.session_ids == []
    assert view.relations == []
    assert view.review is None
    assert view.text("rationale") == ""
