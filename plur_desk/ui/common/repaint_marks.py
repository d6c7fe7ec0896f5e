"""The window's repaints, marked for the background work that gives way to them (infra/window_first.py).

A repaint calls into Python many times: for every cell a list draws (the model's `index` and `multiData`), and for
every widget a Python class defines (PySide asks Python whether it overrides the virtual being called). Each call
takes the interpreter lock, and beside a worker thread running Python each take waited a switch interval: one
repaint of the queue took 100-260 ms (bench_stall --trace: `Paint` of the drafts table's viewport, in the cold open,
an approve, a history filter and hold J, while the scale view verified the session's new signatures, the embedding
job took in vectors and the load wrote its cache). So a repaint is marked from its start to the event loop's next
pass (a zero timer), and meanwhile:

- every computation gives way at its small steps (`checkpoint()`, `give_way()`, each signature verified): it waits
  for the mark's end, at most `MAX_WAIT_S`, and the repaint's calls find the lock free;
- the switch interval is cut to `PAINTING_SWITCH_S`, for the threads that do not give way (a write, a load).

Qt sends a repaint (`UpdateRequest`) of any of the window's widgets to the window itself, the top level, and paints
them all in that one delivery (a `LayoutRequest` goes to each widget that owns a layout: only the window's own is
seen): an event filter on the window (`watch`, for the window's life) marks each at its start. The filter never
handles an event (nor does a Python `event()` override of the window, which held the interpreter lock through every
event's delivery: deleting the window then waited for a worker thread that needed the lock). A list painted another
way (a synchronous `repaint()`) is marked by its model's first call (`mark`, the models' `painting`).

The filter was once on only while a bulk approval's check ran: it takes the interpreter lock at every event to the
window, and beside a single approve's write that cost 4-6 ms of the window's 99th-percentile tick (bench_stall,
alternated, with the lock taken back after a 1 ms switch interval). With the interval cut while a repaint lasts, on
for good, one full stall run's longest stalls were 45 ms (cold open), 29 (one approve), 32 (bulk) and 15 (hold J),
against 104-136, 33-70, 21-22 and 30-175 ms with the marks on the models alone or none."""

from __future__ import annotations

import sys

from PySide6.QtCore import QEvent, QObject, QTimer

from plur_desk.infra.window_first import WindowFirst

REPAINTS = (QEvent.Type.UpdateRequest, QEvent.Type.LayoutRequest)
# While a repaint is marked, a thread waiting for the interpreter lock asks for it after this long, not after the
# window's usual switch interval (ui/app.py): the repaint's calls into Python take the lock back from a thread that
# never gives way (a write, a load) in tens of microseconds, not 1 ms. Only for the repaint: between background
# threads a switch that often would cost them throughput. (bench_stall, one run each: a bulk approval's longest
# stall 97 -> 22 ms, hold J 32 -> 30 ms, with the marks alone and with 0.1 ms beside them. A table of 100 cells
# repainted beside three threads running Python at the job threads' nice value: 0.1 ms, median 20.6 / p90 29.7 / max
# 53 ms; 0.02 ms, 17.0 / 21.1 / 24.7 ms; the same beside two: 7.5 / 8.1 / 9.2 and 7.3 / 8.0 / 8.6 ms.)
PAINTING_SWITCH_S = 0.00002


def _usual_interval(otherwise: float) -> float:
    """The switch interval in force, unless a repaint has it cut (then `otherwise`)."""
    now = sys.getswitchinterval()
    return now if now > PAINTING_SWITCH_S else otherwise


class RepaintMarks(QObject):
    def __init__(self, first: WindowFirst, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._first = first
        self._ended = QTimer(self, singleShot=True, interval=0)
        self._ended.timeout.connect(self.end)
        self._marked = False
        self._usual = _usual_interval(0.005)  # (Python's own, should another window's repaint have it cut now)

    def mark(self) -> None:
        """On the window's thread, from a model's Python while Qt draws (or asks) its cells: a repaint is under way
        until the window's event loop runs again."""
        if not self._marked:
            self._marked = True
            self._usual = _usual_interval(self._usual)
            sys.setswitchinterval(PAINTING_SWITCH_S)
            self._first.repaint_started()
            self._ended.start()  # after this delivery: the next pass of the event loop

    def end(self) -> None:
        """The repaint is over (the event loop's next pass; the window closing)."""
        if self._marked:
            sys.setswitchinterval(self._usual)
        self._marked = False
        self._first.repaint_ended()

    def watch(self, window: QObject) -> None:
        """Mark every repaint of `window` (for its life: the filter goes with it)."""
        window.installEventFilter(self)

    def eventFilter(self, _watched: QObject, event: QEvent) -> bool:
        if event.type() not in REPAINTS:
            return False
        if self._marked:  # a new delivery: marked afresh, its end the next pass after it
            self._first.repaint_started()
            self._ended.start()
        else:
            self.mark()
        return False
