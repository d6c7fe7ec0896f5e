"""Drafts by agent session: the real PLUR writes drafts in named sessions; their rows name the session and
`session:` finds them by a prefix of its id, as `by:` finds a writer."""

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
from support.stores import plur

ALPHA, BETA = "sess-Alpha-7f3c", "sess-beta-0042"


@pytest.fixture
def drafted(tmp_path) -> tuple[ReviewSession, dict[str, str]]:
    """The demo store plus three drafts written by the real PLUR in two sessions, and one in none."""
    root = tmp_path / "store"
    shutil.copytree(demo_source(), root)
    draft = {"commitment": "draft", "scope": "project:web"}
    made = plur(
        root,
        tmp_path / "home",
        [
            {
                "op": "learn",
                "statement": "The build cache lives in S3",
                "options": {**draft, "session_episode_id": ALPHA},
            },
            {"op": "learn", "statement": "Lint runs before tests", "options": {**draft, "session_episode_id": ALPHA}},
            {"op": "learn", "statement": "Tests shard by file size", "options": {**draft, "session_episode_id": BETA}},
            {"op": "learn", "statement": "Flaky tests are retried once", "options": draft},
        ],
    )
    store = PlurStore(root)
    store.load()
    ids = dict(zip(("alpha1", "alpha2", "beta", "none"), (m["id"] for m in made), strict=True))
    return ReviewSession(store, Reviewer("Searcher"), FixedClock(NOW)), ids


def test_a_drafts_row_names_the_session_that_wrote_it(drafted):
    session, ids = drafted
    rows = session.queue.rows_of(set(ids.values()))
    assert {k: rows[i].session for k, i in ids.items()} == {"alpha1": ALPHA, "alpha2": ALPHA, "beta": BETA, "none": ""}


def test_session_prefix_finds_the_sessions_engrams_and_nothing_else(drafted, tmp_path):
    session, ids = drafted
    service = SearchService(session, tmp_path / "cache", embeddings=False)
    service.sync()
    assert parse("session:sess-al").ignored == []
    found = {h.id for h in service.search("session:sess-al", 100).hits}
    assert found == {ids["alpha1"], ids["alpha2"]}
    assert service.all_ids(f"session:{ALPHA.upper()} is:draft") == {ids["alpha1"], ids["alpha2"]}  # as typed
    assert service.all_ids("session:sess-beta") == {ids["beta"]}
    assert service.all_ids("session:alpha") == set()  # a prefix of the id, not any part of it
    everything = service.all_ids("")
    assert service.all_ids("-session:sess-al") == everything - {ids["alpha1"], ids["alpha2"]}


def test_a_session_that_matches_nothing_names_the_sessions_there_are(drafted, tmp_path):
    session, _ids = drafted
    service = SearchService(session, tmp_path / "cache", embeddings=False)
    service.sync()
    hint = service.filter_hint("session:nope")
    assert hint.startswith("session:nope matches no engram in this store; sessions here: ")
    assert ALPHA in hint and BETA in hint
