"""Crash injection for the write-path tests: `PLUR_DESK_CRASH_AT=<point>[:<n>]` kills this process with SIGKILL
the n-th time (default 1st) the write path passes `<point>`. Unset (always, outside the tests) it only counts."""

from __future__ import annotations

import os
import signal

ENV = "PLUR_DESK_CRASH_AT"
_passed: dict[str, int] = {}


def crash_point(name: str) -> None:
    _passed[name] = _passed.get(name, 0) + 1
    wanted = os.environ.get(ENV)
    if not wanted:
        return
    point, _, count = wanted.partition(":")
    if point == name and _passed[name] >= int(count or "1"):
        os.kill(os.getpid(), signal.SIGKILL)


def passes() -> dict[str, int]:
    """How often each point was passed since the last reset (the tests enumerate the boundaries with it)."""
    return dict(_passed)


def reset() -> None:
    _passed.clear()
