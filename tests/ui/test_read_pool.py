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
