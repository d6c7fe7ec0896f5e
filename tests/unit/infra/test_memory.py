"""numpy's huge pages are off for the window's process and its workers (`no_huge_pages_for_arrays`)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="numpy asks for huge pages on Linux")

# prints numpy's setting as found (the setter returns the previous value), then whether a child process inherits the
# variable
PROBE = """
import os, subprocess, sys
from plur_desk.infra.memory import no_huge_pages_for_arrays
{before}
print(no_huge_pages_for_arrays())
import numpy
from numpy._core import multiarray
print(multiarray._set_madvise_hugepage(True))
print(subprocess.run([sys.executable, "-c", "import os; print(os.environ.get('NUMPY_MADVISE_HUGEPAGE'))"],
                     capture_output=True, text=True).stdout.strip())
"""


def _run(before: str = "", **env: str) -> list[str]:
    environment = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"} | env
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(before=before)], capture_output=True, text=True, env=environment, check=True
    )
    return out.stdout.split()


def test_numpy_imported_afterwards_asks_for_no_huge_pages_nor_do_workers() -> None:
    assert _run() == ["True", "False", "0"]


def test_numpy_imported_before_is_switched_off() -> None:
    # without the call numpy would ask for them on this kernel: the first line shows it was on, then switched off
    on = _run(before="import numpy; from numpy._core import multiarray; print(multiarray._set_madvise_hugepage(True))")
    assert on == ["True", "True", "False", "0"]


def test_a_users_own_setting_is_kept() -> None:
    assert _run(NUMPY_MADVISE_HUGEPAGE="1") == ["False", "True", "1"]
