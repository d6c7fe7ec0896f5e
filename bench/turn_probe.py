"""What the GUI thread was doing in each stall: a watchdog thread samples every thread's stack while the GUI thread's
10 ms timer is late, and each stall is reported with the GUI thread's own CPU over it.

    probe = TurnProbe(); probe.start() ... probe.stop(); print(probe.report())

Wall time alone cannot tell a slot that computes for 200 ms from a GUI thread that waited 200 ms for the interpreter
lock (held by a job's long C call, or a garbage-collector pass) or for a core (the machine's load). Per stall this
gives: the gap, the GUI thread's CPU during it (`time.thread_time` on that thread: high = its own work, low = it
waited), the process's CPU (other threads working meanwhile), collector passes, and the innermost frames of the GUI
thread and of the busiest other thread as sampled while it was late. The watchdog needs the lock to sample: a stall
by a C call that holds it is seen after the fact (the other thread's frame then names the call's caller).
"""

from __future__ import annotations

import gc
import sys
import threading
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field

from PySide6.QtCore import QElapsedTimer, Qt, QTimer

PERIOD_MS = 10


def _where(frame: object, depth: int = 4) -> str:
    """The innermost frames of plur_desk (or the innermost frame when none is), innermost first."""
    stack = traceback.extract_stack(frame)  # type: ignore[arg-type]
    ours = [f for f in stack if "plur_desk" in f.filename]
    picked = (ours or stack[-1:])[-depth:]
    innermost = stack[-1]
    names = [f"{f.filename.rsplit('plur_desk/', 1)[-1]}:{f.lineno} {f.name}" for f in reversed(picked)]
    if ours and innermost is not ours[-1]:
        names.insert(0, f"[{innermost.filename.rsplit('/', 1)[-1]}:{innermost.lineno} {innermost.name}]")
    return " < ".join(names)


@dataclass
class Stall:
    gap_ms: float
    gui_cpu_ms: float
    process_cpu_ms: float
    gc_ms: float
    gui: Counter[str] = field(default_factory=Counter)
    others: Counter[str] = field(default_factory=Counter)


class TurnProbe:
    def __init__(self, late_ms: float = 60.0) -> None:
        self.late_ms = late_ms
        self.stalls: list[Stall] = []
        self.gaps: list[float] = []
        self.worst_cpu = 0.0  # the most GUI-thread CPU between two ticks: its own work, whatever the load
        self.clock = QElapsedTimer()
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(PERIOD_MS)
        self.timer.timeout.connect(self._tick)
        self._gui = threading.get_ident()
        self._beat = time.perf_counter()
        self._cpu = time.thread_time()
        self._process = time.process_time()
        self._gui_seen: Counter[str] = Counter()
        self._others_seen: Counter[str] = Counter()
        self._gc_ms = 0.0
        self._gc_began = 0.0
        self._running = False
        self._lock = threading.Lock()

    def start(self) -> None:
        self.gaps, self.stalls, self.worst_cpu = [], [], 0.0
        self.clock.start()
        self._beat, self._cpu, self._process = time.perf_counter(), time.thread_time(), time.process_time()
        self._running = True
        gc.callbacks.append(self._on_gc)
        threading.Thread(target=self._watch, daemon=True, name="turn-probe").start()
        self.timer.start()

    def stop(self) -> tuple[float, float, int]:
        self.timer.stop()
        self._running = False
        if self._on_gc in gc.callbacks:
            gc.callbacks.remove(self._on_gc)
        gaps = sorted(self.gaps) or [0.0]
        return gaps[-1], gaps[min(len(gaps) - 1, int(len(gaps) * 0.99))], len(gaps)

    def _on_gc(self, stage: str, _info: dict[str, int]) -> None:
        if stage == "start":
            self._gc_began = time.perf_counter()
        else:
            self._gc_ms += (time.perf_counter() - self._gc_began) * 1000

    def _tick(self) -> None:
        now, cpu, process = time.perf_counter(), time.thread_time(), time.process_time()
        gap = max(0.0, (now - self._beat) * 1000 - PERIOD_MS)
        self.gaps.append(gap)
        self.worst_cpu = max(self.worst_cpu, (cpu - self._cpu) * 1000)
        with self._lock:
            if gap > self.late_ms:
                self.stalls.append(
                    Stall(
                        gap,
                        (cpu - self._cpu) * 1000,
                        (process - self._process) * 1000,
                        self._gc_ms,
                        self._gui_seen,
                        self._others_seen,
                    )
                )
            self._gui_seen, self._others_seen, self._gc_ms = Counter(), Counter(), 0.0
            self._beat, self._cpu, self._process = time.perf_counter(), time.thread_time(), time.process_time()

    def _watch(self) -> None:
        me = threading.get_ident()
        while self._running:
            time.sleep(0.01)
            if (time.perf_counter() - self._beat) * 1000 < PERIOD_MS + self.late_ms / 2:
                continue
            frames = sys._current_frames()
            with self._lock:
                for ident, frame in frames.items():
                    if ident == me:
                        continue
                    where = _where(frame)
                    if ident == self._gui:
                        self._gui_seen[where] += 1
                    elif "plur_desk" in where:  # idle pool threads wait in Qt, outside Python
                        self._others_seen[where] += 1

    def report(self, top: int = 3) -> list[str]:
        lines = []
        for stall in sorted(self.stalls, key=lambda s: -s.gap_ms)[:top]:
            lines.append(
                f"    stall {stall.gap_ms:.0f} ms: GUI-thread CPU {stall.gui_cpu_ms:.0f} ms, process CPU "
                f"{stall.process_cpu_ms:.0f} ms, gc {stall.gc_ms:.0f} ms"
            )
            for where, n in stall.gui.most_common(2):
                lines.append(f"      GUI x{n}: {where}")
            for where, n in stall.others.most_common(2):
                lines.append(f"      other x{n}: {where}")
        return lines
