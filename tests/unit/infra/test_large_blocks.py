"""Freed large buffers go back to the system in the window's process: after a first large block has been freed
(which makes glibc raise its mapping threshold), buffers of half a MiB freed behind one still held are no longer
kept resident in the heap. Run in a fresh process (the setting is process-wide and made before anything is freed)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

PROBE = r"""
import json, sys
from plur_desk.infra.memory import return_large_blocks
fixed = sys.argv[1] == "fixed" and return_large_blocks()

def anon_kb():
    for line in open("/proc/self/status"):
        if line.startswith("RssAnon:"):
            return int(line.split()[1])

first = bytearray(8 << 20)  # mapped on its own, and freed: glibc's threshold rises to 8 MiB
del first
before = anon_kb()
blocks = [bytearray(512 << 10) for _ in range(128)]  # 64 MiB in blocks under that threshold
last = bytearray(512 << 10)  # still held: the heap cannot shrink past it
del blocks
print(json.dumps({"fixed": fixed, "kept_mb": (anon_kb() - before) / 1024}))
"""


def _kept(mode: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True, timeout=60)
    return json.loads(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_freed_large_buffers_are_given_back() -> None:
    default, fixed = _kept("default"), _kept("fixed")
    assert fixed["fixed"] is True
    assert float(default["kept_mb"]) > 48  # glibc's own behaviour: the freed 64 MiB stay resident
    assert float(fixed["kept_mb"]) < 8
