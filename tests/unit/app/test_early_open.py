"""The launch opens the store on a thread of its own while the window is built (`loading.EarlyOpen`): the window
gets the same session it would have opened itself, only for the same folder, reviewer and clock; an opening that
failed fails in the window as before; the key unlock question reaches the window's asker, never a missing one."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from plur_desk.app import loading
from plur_desk.infra.clock import SystemClock
from plur_desk.infra.errors import NotAPlurStore

from support.stores import copy_store, make_plur_store


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    return make_plur_store(tmp_path_factory.mktemp("early"), n=40, drafts_ratio=0.3, tensions=4)


@pytest.fixture
def store(template, tmp_path) -> Path:
    return copy_store(template, tmp_path / "store")


def _never_asked(reason: str) -> bool:
    raise AssertionError(f"asked: {reason}")


def test_the_window_takes_the_session_the_launch_opened(store):
    early = loading.EarlyOpen(store, "Grace Tester")
    session = early.take(store, "Grace Tester", early.clock, _never_asked)
    assert session is not None
    itself = loading.open_for_review(store, "Grace Tester", SystemClock(), _never_asked)
    assert [row.id for row in session.drafts()] == [row.id for row in itself.drafts()] != []
    assert session.reviewer.name == "Grace Tester" and session.root == itself.root
    assert not session.fully_loaded  # drafts first, as the window's own opening
    assert [t.id for t in session.tensions(("detected",))] == [t.id for t in itself.tensions(("detected",))] != []


@pytest.mark.parametrize("other", ["path", "reviewer", "clock"])
def test_an_opening_for_something_else_is_not_taken(store, tmp_path, other):
    early = loading.EarlyOpen(store, "Grace Tester")
    path, reviewer, clock = store, "Grace Tester", early.clock
    if other == "path":
        path = copy_store(store, tmp_path / "another")
    elif other == "reviewer":
        reviewer = "Ada Reviewer"
    else:
        clock = SystemClock()
    assert early.take(path, reviewer, clock, _never_asked) is None
    assert not early._asker_given.is_set()  # its asker was not handed over either


def test_an_opening_that_failed_fails_where_the_window_takes_it(tmp_path):
    missing = tmp_path / "nothing-here"
    early = loading.EarlyOpen(missing, "Grace Tester")
    with pytest.raises(NotAPlurStore):
        early.take(missing, "Grace Tester", early.clock, _never_asked)


def test_the_unlock_question_waits_for_the_windows_asker(store):
    early = loading.EarlyOpen(store, "Grace Tester")
    early._done.wait(60)
    asked: list[str] = []
    answers: list[bool] = []
    question = threading.Thread(target=lambda: answers.append(early._ask("locked")))
    question.start()  # as signing would, from another thread, before the window has taken the session
    question.join(0.3)
    assert question.is_alive() and not asked  # waiting, not answered by nobody
    session = early.take(store, "Grace Tester", early.clock, lambda reason: asked.append(reason) or True)
    question.join(10)
    assert asked == ["locked"] and answers == [True]
    assert session is not None and session.keys is not None and session.keys.ask_unlock == early._ask
