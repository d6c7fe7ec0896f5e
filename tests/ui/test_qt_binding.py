"""The Qt binding must not corrupt Python's reference counts: PySide6 6.12.0 dropped a reference to True/False on
every Signal.emit(), so a long session (every background result is an emit) aborted with "bool_dealloc"."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = r"""
import os, sys
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from PySide6.QtCore import QCoreApplication, QObject, Signal
app = QCoreApplication([])
class Emitter(QObject):
    result = Signal(int, object)
    flag = Signal(bool)
e = Emitter()
e.result.connect(lambda token, value: None)
e.flag.connect(lambda value: None)
before = [sys.getrefcount(x) for x in (True, False, None)]
for i in range(20000):
    e.result.emit(i, None)
    e.flag.emit(i % 2 == 0)
after = [sys.getrefcount(x) for x in (True, False, None)]
print([a - b for a, b in zip(after, before)])
"""


def test_emitting_signals_leaves_reference_counts_alone():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, f"the Qt binding aborted the process:\n{done.stderr[-2000:]}"
    assert done.stdout.strip() == "[0, 0, 0]", done.stdout
