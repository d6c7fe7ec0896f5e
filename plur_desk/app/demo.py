"""The bundled demo store: always opened as a fresh copy, so the packaged one is never changed.

Copies live in the cache folder. Each launch removes the copies that no running plur_desk still has open (their
owner process is gone), so `--demo` never piles copies up; a copy another window is using is left alone.
"""

from __future__ import annotations

import os
import shutil
import socket
import time
from pathlib import Path

from plur_desk.infra.paths import cache_dir
from plur_desk.resources import RESOURCES

DEMO_NOTE = (
    "Demo: a fresh copy of the bundled demo store, made for this start. Try anything: what you decide here is "
    "not kept, and every --demo start (or File > Open Demo Store) begins afresh."
)
OWNER_FILE = ".plur-desk-demo-owner"  # "host:pid" of the process that opened this copy
# The bundled demo store's reviewers and their public keys (its keys.yaml). Their decisions in a demo copy count
# as theirs: a newcomer's first look shows signed decisions, not "UNTRUSTED key" on every line. The keys are trusted
# only for copies under this user's demo folder (never from a file in the store, which anyone can write), and their
# private halves are in no store: nothing a demo copy trusts can sign in a real one. Charles Babbage started
# watching it (its signed baseline, .plur-desk/baseline): the Changes queue lists what an agent session did after.
DEMO_REVIEWERS = (
    ("human:Ada Lovelace", "MCowBQYDK2VwAyEAiE282CQKu6rG9aQn0olUWImlsRSqZAEWgsQIt4oU+Xs="),
    ("human:Charles Babbage", "MCowBQYDK2VwAyEAJ1Ir/vRVz8WkLNTI/7hAgP1jQfBOataqVWuu3YxAfTM="),
)


def demo_source() -> Path:
    return RESOURCES / "demo_store"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _abandoned(copy: Path) -> bool:
    try:
        host, _, pid = (copy / OWNER_FILE).read_text(encoding="utf-8").strip().rpartition(":")
    except OSError:
        return True  # copies from before owners were recorded
    if host != socket.gethostname() or not pid.isdigit():
        return False  # a shared cache folder: another machine's copy is not ours to judge
    return not _pid_alive(int(pid))


def sweep_demo_copies(base: Path) -> list[Path]:
    """Remove earlier copies nobody has open; returns what was removed."""
    removed: list[Path] = []
    if not base.is_dir():
        return removed
    for copy in sorted(base.iterdir()):
        if copy.is_dir() and not copy.is_symlink() and copy.name.startswith("demo-") and _abandoned(copy):
            shutil.rmtree(copy, ignore_errors=True)
            removed.append(copy)
    return removed


DEMO_MARK = "demo_copy"  # in a decision's signed `data.decided`: made in a demo copy, so it counts only in one


def from_demo_copy(event: dict[str, object]) -> bool:
    data = event.get("data")
    block = data.get("decided") if isinstance(data, dict) else None
    return isinstance(block, dict) and block.get(DEMO_MARK) is True


def is_demo_copy(root: Path) -> bool:
    """Whether `root` is one of this user's demo copies (under the cache folder's demo/, links resolved)."""
    try:
        return root.resolve().is_relative_to((cache_dir() / "demo").resolve())
    except OSError:
        return False


def copy_demo_store(base: Path | None = None) -> Path:
    target_base = base or cache_dir() / "demo"
    sweep_demo_copies(target_base)
    stamp = time.strftime("demo-%Y%m%d-%H%M%S")
    target = target_base / stamp
    suffix = 0
    while target.exists():
        suffix += 1
        target = target_base / f"{stamp}-{suffix}"
    shutil.copytree(demo_source(), target)
    (target / OWNER_FILE).write_text(f"{socket.gethostname()}:{os.getpid()}\n", encoding="utf-8")
    return target
