"""A decision rests on everything the draft's detail shows beside the statement: an agent's change to the type,
domain, rationale or tags between the rendering and the key press refuses the write, as a statement change does."""

from __future__ import annotations

import pytest
import unit.app.test_session as base

from plur_desk.infra.errors import ChangedSinceError

session = base.session
DRAFT = "ENG-2026-11-02-001"


def _agent_adds(root, engram_id, line):
    """The agent rewrites one block: `line` is added after its statement."""
    path = root / "engrams.yaml"
    text = path.read_text()
    start = text.index(f"id: {engram_id}")
    at = text.index("\n", text.index("statement:", start))
    path.write_text(text[: at + 1] + line + "\n" + text[at + 1 :])


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("    rationale: Because the agent says so", "rationale"),
        ("    domain: billing", "domain"),
        ("    tags:\n      - urgent", "tags"),
    ],
)
def test_approve_is_refused_when_a_shown_field_changed_since_it_was_rendered(session, line, field):
    seen = session.seen([DRAFT])  # what the detail rendered
    _agent_adds(session.store.root, DRAFT, line)
    before = (session.store.root / "engrams.yaml").read_bytes()
    with pytest.raises(ChangedSinceError) as refused:
        session.approve(seen)
    assert field in str(refused.value)
    assert (session.store.root / "engrams.yaml").read_bytes() == before


def test_type_changed_since_rendered_is_refused(session):
    seen = session.seen([DRAFT])
    path = session.store.root / "engrams.yaml"
    text = path.read_text()
    start = text.index(f"id: {DRAFT}")
    end = text.find("\n  - ", start)
    path.write_text(text[:start] + text[start:end].replace("type: behavioral", "type: procedural", 1) + text[end:])
    with pytest.raises(ChangedSinceError):
        session.approve(seen)
    assert session.engram(DRAFT)["commitment"] == "draft"
