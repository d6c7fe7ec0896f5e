"""Removing temp files that killed writers (PLUR's and ours) left in a store: only those certainly abandoned."""

from __future__ import annotations

import contextlib
import os
import re
import stat
import time
from pathlib import Path

from plur_desk.store.safe_open import inside

ABANDONED_AFTER_SECONDS = 60.0
# ours and PLUR's: `<file>.<pid>.<n>.tmp`, `<file>.<pid>.<random>.tmp`, `<file>.tmp.<pid>.<uuid>`
_TEMP = re.compile(r"^(?P<base>.+?)\.(?:(?P<pid>\d+)\.[A-Za-z0-9]+\.tmp|tmp\.(?P<pid2>\d+)\.[A-Za-z0-9-]+)\Z")


def _pid_dead(pid: int) -> bool:
    if pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def abandoned_temp_files(root: Path, now: float | None = None) -> list[Path]:
    """Temp files whose writer's pid is dead on this host and that are older than a minute."""
    now = time.time() if now is None else now
    found = []
    for folder in (root, root / "history", root / ".plur-desk" / "journal"):
        if not inside(root, folder):
            continue  # a link out of the store: nothing there is ours to remove
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            match = _TEMP.match(name)
            if match is None:
                continue
            path = folder / name
            try:
                info = os.lstat(path)
            except OSError:
                continue
            pid = int(match.group("pid") or match.group("pid2"))
            if stat.S_ISREG(info.st_mode) and now - info.st_mtime > ABANDONED_AFTER_SECONDS and _pid_dead(pid):
                found.append(path)
    return sorted(found)


def sweep_temp_files(root: Path) -> list[Path]:
    removed = []
    for path in abandoned_temp_files(root):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed.append(path)
    return removed
