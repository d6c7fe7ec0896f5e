"""How long plur_desk takes to answer bad input in the files it keeps beside PLUR's (the brief: within 1 s).

    python bench/bench_bad_input.py [--rounds 5]

Each case on the small test store (tests/support/sessions.py), the median and the worst of `--rounds` runs:
`check` and opening for review with keys.yaml a FIFO; opening for review with a journal record of 5,000,000 `[`;
an approve while a live process keeps engrams.yaml.lock (20 s before the holder was named) and tensions.yaml.lock
(6 s); a decision that changes nothing while the lock is held (19 s before it was refused); a planted journal record
reported as unverifiable.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")

from plur_desk.app.check import run_check  # noqa: E402
from plur_desk.app.review.bootstrap import open_session  # noqa: E402
from plur_desk.domain.commands import ApproveDrafts, ConfirmTension, EditStatement  # noqa: E402
from plur_desk.infra.errors import PlurDeskError  # noqa: E402
from plur_desk.store.journal import JOURNAL_DIR  # noqa: E402

from support.sessions import small_session  # noqa: E402


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    with contextlib.suppress(PlurDeskError):
        fn()
    return time.perf_counter() - start


def _fresh(base: Path, work: Path) -> Path:
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(base, work)
    return work


def one_round(base: Path, work: Path, holder: int, rows: dict[str, list[float]]) -> None:
    def add(name: str, fn: Callable[[], object]) -> None:
        rows.setdefault(name, []).append(_timed(fn))

    def review(root: Path) -> Callable[[], object]:
        return lambda: open_session(root, "Bench", for_review=True, use_cache=False)

    root = _fresh(base, work)
    os.mkfifo(root / "keys.yaml")
    add("check, keys.yaml a FIFO", lambda: run_check(root, use_cache=False))
    add("open for review, keys.yaml a FIFO", review(root))

    root = _fresh(base, work)
    (root / JOURNAL_DIR).mkdir(parents=True)
    (root / JOURNAL_DIR / "20261201T000000-1-1.json").write_bytes(b"[" * 5_000_000)
    add("open for review, a record of 5 M '['", review(root))

    root = _fresh(base, work)
    (root / JOURNAL_DIR).mkdir(parents=True)
    (root / JOURNAL_DIR / "20261201T000000-1-1.json").write_text('{"format": 1, "action": "x", "steps": []}')
    add("open for review, an unsigned record", review(root))

    root = _fresh(base, work)
    session = open_session(root, "Bench", use_cache=False)
    session.keys.ready()
    token = f"{socket.gethostname()}:{holder}:1:1"
    (root / "engrams.yaml.lock").write_text(token)
    (root / "tensions.yaml.lock").write_text(token)
    add(
        "approve, engrams.yaml.lock kept by a live process",
        lambda: session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"])))),
    )
    add(
        "confirm, tensions.yaml.lock kept by a live process",
        lambda: session.execute(ConfirmTension(session.writes.seen_tension("T-2026-1201-001"))),
    )
    add(
        "a decision that changes nothing, lock kept",
        lambda: session.execute(EditStatement(session.writes.seen(["ENG-2026-11-01-001"])[0], "Statement number 1")),
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    tmp = Path(tempfile.mkdtemp(prefix="plur-bad-input-"))
    os.environ.setdefault("XDG_DATA_HOME", str(tmp / "data"))
    os.environ.setdefault("XDG_CACHE_HOME", str(tmp / "cache"))
    os.environ.setdefault("XDG_CONFIG_HOME", str(tmp / "config"))  # the trust file: not the user's own
    (tmp / "base").mkdir()
    base = small_session(tmp / "base").store.root
    work = tmp / "work"
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    rows: dict[str, list[float]] = {}
    try:
        for _ in range(rounds):
            one_round(base, work, sleeper.pid, rows)
    finally:
        sleeper.kill()
        sleeper.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"| case ({rounds} rounds) | median | worst |")
    print("|---|---|---|")
    for name, times in rows.items():
        print(f"| {name} | {statistics.median(times) * 1000:.0f} ms | {max(times) * 1000:.0f} ms |")


if __name__ == "__main__":
    main()
