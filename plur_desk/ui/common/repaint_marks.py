"""The window's repaints, marked for the background work that gives way to them (infra/window_first.py).

A list's repaint calls into Python for every cell it draws (the model's `index` and `multiData`), and each call
takes the interpreter lock: beside a worker thread running Python each take waited a switch interval, and one
repaint of the queue took 100-260 ms (bench_stall --trace: `Paint` of the drafts table's viewport, in the cold
open, an approve, a history filter and hold J, while the scale view verified the session's new signatures and the
embedding job took in vectors). So the window's models say when its thread is in their Python (`mark`, the first
call of a repaint: a flag read after that), and the mark ends by a zero timer, once the delivery under way (the
paint) is over. Meanwhile a computation gives way at its small steps (`checkpoint()`, `give_way()`, each signature
it verifies): it waits for the mark's end, at most `MAX_WAIT_S`, and the rest of the repaint's calls find the lock
free; and the switch interval is cut (`PAINTING_SWITCH_S`) for the threads that do not give way. Paints that never
call Python (a text view, a label) are not marked.

A computation the reviewer waits for may also have every repaint of the window marked from its start, before any
Python of it runs (`watch` .. `unwatch`, a bulk approval's check): Qt sends a repaint (`UpdateRequest`) of any of the
window's widgets to the window itself, the top level, and paints them all in that one delivery (a `LayoutRequest`
goes to each widget that owns a layout: only the window's own is seen). An event filter on the window sees each
first. The filter never handles an event (nor does a Python `event()` override of the window, which held the
interpreter lock through every event's delivery: deleting the window then waited for a worker thread that needed
the lock). It is on only while such a computation runs: it takes the interpreter lock at every event to the window
and its end at every repaint, and beside a single approve's write that cost its repaint 4-6 ms of the window's
99th-percentile tick (bench_stall, alternated)."""

from __future__ import annotations

import sys

from PySide6.QtCore import QEvent, QObject, QTimer

from plur_desk.infra.window_first import WindowFirst

REPAINTS = (QEvent.Type.UpdateRequest, QEvent.Type.LayoutRequest)
# While a repaint is marked, a thread waiting for the interpreter lock asks for it after this long, not after the
# window's usual switch interval (ui/app.py): the repaint's calls into Python take the lock back from a thread that
# never gives way (a write, a load) in ~0.1 ms, not 1 ms. Only for the repaint: between background threads a switch
# every 0.1 ms would cost them throughput. (bench_stall, one run each: a bulk approval's longest stall 97 -> 22 ms,
# hold J 32 -> 30 ms, with the marks alone and with this beside them.)
PAINTING_SWITCH_S = 0.0001


def _usual_interval(otherwise: float) -> float:
    """The switch interval in force, unless a repaint has it cut (then `otherwise`)."""
    now = sys.getswitchinterval()
    return now if now > PAINTING_SWITCH_S else otherwise


class RepaintMarks(QObject):
    def __init__(self, first: WindowFirst, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._first = first
        self._ended = QTimer(self, singleShot=True, interval=0)
        self._ended.timeout.connect(self._end)
        self._marked = False
        self._usual = _usual_interval(0.005)  # (Python's own, should another window's repaint have it cut now)
        self._watched: QObject | None = None
        self._watchers = 0

    def mark(self) -> None:
        """On the window's thread, from a model's Python while Qt draws (or asks) its cells: a repaint is under way
        until the window's event loop runs again."""
        if not self._marked:
            self._marked = True
            self._usual = _usual_interval(self._usual)
            sys.setswitchinterval(PAINTING_SWITCH_S)
            self._first.repaint_started()
            self._ended.start()  # after this delivery: the next pass of the event loop

    def _end(self) -> None:
        if self._marked:
            sys.setswitchinterval(self._usual)
        self._marked = False
        self._first.repaint_ended()

    def watch(self, window: QObject) -> None:
        """A computation that gives way starts: mark `window`'s repaints until as many `unwatch`."""
        self._watchers += 1
        if self._watchers == 1:
            self._watched = window
            window.installEventFilter(self)

    def unwatch(self) -> None:
        assert self._watchers > 0, "unwatch without its watch"
        self._watchers -= 1
        if not self._watchers and self._watched is not None:
            self._watched.removeEventFilter(self)
            self._watched = None
            self._end()

    def eventFilter(self, _watched: QObject, event: QEvent) -> bool:
        if event.type() in REPAINTS:
            self._end()  # a new delivery: its end is the next pass
            self.mark()
        return False
