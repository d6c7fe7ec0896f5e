"""A decision rests on everything the draft's detail shows beside the statement: an agent's change to the type,
domain, rationale or tags between the rendering and the key press refuses the write, as a statement change does."""

from __future__ import annotations

import pytest

from plur_desk.domain.commands import ApproveDrafts
from plur_desk.infra.errors import ChangedSinceError

from support.blocks import add_after_statement, rewrite_block

DRAFT = "ENG-2026-11-02-001"


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("    rationale: Because the agent says so", "rationale"),
        ("    domain: billing", "domain"),
        ("    tags:\n      - urgent", "tags"),
    ],
)
def test_approve_is_refused_when_a_shown_field_changed_since_it_was_rendered(session, line, field):
    seen = session.writes.seen([DRAFT])  # what the detail rendered
    add_after_statement(session.store.root, DRAFT, line)
    before = (session.store.root / "engrams.yaml").read_bytes()
    with pytest.raises(ChangedSinceError) as refused:
        session.execute(ApproveDrafts(tuple(seen)))
    assert field in str(refused.value)
    assert (session.store.root / "engrams.yaml").read_bytes() == before


def test_type_changed_since_rendered_is_refused(session):
    seen = session.writes.seen([DRAFT])
    rewrite_block(session.store.root, DRAFT, "type: behavioral", "type: procedural")
    with pytest.raises(ChangedSinceError):
        session.execute(ApproveDrafts(tuple(seen)))
    assert session.engram(DRAFT)["commitment"] == "draft"
