"""numpy's BLAS keeps no helper thread spinning beside the window (`plur_desk/__init__.py`)."""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = """
import os, plur_desk, numpy
a = numpy.ones((2000, 384), dtype=numpy.float32)
a.dot(numpy.ones(384, dtype=numpy.float32))  # a similarity search's product
print(len(os.listdir('/proc/self/task')), os.environ['OPENBLAS_NUM_THREADS'])
"""


def _threads(env: dict[str, str]) -> tuple[int, str]:
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    count, setting = out.stdout.split()
    return int(count), setting


def test_importing_plur_desk_first_leaves_numpy_one_thread() -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    assert _threads(env) == (1, "1")  # the interpreter's own thread only: no BLAS helper to spin after a product


def test_a_setting_the_user_made_is_kept() -> None:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2"}
    count, setting = _threads(env)
    assert setting == "2"
    assert count == 2  # (the check above can fail: with two, OpenBLAS starts its helper)
