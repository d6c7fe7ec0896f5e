"""Peak memory of our worker processes only, for the probes bench_launch.py and bench_memory.py run in a fresh
window process (`from bench.worker_peaks import track_parse_workers, workers_peak_mb`; the probes run with this
checkout on PYTHONPATH).

The parse workers' own peaks are read when they are reaped (wait4 returns them), and any plur_desk worker still
running is read from /proc (VmHWM). RUSAGE_CHILDREN would also count keyring's ldconfig/gcc probes, which show the
window's pages between fork and exec.
"""

from __future__ import annotations

import os
import subprocess

worker_peaks: list[float] = []


def track_parse_workers() -> None:
    """Wrap the parse pool's worker start so each worker's peak is kept when it is reaped."""
    from plur_desk.store.lists import parse_pool

    start_worker = parse_pool._start_worker

    def tracked() -> subprocess.Popen[bytes]:
        proc = start_worker()

        def wait(timeout: float | None = None, proc: subprocess.Popen[bytes] = proc) -> int:
            if proc.returncode is None:
                try:
                    _pid, status, usage = os.wait4(proc.pid, 0)
                except ChildProcessError:  # reaped elsewhere meanwhile
                    return subprocess.Popen.wait(proc, timeout)
                worker_peaks.append(usage.ru_maxrss / 1024)
                proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode

        proc.wait = wait  # type: ignore[method-assign]
        return proc

    parse_pool._start_worker = tracked


def workers_peak_mb() -> float:
    peaks = list(worker_peaks)
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as handle:
                if int(handle.read().rsplit(")", 1)[1].split()[1]) != os.getpid():
                    continue
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if b"plur_desk." not in handle.read():
                    continue
            with open(f"/proc/{pid}/status") as handle:
                peaks += [int(line.split()[1]) / 1024 for line in handle if line.startswith("VmHWM:")]
        except (OSError, ValueError, IndexError):
            pass
    return max(peaks, default=0.0)
