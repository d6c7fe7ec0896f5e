"""The window's repaints, marked for the background work that gives way to them (infra/window_first.py).

Qt sends a repaint (`UpdateRequest`) of any of the window's widgets to the window itself, the top level, and paints
them all in that one delivery (a `LayoutRequest` goes to each widget that owns a layout: only the window's own is
seen). An event filter on the window sees each first: the repaint is marked as started, and as ended by a zero
timer, which fires once the delivery (the paint) is over. Paints that come another way (an expose, a resize, a
synchronous `repaint()`) are not marked: they cost speed only, as before. The
filter never handles an event (nor does a Python `event()` override of the window, which held the interpreter lock
through every event's delivery: deleting the window then waited for a worker thread that needed the lock).

The filter is on only while a computation that gives way runs (`watch` .. `unwatch`, a bulk approval's check): it
takes the interpreter lock at every event to the window and its end at every repaint, and beside a single approve's
write that cost its repaint 4-6 ms of the window's 99th-percentile tick (bench_stall, alternated)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget

from plur_desk.infra.window_first import WindowFirst

REPAINTS = (QEvent.Type.UpdateRequest, QEvent.Type.LayoutRequest)


class RepaintMarks(QObject):
    def __init__(self, window: QWidget, first: WindowFirst) -> None:
        super().__init__(window)
        self._window, self._first = window, first
        self._ended = QTimer(self, singleShot=True, interval=0)
        self._ended.timeout.connect(first.repaint_ended)
        self._watchers = 0

    def watch(self) -> None:
        """A computation that gives way starts: mark the window's repaints until as many `unwatch`."""
        self._watchers += 1
        if self._watchers == 1:
            self._window.installEventFilter(self)

    def unwatch(self) -> None:
        assert self._watchers > 0, "unwatch without its watch"
        self._watchers -= 1
        if not self._watchers:
            self._window.removeEventFilter(self)
            self._first.repaint_ended()

    def eventFilter(self, _watched: QObject, event: QEvent) -> bool:
        if event.type() in REPAINTS:
            self._first.repaint_started()
            self._ended.start()  # after this delivery: the next pass of the event loop
        return False
