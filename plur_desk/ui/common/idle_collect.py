"""The cyclic garbage collector's full passes, run when the reviewer is idle instead of whenever it decides.

A full pass walks every tracked object in one hold of the interpreter lock: at 50,000 engrams and 1,000,000
history lines, 300-660 ms of a window that cannot paint or take a key (bench/bench_stall.py, gc.callbacks). Loaded
stores are kept out of the passes (`infra.memory.keep_loaded_objects`) and automatic full passes are off
(`defer_full_collections`); this collector runs one once the reviewer did nothing for `IDLE_S` seconds (the window
calls `touch` from what every key, click and selection goes through: its context updates and its actions; an
application-wide event filter would put the interpreter lock on the path of every event), at most every `EVERY_S`,
and at the latest after `LATEST_S` (so garbage in reference cycles cannot pile up in a long session of continuous
work). Young collections are not affected.

A pass walks only what was made since the last one (`collect_recent`: the kept store is not walked again; the
pass that walked it too took 475-641 ms at 50,000 engrams with every statement distinct, a stall for a key pressed
just then). The pass over everything kept (`collect_everything`: a closed store's cycles) runs only while the
reviewer is idle, after a store was closed (`store_closed`) or at most every `EVERYTHING_S`; never while they work.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QApplication

from plur_desk.infra.memory import collect_everything, collect_recent, defer_full_collections

IDLE_S = 20.0
EVERY_S = 120.0
LATEST_S = 900.0
EVERYTHING_S = 3600.0
CHECK_MS = 5000
PROPERTY = "plurDeskIdleCollector"


class IdleCollector(QObject):
    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self.last_input = self.last_pass = self.last_everything = time.monotonic()
        self.passes = 0
        self.everything_due = False  # a store was closed: its objects in cycles are freed by the next idle pass
        defer_full_collections()
        self._timer = QTimer(self, interval=CHECK_MS)
        self._timer.timeout.connect(self.check)
        self._timer.start()

    def touch(self) -> None:
        """The reviewer did something."""
        self.last_input = time.monotonic()

    def store_closed(self) -> None:
        self.everything_due = True

    def check(self) -> None:
        now = time.monotonic()
        idle = now - self.last_input >= IDLE_S
        if (idle and now - self.last_pass >= EVERY_S) or now - self.last_pass >= LATEST_S:
            self.collect(everything=idle and (self.everything_due or now - self.last_everything >= EVERYTHING_S))

    def collect(self, everything: bool = True) -> int:
        found = collect_everything() if everything else collect_recent()
        self.last_pass = time.monotonic()
        if everything:
            self.last_everything, self.everything_due = self.last_pass, False
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
