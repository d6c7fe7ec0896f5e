"""The store's background computations take turns (infra/turns.py): run as a window's job (infra/jobs.py), each
waits for a turn another holds, and runs once it is let go. One that did not ask would run beside the other, and the window's thread would wait behind two
threads running Python (bench/bench_gil_threads.py)."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable

import pytest

from plur_desk.app.demo import demo_source
from plur_desk.app.review import loading
from plur_desk.app.review.bootstrap import open_session
from plur_desk.app.review.session import ReviewSession
from plur_desk.infra import turns as turns_module
from plur_desk.infra.jobs import Job, Pacing, running

pacing = Pacing()  # one window's pacing, shared by every job here
turns = pacing.turns


@pytest.fixture(autouse=True)
def _no_turn_left_over():
    before = turns.ran_without
    yield
    assert turns._holder is None and not turns._queue
    assert turns.ran_without == before  # every wait here ended with the turn, none by patience


def _history(session: ReviewSession) -> None:
    loading.load_history(session)


def _clusters(session: ReviewSession) -> None:
    from plur_desk.app.scale.review_at_scale import ScaleView

    session.load_history()
    ScaleView(session).refresh()


def _search_index(session: ReviewSession) -> None:
    from plur_desk.app.search.store_search import SearchService

    SearchService(session, session.root.parent / "cache", embeddings=False).sync()


def _contradiction_finder(session: ReviewSession) -> None:
    from plur_desk.app.conflicts.conflict_service import ConflictService

    ConflictService(session).rebuild()


COMPUTATIONS: dict[str, Callable[[ReviewSession], None]] = {
    "history": _history,
    "clusters": _clusters,
    "search index": _search_index,
    "contradiction finder": _contradiction_finder,
}


@pytest.mark.parametrize("name", list(COMPUTATIONS))
def test_a_computation_waits_for_the_turn_another_holds(tmp_path, name):
    store = tmp_path / "store"
    shutil.copytree(demo_source(), store)
    session = open_session(store, "Ada Reviewer", load_history=False, use_cache=False)
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with turns.turn():
            holding.set()
            release.wait(10)

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert holding.wait(5)
    finished = threading.Event()
    errors: list[BaseException] = []

    def compute() -> None:
        try:
            with running(Job(pacing)):  # (the job context is how the computation finds the window's turns)
                COMPUTATIONS[name](session)
        except BaseException as exc:  # (shown by the assertion below)
            errors.append(exc)
        finished.set()

    worker = threading.Thread(target=compute, daemon=True)
    try:
        worker.start()
        deadline = time.monotonic() + 5
        while worker.ident not in turns._queue and not finished.is_set():
            assert time.monotonic() < deadline
            time.sleep(0.002)
        assert not finished.is_set(), f"{name} ran beside another computation without asking for its turn"
    finally:
        release.set()  # (a failure here never leaves the turn held for the tests after it)
        holder.join(5)
    assert finished.wait(30) and not errors, errors
    assert turns._holder is None and not turns._queue


def test_a_long_clustering_hands_its_turn_on_at_its_steps(monkeypatch):
    """The clusters' first computation is seconds of Python at 50,000 engrams: a computation that asks for a turn
    meanwhile gets one at the next step (the statements' word vectors, each block of products, each link's detail
    check), long before the clustering ends."""
    from plur_desk.app.review.rows import created_of
    from plur_desk.app.scale.clusters import ClusterIndex
    from plur_desk.domain.plur_rules.derived import content_hash

    monkeypatch.setattr(turns_module, "SLICE_S", 0.0)  # hand on at every step where another waits
    words = ["cache", "deploy", "retry", "token", "queue", "index", "schema", "build", "lint", "merge"]
    engrams = [
        {
            "id": f"ENG-2026-11-01-{n:04d}",
            "status": "active",
            "scope": "project:web",
            "statement": (
                s := f"Always {words[n % 10]} the {words[n // 10 % 10]} before {words[n // 100 % 10]} {n % 1000}"
            ),
            "commitment": "draft",
            "content_hash": content_hash(s),
            "created_at": "2026-11-01T00:00:00.000Z",
        }
        for n in range(2000)
    ]
    index = ClusterIndex()
    began, ended, other_ran = threading.Event(), threading.Event(), threading.Event()

    def cluster() -> None:
        with running(Job(pacing)), turns.turn():
            began.set()
            index.update(engrams, created_of)
        ended.set()

    def other() -> None:
        with turns.turn():
            other_ran.set()

    handed = turns.handed_on
    worker = threading.Thread(target=cluster, daemon=True)
    worker.start()
    assert began.wait(5)
    waiter = threading.Thread(target=other, daemon=True)
    waiter.start()
    assert other_ran.wait(30)
    ran_before_the_end = not ended.is_set()
    worker.join(60)
    waiter.join(5)
    assert ended.is_set() and ran_before_the_end and turns.handed_on > handed
    alone = ClusterIndex()  # the same computation, never handing on: the same clusters
    alone.update(engrams, created_of)
    assert index.clusters() == alone.clusters() and len(alone.clusters()) >= 100
