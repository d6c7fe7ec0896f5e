"""A loaded store's objects are kept out of the cyclic collector's passes (each full pass walked millions of
objects holding the interpreter lock: the window's longest stalls); full passes run when the reviewer is idle,
and then nothing of a store that was closed survives."""

from __future__ import annotations

import gc
import shutil
import weakref

from PySide6.QtWidgets import QApplication

from plur_desk.app.demo import demo_source
from plur_desk.infra.memory import FULL_PASS_NEVER
from plur_desk.ui.common import idle_collect


def _loaded(window) -> bool:  # type: ignore[no-untyped-def]
    session = window.session
    return (
        session is not None and session.fully_loaded and session.history.loaded and window.jobs.pending("session") == 0
    )


def test_a_closed_store_is_freed_by_the_next_idle_pass(qtbot, window, tmp_path, monkeypatch):
    qtbot.waitUntil(lambda: _loaded(window), timeout=20000)
    assert gc.get_freeze_count() > 0  # the records, the history index: kept once loaded
    assert gc.get_threshold()[2] == FULL_PASS_NEVER  # no automatic full pass in the middle of a key
    first = weakref.ref(window.session)
    other = tmp_path / "other"
    shutil.copytree(demo_source(), other)
    window.open_path(other)
    qtbot.waitUntil(lambda: _loaded(window) and window.session is not first(), timeout=20000)
    service = lambda: window.finder.service  # noqa: E731
    qtbot.waitUntil(lambda: service() is not None and service().session is window.session, timeout=20000)
    qtbot.waitUntil(
        lambda: window.scale.view is not None and window.scale.view.session is window.session, timeout=20000
    )
    qtbot.waitUntil(lambda: window.jobs.pending("scale") == 0 and window.jobs.pending("index") == 0, timeout=20000)
    gc.collect()
    assert gc.get_freeze_count() > 0
    idle = idle_collect.install(QApplication.instance())
    assert idle.everything_due  # the window said a store was closed
    clock = [idle.last_pass + idle_collect.EVERY_S + 1]
    monkeypatch.setattr(idle_collect.time, "monotonic", lambda: clock[0])
    idle.last_input = clock[0] - idle_collect.IDLE_S - 1
    idle.check()  # the next idle pass
    assert first() is None
    assert not idle.everything_due


class _Node:
    other: object = None


def test_an_idle_pass_walks_only_what_was_made_since_unless_a_store_was_closed(qtbot, window, monkeypatch):
    idle = idle_collect.install(QApplication.instance())
    clock = [1000.0]
    monkeypatch.setattr(idle_collect.time, "monotonic", lambda: clock[0])
    idle.last_input = idle.last_pass = idle.last_everything = clock[0]
    idle.everything_due = False
    passes = idle.passes
    a, b = _Node(), _Node()
    a.other, b.other = b, a  # garbage in a cycle, once dropped
    kept = weakref.ref(a)
    gc.freeze()  # as a loaded store's objects are kept
    del a, b
    clock[0] += idle_collect.EVERY_S + 1
    idle.check()
    assert kept() is not None  # the kept objects were not walked: the pass cost what was made since
    idle.store_closed()
    clock[0] += idle_collect.LATEST_S
    window.drafts.table.setFocus()
    qtbot.keyClick(window.drafts.table, "j")  # the reviewer works: never the long pass now
    idle.check()
    assert idle.passes == passes + 2  # the pass due at the latest, over what was made since
    assert kept() is not None and idle.everything_due
    clock[0] += idle_collect.EVERY_S + 1
    idle.check()  # paused again: the pass over everything
    assert kept() is None


def test_the_idle_pass_waits_for_the_reviewer_to_pause(qtbot, window, monkeypatch):
    idle = idle_collect.install(QApplication.instance())
    clock = [1000.0]
    monkeypatch.setattr(idle_collect.time, "monotonic", lambda: clock[0])
    idle.last_input = idle.last_pass = clock[0]
    passes = idle.passes
    clock[0] += idle_collect.EVERY_S + 1
    window.drafts.table.setFocus()
    qtbot.keyClick(window.drafts.table, "j")  # the reviewer moves on: not idle
    idle.check()
    assert idle.passes == passes
    clock[0] += idle_collect.IDLE_S + 1
    idle.check()
    assert idle.passes == passes + 1  # paused long enough
    clock[0] += idle_collect.IDLE_S + 1
    idle.check()
    assert idle.passes == passes + 1  # not again before EVERY_S
    clock[0] += idle_collect.LATEST_S
    window.drafts.table.setFocus()
    qtbot.keyClick(window.drafts.table, "k")
    idle.check()
    assert idle.passes == passes + 2  # at the latest after LATEST_S, even while the reviewer works


def test_the_search_index_and_the_scale_view_are_kept_out_of_the_idle_passes(qtbot, window):
    """Built behind the first draft, they are hundreds of thousands of lasting objects at 50,000 engrams: the first
    idle pass walked them in 166 ms. Once built they are kept like the loaded store."""
    qtbot.waitUntil(lambda: _loaded(window), timeout=20000)
    qtbot.waitUntil(
        lambda: (
            window.finder.service is not None
            and window.scale.view is not None
            and window.jobs.pending("scale") == 0
            and window.jobs.pending("index") == 0
        ),
        timeout=20000,
    )
    view, service = window.scale.view, window.finder.service
    walked = {id(o) for o in gc.get_objects()}  # what a pass walks: the objects not kept
    assert id(view) not in walked and id(view.index) not in walked
    assert id(service) not in walked and id(service.index) not in walked
