"""The once-a-second look at the store (PLUR's lock, files changed, read-only reasons) runs off the GUI thread;
the actions follow what it finds: a month file that became a FIFO makes the store read-only, and its removal
makes it writable again."""

from __future__ import annotations

import os
import threading

from PySide6.QtCore import Qt

from plur_desk.app.review.session import ReviewSession

from ui.conftest import open_window_on


def _threads_asking(monkeypatch) -> list[bool]:  # type: ignore[no-untyped-def]
    """For each time a session's read-only reasons are asked from now on: whether on the GUI thread."""
    looked_from: list[bool] = []
    real = ReviewSession.read_only_reasons.fget
    assert real is not None

    def reasons(session: ReviewSession) -> list[str]:
        looked_from.append(threading.current_thread() is threading.main_thread())
        return real(session)

    monkeypatch.setattr(ReviewSession, "read_only_reasons", property(reasons))
    return looked_from


def test_a_fifo_month_disables_decisions_until_it_is_gone(qtbot, window, store_copy, monkeypatch):
    approve = window.qactions["review.approve"]
    window.drafts.table.setFocus()
    qtbot.waitUntil(approve.isEnabled, timeout=10000)
    looked_from = _threads_asking(monkeypatch)
    fifo = store_copy / "history" / "2025-01.jsonl"
    os.mkfifo(fifo)
    window.opener.poll()  # what the one-second timer does
    qtbot.waitUntil(lambda: not approve.isEnabled(), timeout=10000)
    assert window.opener.read_only and "2025-01.jsonl" in window.opener.read_only[0]
    fifo.unlink()
    window.opener.poll()
    qtbot.waitUntil(approve.isEnabled, timeout=10000)
    assert looked_from and not any(looked_from)  # never asked on the GUI thread


def test_a_store_opened_with_a_fifo_month_is_read_only_from_the_first_draft(qtbot, store_copy, tmp_path, monkeypatch):
    looked_from = _threads_asking(monkeypatch)
    os.mkfifo(store_copy / "history" / "2025-01.jsonl")
    win = open_window_on(qtbot, tmp_path, store_copy)
    qtbot.waitUntil(
        lambda: win.session is not None and win.session.history.loaded and win.jobs.pending("session") == 0,
        timeout=20000,
    )
    win.drafts.table.setFocus(Qt.FocusReason.OtherFocusReason)
    assert not win.qactions["review.approve"].isEnabled()
    banner = win.workspace.messages.banner.text()
    assert "Read-only" in banner and "2025-01.jsonl" in banner
    assert looked_from and not any(looked_from)  # the drafts load, the full load and the polls: off the GUI thread
