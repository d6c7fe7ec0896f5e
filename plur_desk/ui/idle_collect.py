"""The cyclic garbage collector's full passes, run when the reviewer is idle instead of whenever it decides.

A full pass walks every tracked object in one hold of the interpreter lock: at 50,000 engrams and 1,000,000
history lines, 300-660 ms of a window that cannot paint or take a key (bench/bench_stall.py, gc.callbacks). Loaded
stores are kept out of the passes (`infra.memory.keep_loaded_objects`) and automatic full passes are off
(`defer_full_collections`); this collector runs one once the reviewer did nothing for `IDLE_S` seconds (the window
calls `touch` from what every key, click and selection goes through: its context updates and its actions; an
application-wide event filter would put the interpreter lock on the path of every event), at most every `EVERY_S`,
and at the latest after `LATEST_S` (so garbage in reference cycles cannot pile up in a long session of continuous
work). Young collections are not affected.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QApplication

from plur_desk.infra.memory import collect_everything, defer_full_collections

IDLE_S = 20.0
EVERY_S = 120.0
LATEST_S = 900.0
CHECK_MS = 5000
PROPERTY = "plurDeskIdleCollector"


class IdleCollector(QObject):
    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self.last_input = self.last_pass = time.monotonic()
        self.passes = 0
        defer_full_collections()
        self._timer = QTimer(self, interval=CHECK_MS)
        self._timer.timeout.connect(self.check)
        self._timer.start()

    def touch(self) -> None:
        """The reviewer did something."""
        self.last_input = time.monotonic()

    def check(self) -> None:
        now = time.monotonic()
        idle = now - self.last_input >= IDLE_S and now - self.last_pass >= EVERY_S
        if idle or now - self.last_pass >= LATEST_S:
            self.collect()

    def collect(self) -> int:
        found = collect_everything()
        self.last_pass = time.monotonic()
        self.passes += 1
        return found


def install(app: QApplication) -> IdleCollector:
    """Once per application: kept in a property of the application, not looked up with `findChild` (whose first
    call, on the launch's path to the first draft, took 13-25 ms: PySide's first conversion of a child list)."""
    existing = app.property(PROPERTY)
    if not isinstance(existing, IdleCollector):
        existing = IdleCollector(app)
        app.setProperty(PROPERTY, existing)
    return existing
