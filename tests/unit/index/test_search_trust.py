"""is:approved / is:rejected count only review records a signed event backs; is:unverified finds the others."""

from __future__ import annotations

import shutil

from plur_desk.app.demo import demo_source
from plur_desk.app.review.session import ReviewSession
from plur_desk.app.search.store_search import SearchService
from plur_desk.app.trust.trust_file import TrustFile
from plur_desk.domain.commands import ApproveDrafts
from plur_desk.domain.review import Reviewer, engram_fingerprint
from plur_desk.domain.trust import TRUSTED
from plur_desk.infra.clock import FixedClock
from plur_desk.store.keys.keys_file import read_keys
from plur_desk.store.plur_store import Edit, PlurStore

from support.moments import WINDOW_NOW as NOW
from support.sessions import reopen

ADA_APPROVED = "ENG-2026-12-02-018"  # the demo reviewer's one approval


def _open(root):
    store = PlurStore(root)
    store.load()
    session = ReviewSession(store, Reviewer("Searcher"), FixedClock(NOW))
    session.load_history()
    return session


def _trust_demo_reviewer(root):
    """What `plur-desk trust add "human:Ada Lovelace" <fingerprint>` does once its fingerprint was checked."""
    (entry,) = [e for e in read_keys(root).entries if e.identity == "human:Ada Lovelace"]
    TrustFile().add(entry.identity, entry.public_key, TRUSTED, "2026-12-02T13:00:00.000Z")


def test_review_filters_trust_only_signed_decisions(tmp_path):
    root = tmp_path / "store"
    shutil.copytree(demo_source(), root)
    session = _open(root)
    service = SearchService(session, tmp_path / "cache", embeddings=False)
    service.sync()
    # the demo reviewer's key is only listed in keys.yaml: until this user trusts it, none of her decisions counts
    assert service.search("is:approved", 50).hits == []
    assert len(service.search("is:unverified", 50).hits) == 2
    _trust_demo_reviewer(root)
    session = _open(root)
    service = SearchService(session, tmp_path / "cache", embeddings=False)
    service.sync()
    # trusted now: her approval counts, bound to the text it approved; nothing is unverified
    ada = {h.id for h in service.search("is:approved", 50).hits}
    assert ada == {ADA_APPROVED} and service.search("is:unverified", 50).hits == []
    first, draft = [r.id for r in session.queue.rows()][:2]
    decider = reopen(root, "Searcher")  # a decision of today's plur_desk: bound to the text it approved
    decider.execute(ApproveDrafts(tuple(decider.writes.seen([first])), "decided", ""))
    session = _open(root)
    service = SearchService(session, tmp_path / "cache", embeddings=False)
    service.sync()
    approved = {h.id for h in service.search("is:approved", 50).hits}
    assert approved == {first, ADA_APPROVED}
    assert service.search("is:unverified", 50).hits == []

    def forge(engram):  # what any program writing the store can do: no event, no signature
        engram["commitment"] = "decided"
        engram["review"] = {"state": "approved", "by": "Ada Lovelace", "at": "2026-12-02T13:00:00.000Z"}
        return engram, []

    PlurStore(root).write_engrams([Edit(draft, forge)], engram_fingerprint)
    session = _open(root)
    service = SearchService(session, tmp_path / "cache", embeddings=False)
    service.sync()
    assert {h.id for h in service.search("is:approved", 50).hits} == approved
    assert {h.id for h in service.search("is:unverified", 50).hits} == {draft}
    assert service.all_ids("is:unverified") == {draft}


def test_search_cli_counts_only_signed_approvals(tmp_path, capsys):
    import json

    from plur_desk.app.search.search_cli import main as search_main

    root = tmp_path / "store"
    shutil.copytree(demo_source(), root)
    _trust_demo_reviewer(root)
    draft = next(r.id for r in _open(root).queue.rows())
    decider = reopen(root, "Searcher")
    decider.execute(ApproveDrafts(tuple(decider.writes.seen([draft])), "decided", ""))
    assert search_main([str(root), "is:approved", "--json", "--no-semantic"]) == 0
    hits = {h["id"] for h in json.loads(capsys.readouterr().out)["hits"]}
    assert hits == {draft, ADA_APPROVED}  # the demo reviewer's, once trusted, and today's
