"""The writer killed at every boundary of every action kind (single and bulk, one and two files, undo), on a legacy
and a hash-chained history, then the store reopened for review: each ends exactly before or exactly after the
action with its events each exactly once, no journal record is left, and the real PLUR reads every store with
nothing quarantined."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.node import run_node
from support.scratch import memory_dir
from support.stores import copy_store, make_plur_store

TESTS = Path(__file__).resolve().parents[2]
NO_KEYRING = "keyring.backends.fail.Keyring"  # child processes never touch a real keyring


@pytest.mark.slow
def test_killed_writers_are_completed_or_rolled_back(tmp_path):
    with memory_dir() as scratch:  # ~250 store copies, each written with fsyncs
        _trials(tmp_path, scratch)


def _trials(tmp_path: Path, scratch: Path) -> None:
    base = copy_store(make_plur_store(tmp_path, n=60, drafts_ratio=0.25, tensions=6), scratch / "base")
    work = scratch / "work"
    work.mkdir()
    env = dict(
        os.environ, PYTHON_KEYRING_BACKEND=NO_KEYRING, PYTHONPATH=os.pathsep.join([str(TESTS.parent), str(TESTS)])
    )
    env.pop("PLUR_DESK_CRASH_AT", None)
    out = subprocess.run(
        [sys.executable, "-m", "support.crash_driver", str(base), str(work)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-4000:]
    summary = json.loads(out.stdout)
    assert summary["failures"] == [], summary["failures"][:10]
    assert summary["trials"] >= 200, summary
    assert summary["before"] > 0 and summary["after"] > 0, summary  # kills landed on both sides of the change
    assert len(summary["kinds"]) == 13, summary["kinds"]
    assert summary["recovered_events"] > 0, summary  # recovery really appended missing events
    assert summary["recovery_kills"] > 0, summary  # and was itself killed midway, then finished by the next open
    read = run_node("read_stores.mjs", payload=summary["stores"])
    assert len(read) == len(summary["stores"])
    assert [r["path"] for r in read if r["quarantined"] or r["tensions"] != r["tensions_raw"]] == []
