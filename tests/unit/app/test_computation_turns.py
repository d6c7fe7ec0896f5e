"""The store's background computations take turns (infra/turns.py): each waits for a turn another holds, and runs
once it is let go. One that did not ask would run beside the other, and the window's thread would wait behind two
threads running Python (bench/bench_gil_threads.py)."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable

import pytest

from plur_desk.app import loading
from plur_desk.app.bootstrap import open_session
from plur_desk.app.demo import demo_source
from plur_desk.app.session import ReviewSession
from plur_desk.infra import turns


def _history(session: ReviewSession) -> None:
    loading.load_history(session)


def _clusters(session: ReviewSession) -> None:
    from plur_desk.app.scale import ScaleView

    session.load_history()
    ScaleView(session).refresh()


def _search_index(session: ReviewSession) -> None:
    from plur_desk.app.search import SearchService

    SearchService(session, session.root.parent / "cache", embeddings=False).sync()


def _contradiction_finder(session: ReviewSession) -> None:
    from plur_desk.app.conflict_service import ConflictService

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
