"""How long the window's thread waits beside busy background threads: a 10 ms QTimer on the main thread (as the
stall probe in bench_stall.py) while N threads run pure Python, long C calls that keep the interpreter lock
(sorted), or C calls that release it (sha256, a 30 MB write and fsync). Prints p50 / p99 / max gap per case.

    QT_QPA_PLATFORM=offscreen python bench/bench_gil_threads.py [--seconds 4] [--switch-interval 0.001]

The window sets a 1 ms switch interval (ui/app.py); the cases show why two background threads running Python
beside the window's cost more than twice one."""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import threading
import time

BLOB = os.urandom(8 << 20)
BIG = os.urandom(30 << 20)
NUMBERS = list(range(200_000))


def python_work() -> None:
    total = 0
    for i in range(20_000):
        total += i * i


def c_call_holding_the_lock() -> None:
    sorted(NUMBERS, reverse=True)


def c_call_releasing_the_lock() -> None:
    hashlib.sha256(BLOB).digest()


def write_and_sync() -> None:
    fd, path = tempfile.mkstemp()
    try:
        os.write(fd, BIG)
        os.fsync(fd)
    finally:
        os.close(fd)
        os.unlink(path)


CASES = {
    "python": python_work,
    "sorted (holds the lock)": c_call_holding_the_lock,
    "sha256 (releases it)": c_call_releasing_the_lock,
    "30 MB write + fsync": write_and_sync,
}


def measure(work, threads: int, seconds: float) -> tuple[float, float, float]:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append((now - last[0]) * 1000)
        last[0] = now

    stop = threading.Event()

    def busy() -> None:
        while not stop.is_set():
            work()

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(10)
    workers = [threading.Thread(target=busy, daemon=True) for _ in range(threads)]
    for worker in workers:
        worker.start()
    QTimer.singleShot(int(seconds * 1000), app.quit)
    app.exec()
    stop.set()
    timer.stop()
    for worker in workers:
        worker.join()
    ordered = sorted(gaps[5:])
    n = len(ordered)
    return ordered[n // 2], ordered[min(n - 1, int(n * 0.99))], ordered[-1]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--switch-interval", type=float, default=0.001)
    args = parser.parse_args()
    sys.setswitchinterval(args.switch_interval)
    print(f"10 ms timer on the main thread, switch interval {args.switch_interval * 1000:g} ms, {os.cpu_count()} cores")
    print("| background threads | work | p50 gap | p99 gap | max gap |")
    print("|---|---|---|---|---|")
    p50, p99, worst = measure(lambda: time.sleep(0.01), 1, args.seconds)
    print(f"| 0 | (idle) | {p50:.1f} ms | {p99:.1f} ms | {worst:.1f} ms |", flush=True)
    for name, work in CASES.items():
        for threads in (1, 2, 3):
            p50, p99, worst = measure(work, threads, args.seconds)
            print(f"| {threads} | {name} | {p50:.1f} ms | {p99:.1f} ms | {worst:.1f} ms |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
