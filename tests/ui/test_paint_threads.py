"""The window paints on its own thread: Qt's raster engine otherwise hands large fills to a pool of helper threads
and waits for them, and on a machine whose cores are busy with the store's background work those waits were the
window's longest stalls while holding J (see `keep_painting_on_the_window_thread`).

Each case runs in a fresh process: Qt decides once per process, at the first large fill."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PAINT = """
import os, sys
from PySide6.QtGui import QColor, QImage, QPainter
if sys.argv[1] == "window":
    from plur_desk.ui.app import make_application
    make_application([])
else:
    from PySide6.QtWidgets import QApplication
    QApplication([])
image = QImage(1280, 800, QImage.Format.Format_ARGB32_Premultiplied)
painter = QPainter(image)
painter.setRenderHint(QPainter.RenderHint.Antialiasing)
painter.setBrush(QColor(200, 10, 10, 128))
for i in range(5):  # fills of hundreds of spans each: the size Qt splits across its helper threads
    painter.drawEllipse(10 + i, 10, 1100, 700)
painter.end()
print(sum(open(f"/proc/self/task/{t}/comm").read().strip() == "Thread (pooled)" for t in os.listdir("/proc/self/task")))
"""


def pooled_threads(how: str) -> int:
    env = {k: v for k, v in os.environ.items() if k != "QT_NO_GUI_THREADPOOL"}
    env["QT_QPA_PLATFORM"] = "offscreen"
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-c", PAINT, how], env=env, capture_output=True, text=True, timeout=60, check=True
    )
    return int(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads through /proc")
def test_the_window_paints_large_fills_without_helper_threads() -> None:
    if pooled_threads("plain") == 0:  # the control: Qt as it comes does hand these fills to helper threads here
        pytest.skip("this Qt paints these fills on the calling thread anyway (one core?)")
    assert pooled_threads("window") == 0
