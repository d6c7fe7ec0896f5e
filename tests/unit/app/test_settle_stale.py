"""Settling a near-duplicate cluster (Clusters pane, D) checks only the *statements* the pane showed.

ScaleView.settle passes `shown = {m.id: m.statement}` and takes every other fingerprint field from the session's
current snapshot (`session.writes.seen`), so an agent's change to a member's scope or commitment that reached the session
(a reload) before the Clusters view was recomputed (it waits for a pause, then recomputes) is decided on under a
human event although the pane still showed the old scope / role. Every other decision compares the whole fingerprint
(statement, status, commitment, scope, validity) the reviewer rendered.
"""

from __future__ import annotations

import pytest

from plur_desk.infra.errors import ChangedSinceError

from support.blocks import rewrite_block

KEEP, DUP = "ENG-2026-11-01-001", "ENG-2026-11-02-001"


def _shown(session):
    # what the Clusters pane rendered before the agent's change: statement, scope (its own column), role (draft)
    return {i: session.engram(i)["statement"] for i in (KEEP, DUP)}


def _roles(session):
    return {i: (str(session.engram(i)["scope"]), session.engram(i)["commitment"] == "draft") for i in (KEEP, DUP)}


def test_settle_refuses_when_the_kept_drafts_scope_changed_since_the_pane_showed_it(session):
    shown, roles = _shown(session), _roles(session)  # both listed with scope project:web
    rewrite_block(session.store.root, KEEP, "scope: project:web", "scope: global")
    session.reload_if_changed()  # the window reloads on its watcher; the cluster view is recomputed only later
    with pytest.raises(ChangedSinceError):
        session.settle_duplicates(KEEP, [DUP], approve=True, level="decided", shown=shown, roles=roles)
    assert session.engram(KEEP)["commitment"] == "draft"


def test_settle_refuses_when_a_duplicate_was_approved_since_the_pane_showed_it_as_a_draft(session):
    shown = _shown(session)  # DUP listed with role "duplicate" (a draft)
    rewrite_block(session.store.root, DUP, "commitment: draft", "commitment: decided")
    session.reload_if_changed()
    with pytest.raises(ChangedSinceError):
        session.settle_duplicates(KEEP, [DUP], approve=True, level="decided", shown=shown)
    assert session.engram(DUP)["status"] == "active"


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [("status: active", "status: retired", "status"), ("commitment: decided", "commitment: draft", "commitment")],
)
def test_settle_refuses_when_the_approved_engram_kept_is_no_longer_what_the_pane_listed(session, old, new, field):
    # KEEP approved before the pane was drawn: listed as "already approved", the others rejected as its duplicates
    rewrite_block(session.store.root, KEEP, "commitment: draft", "commitment: decided")
    session.reload_if_changed()
    shown, roles = _shown(session), _roles(session)
    assert roles[KEEP][1] is False
    rewrite_block(session.store.root, KEEP, old, new)  # an agent retires it, or puts it back to draft
    session.reload_if_changed()
    with pytest.raises(ChangedSinceError) as refused:
        session.settle_duplicates(KEEP, [DUP], approve=False, level="decided", shown=shown, roles=roles)
    assert refused.value.fields == [field]
    assert session.engram(DUP)["commitment"] == "draft"  # nobody rejected DUP as a duplicate of it


def test_settle_refuses_when_the_approved_engram_kept_moved_scope(session):
    rewrite_block(session.store.root, KEEP, "commitment: draft", "commitment: decided")
    session.reload_if_changed()
    shown, roles = _shown(session), _roles(session)
    rewrite_block(session.store.root, KEEP, "scope: project:web", "scope: global")
    session.reload_if_changed()
    with pytest.raises(ChangedSinceError):
        session.settle_duplicates(KEEP, [DUP], approve=False, level="decided", shown=shown, roles=roles)
    assert session.engram(DUP)["commitment"] == "draft"


def test_settle_against_an_approved_engram_listed_as_such_goes_through(session):
    rewrite_block(session.store.root, KEEP, "commitment: draft", "commitment: decided")
    session.reload_if_changed()
    session.settle_duplicates(KEEP, [DUP], approve=False, level="decided", shown=_shown(session), roles=_roles(session))
    assert session.engram(DUP)["status"] == "retired"
