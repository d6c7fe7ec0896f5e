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


def test_a_store_opened_with_a_fifo_month_is_read_only_from_the_first_draft(qtbot, store_copy, tmp_path, monkeypatch):
    from PySide6.QtCore import Qt

    from plur_desk.app.settings import Settings, SettingsStore
    from plur_desk.infra.clock import FixedClock
    from plur_desk.ui.app import make_application
    from plur_desk.ui.main_window import MainWindow

    from ui.conftest import NOW

    looked_from: list[bool] = []
    real = ReviewSession.read_only_reasons.fget
    assert real is not None

    def reasons(session: ReviewSession) -> list[str]:
        looked_from.append(threading.current_thread() is threading.main_thread())
        return real(session)

    monkeypatch.setattr(ReviewSession, "read_only_reasons", property(reasons))
    os.mkfifo(store_copy / "history" / "2025-01.jsonl")
    make_application()
    win = MainWindow(
        SettingsStore(tmp_path / "settings.yaml"), Settings(reviewer_name="Grace"), "Grace", FixedClock(NOW)
    )
    qtbot.addWidget(win)
    win.show()
    win.open_path(store_copy)
    qtbot.waitUntil(
        lambda: win.session is not None and win.session.history.loaded and win.runner.pending == 0, timeout=20000
    )
    win.drafts.table.setFocus(Qt.FocusReason.OtherFocusReason)
    assert not win.qactions["review.approve"].isEnabled()
    assert (
        "Read-only" in win.workspace.messages.banner.text() and "2025-01.jsonl" in win.workspace.messages.banner.text()
    )
    assert looked_from and not any(looked_from)  # the drafts load, the full load and the polls: off the GUI thread
