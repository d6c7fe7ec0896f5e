"""The window's repaints, marked for the background work that gives way to them (infra/window_first.py).

Qt sends a repaint (`UpdateRequest`) and a layout (`LayoutRequest`) of any of the window's widgets to the window
itself, the top level, and paints them all in that one delivery. An event filter on the window sees each first: the
repaint is marked as started, and as ended by a zero timer, which fires once the delivery (the paint) is over. The
filter never handles an event (nor does a Python `event()` override of the window, which held the interpreter lock
through every event's delivery: deleting the window then waited for a worker thread that needed the lock)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget

from plur_desk.infra.window_first import WindowFirst

REPAINTS = (QEvent.Type.UpdateRequest, QEvent.Type.LayoutRequest)


class RepaintMarks(QObject):
    def __init__(self, window: QWidget, first: WindowFirst) -> None:
        super().__init__(window)
        self._first = first
        self._ended = QTimer(self, singleShot=True, interval=0)
        self._ended.timeout.connect(first.repaint_ended)
        window.installEventFilter(self)

    def eventFilter(self, _watched: QObject, event: QEvent) -> bool:
        if event.type() in REPAINTS:
            self._first.repaint_started()
            self._ended.start()  # after this delivery: the next pass of the event loop
        return False


def follow(window: QWidget, first: WindowFirst) -> RepaintMarks:
    """Mark `window`'s repaints in `first` from now on (for as long as the window lives)."""
    return RepaintMarks(window, first)
