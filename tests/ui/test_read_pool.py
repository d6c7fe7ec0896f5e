"""The read pool: a read made stale while it waited for a thread is skipped, not run; only the newest is shown."""

from __future__ import annotations

import threading

from plur_desk.ui.runner import ReadPool


def test_a_read_that_went_stale_before_it_started_is_never_run(qtbot):
    pool = ReadPool(threads=1)
    release, started = threading.Event(), threading.Event()
    ran: list[str] = []
    shown: list[object] = []

    def blocking() -> str:
        started.set()
        release.wait(10)
        ran.append("first")
        return "first"

    def read(name: str):
        def fn() -> str:
            ran.append(name)
            return name

        return fn

    pool.submit("detail", blocking, shown.append)  # holds the only thread
    assert started.wait(10)
    pool.submit("detail", read("second"), shown.append)  # stale as soon as the third is asked for
    pool.submit("detail", read("third"), shown.append)
    release.set()
    qtbot.waitUntil(lambda: pool.pending == 0, timeout=10000)
    assert ran == ["first", "third"]
    assert shown == ["third"]
    assert pool.dropped == 2


def test_a_draft_s_history_is_read_off_the_gui_thread_and_shown_in_its_detail(qtbot, window, monkeypatch):
    """The detail's History section reads the engram's events from the month files and checks their trust: on
    the read pool, filled into the detail of the draft still shown."""
    from plur_desk.ui import review_controller

    session = window.session
    current = window.drafts.current_id()
    with_history = [r.id for r in session.drafts() if r.id != current and session.history.timeline(r.id)]
    assert with_history
    read_on: list[threading.Thread] = []
    real = review_controller.timeline_html

    def timeline(session_, engram_id):  # type: ignore[no-untyped-def]
        read_on.append(threading.current_thread())
        return real(session_, engram_id)

    monkeypatch.setattr(review_controller, "timeline_html", timeline)
    window.drafts.select_id(with_history[0])
    assert window.drafts.current_id() == with_history[0]
    qtbot.waitUntil(lambda: "History" in window.drafts.detail.toPlainText(), timeout=10000)
    assert read_on and threading.main_thread() not in read_on
    last = session.history.timeline(with_history[0])[-1]
    shown = (last.get("data") or {}).get("action") or last["event"]  # what the History section names
    assert str(shown) in window.drafts.detail.toPlainText()
    assert window.drafts.displayed_seen() is not None  # a verdict still acts on what is shown
