"""The once-a-second look at the store (PLUR's lock, files changed, read-only reasons) runs off the GUI thread;
the actions follow what it finds: a month file that became a FIFO makes the store read-only, and its removal
makes it writable again."""

from __future__ import annotations

import os
import threading

from plur_desk.app.session import ReviewSession


def test_a_fifo_month_disables_decisions_until_it_is_gone(qtbot, window, store_copy, monkeypatch):
    approve = window.qactions["review.approve"]
    window.drafts.table.setFocus()
    qtbot.waitUntil(approve.isEnabled, timeout=10000)
    looked_from: list[bool] = []
    real = ReviewSession.read_only_reasons.fget
    assert real is not None

    def reasons(session: ReviewSession) -> list[str]:
        looked_from.append(threading.current_thread() is threading.main_thread())
        return real(session)

    monkeypatch.setattr(ReviewSession, "read_only_reasons", property(reasons))
    fifo = store_copy / "history" / "2025-01.jsonl"
    os.mkfifo(fifo)
    window.opener.poll()  # what the one-second timer does
    qtbot.waitUntil(lambda: not approve.isEnabled(), timeout=10000)
    assert window.opener.read_only and "2025-01.jsonl" in window.opener.read_only[0]
    fifo.unlink()
    window.opener.poll()
    qtbot.waitUntil(approve.isEnabled, timeout=10000)
    assert looked_from and not any(looked_from)  # never asked on the GUI thread
