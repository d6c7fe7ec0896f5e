"""A writer killed at random points leaves the store readable and either exactly before or exactly after."""

from __future__ import annotations

import random
import subprocess
import time
from pathlib import Path

import pytest

from plur_desk.app.review.session import ReviewSession
from plur_desk.domain.commands import ApproveDrafts
from plur_desk.domain.plur_rules.engram_rules import engram_problems
from plur_desk.domain.review import Reviewer
from plur_desk.infra.clock import FixedClock
from plur_desk.store.lists.list_file import ENGRAMS, ListFile
from plur_desk.store.plur_store import PlurStore

from support.crash_writer import NOW, start_writer, stop_fork_server
from tests_support_paths import write_big_store


def _approve(root: Path, ident: str) -> None:
    """The writer's approval, run here: a store opened afresh, as the next writer after a killed one opens it."""
    store = PlurStore(root)
    store.load()
    session = ReviewSession(store, Reviewer("Crash Tester"), FixedClock(NOW))
    session.execute(ApproveDrafts(tuple(session.writes.seen([ident])), note="crash trial"))
    assert (session.engram(ident) or {}).get("commitment") == "decided"  # it was written


def _run(root: Path, ids: list[str], kill_after: float | None) -> bool:
    writer, conn = start_writer(root, ids)
    conn.send("go")
    if kill_after is None:
        assert conn.recv() == "done"
        writer.join(timeout=60)
        return True
    time.sleep(kill_after)
    writer.kill()
    writer.join()
    return False


@pytest.fixture
def _fork_server():
    yield
    stop_fork_server()


@pytest.mark.slow
@pytest.mark.usefixtures("_fork_server")
def test_killed_writer_leaves_before_or_after(tmp_path):
    base = tmp_path / "base"
    write_big_store(base, 3000)
    ids = [f"ENG-2026-12-01-{i:03d}" for i in (5, 1500, 2999)]
    before = (base / "engrams.yaml").read_bytes()
    reference = tmp_path / "reference"
    subprocess.run(["cp", "-r", str(base), str(reference)], check=True)
    writer, conn = start_writer(reference, ids)
    t0 = time.monotonic()
    conn.send("go")
    assert conn.recv() == "done"
    duration = time.monotonic() - t0  # from the order to the change being complete
    writer.join(timeout=60)
    after = (reference / "engrams.yaml").read_bytes()
    assert after != before
    rng = random.Random(7)
    outcomes = {"before": 0, "after": 0}
    for trial in range(30):
        root = tmp_path / f"trial{trial}"
        subprocess.run(["cp", "-r", str(base), str(root)], check=True)
        # up to twice the reference run: a trial can be slower than it (a busy machine), and kills must still land
        # on both sides; a kill after the change completed is simply an "after" outcome
        _run(root, ids, rng.uniform(0, duration * 2.0))
        data = (root / "engrams.yaml").read_bytes()
        assert data in (before, after), f"trial {trial}: the file is neither the old nor the new version"
        snapshot = ListFile.read(root / "engrams.yaml", ENGRAMS, engram_problems)
        assert snapshot.fatal is None and all(e.valid for e in snapshot.entries)
        outcomes["before" if data == before else "after"] += 1
        # The next writer is never blocked by what the dead one left (a stale lock, a temp file): a fresh store and
        # session in this process
        _approve(root, "ENG-2026-12-01-010")
        assert not (root / "engrams.yaml.lock").exists()
    assert outcomes["before"] and outcomes["after"], outcomes  # the kills really landed on both sides
