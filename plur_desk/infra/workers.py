"""How our worker processes (`python -m plur_desk.…`) are started: the same interpreter and the same copy of
plur_desk as the process that starts them, whatever the working directory or the installed copy."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from pathlib import Path

# The folder that holds this process's plur_desk package (a checkout, or site-packages when installed).
PACKAGE_PARENT = Path(__file__).resolve().parent.parent.parent


def worker_command(module: str, *args: str) -> tuple[list[str], dict[str, str]]:
    """The argv and environment for `python -m module args…`. `-P` keeps the child's working directory off its
    import path, and this process's package folder comes first: a child never imports another copy of plur_desk
    (an editable install of another checkout, a `plur_desk/` folder where it was started) than its parent."""
    paths = [str(PACKAGE_PARENT), *(p for p in sys.path if p and p != str(PACKAGE_PARENT))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    return [sys.executable, "-P", "-m", module, *args], env


def lower_worker(pid: int, steps: int) -> None:
    """Put a just-started worker `steps` nice steps below this process (nothing where that is refused). A window
    runs its parse workers below it (infra/jobs.py `Pacing.workers_below`): a cold load's workers kept both cores
    busy while the window's thread waited its turn for one (stalls of 100-250 ms as the whole store was parsed; the
    worker processes do not share its interpreter lock, only its cores). A worker still uses every core nobody
    else wants, so a load on an otherwise idle machine is as fast."""
    if steps > 0 and hasattr(os, "setpriority"):
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, pid, min(19, window_nice() + steps))


def window_nice() -> int:
    """The nice value of the process's main thread, the window's. On Linux `getpriority(PRIO_PROCESS, 0)` answers
    for the calling thread, and a job thread runs below the window already (`lower_this_thread`); the pid names the
    main thread (elsewhere, the process)."""
    return os.getpriority(os.PRIO_PROCESS, os.getpid()) if hasattr(os, "getpriority") else 0


def lower_this_thread(steps: int) -> None:
    """Run the calling thread `steps` nice steps below the window's thread (Linux, where a thread's nice value is its
    own; nothing elsewhere, or where it is refused). The window's job threads run below its own thread
    (infra/jobs.py `Pacing`): at the same nice value, a job thread that had the core the window's thread woke on
    kept it 15 ms while the window's thread, woken, waited to run (`perf record -e sched:sched_switch -e
    sched:sched_wakeup` over an approve: a stall of 20 ms, the other core running the embedding). A lower thread
    still gets every cycle the window does not want. (Not a thread that writes under the store's lock: an agent
    waiting for the lock would wait longer on a busy machine.)"""
    if sys.platform == "linux" and hasattr(os, "setpriority"):
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), min(19, window_nice() + steps))
