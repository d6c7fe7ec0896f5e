"""Search as people type it: writer names without their prefix, a hint when a filter matches nothing, and an
unknown field reported as what it is."""

from __future__ import annotations

import shutil

import pytest

from plur_desk.app.demo import demo_source
from plur_desk.app.review.session import ReviewSession
from plur_desk.app.search.store_search import SearchService
from plur_desk.domain.review import Reviewer
from plur_desk.index.query import parse
from plur_desk.infra.clock import FixedClock
from plur_desk.store.plur_store import PlurStore

from support.moments import WINDOW_NOW as NOW


@pytest.fixture
def service(tmp_path) -> SearchService:
    root = tmp_path / "store"
    shutil.copytree(demo_source(), root)
    store = PlurStore(root)
    store.load()
    svc = SearchService(
        ReviewSession(store, Reviewer("Searcher"), FixedClock(NOW)), tmp_path / "cache", embeddings=False
    )
    svc.sync()
    return svc


def _writers(service, query):
    return {service.session.engram(h.id)["attribution"]["asserted_by"] for h in service.search(query, 100).hits}


def test_by_matches_writers_as_people_type_them(service):
    full = _writers(service, "by:agent:claude-code")
    assert full == {"agent:claude-code"}
    assert _writers(service, "by:claude-code") == full  # without the "agent:" prefix
    assert _writers(service, "by:Claude") == full  # the start of the name, any case
    assert _writers(service, "by:agent") >= {"agent:claude-code", "agent:codex"}  # every agent
    assert _writers(service, "by:laude") == set()  # a prefix, not any substring
    assert service.filter_hint("by:claude-code") == ""


def test_a_filter_that_matches_nothing_says_so_and_names_the_writers(service):
    hint = service.filter_hint("deploy by:gemini")
    assert hint.startswith("by:gemini matches no engram in this store; writers here: ")
    assert "agent:claude-code" in hint and "agent:codex" in hint
    assert service.filter_hint("status:dormant").startswith("status:dormant matches no engram")
    assert service.filter_hint("deploy") == ""  # words, not a filter: nothing to blame


def test_an_unknown_field_is_reported_as_not_a_filter():
    (note,) = parse("foo:bar deploy").ignored
    assert note.startswith("foo:bar is not a filter (there is no field 'foo'; filters are ")
    assert "by:" in note and note.endswith("its words were searched as plain text instead")
    (bad,) = parse("is:sometimes").ignored
    assert bad.startswith("is:sometimes is not applied (is knows ")
