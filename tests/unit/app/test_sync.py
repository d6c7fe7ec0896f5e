"""`plur-desk sync` with plain git (no Node): refusals, the lock, and repairing what a failed sync left behind."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from plur_desk import cli
from plur_desk.app.team import sync as sync_module
from plur_desk.app.team.sync import run_sync
from plur_desk.store.locking.lock import LockPolicy, current_holder, locked

from support.plain_team import git, rule, two_clones, write_engrams


def _engram(n: int, **extra: object) -> dict[str, object]:
    return rule(f"ENG-2026-12-02-{n:03d}", n, **extra)


@pytest.fixture
def team(tmp_path: Path) -> tuple[Path, Path]:
    def seed(ann: Path) -> None:
        write_engrams(ann, _engram(1), _engram(2))
        (ann / "tensions.yaml").write_text("[]\n")

    return two_clones(tmp_path, seed)


def _diverge(ann: Path, bob: Path) -> None:
    write_engrams(ann, _engram(1, commitment="decided", updated_at="2026-12-02T09:00:00.000Z"), _engram(2))
    git(ann, "commit", "-q", "-am", "ann")
    git(ann, "push", "-q")
    write_engrams(bob, _engram(1, status="retired", updated_at="2026-12-02T09:30:00.000Z"), _engram(2))
    git(bob, "commit", "-q", "-am", "bob")
    git(bob, "fetch", "-q")


def test_refuses_plainly_without_a_clone_or_a_remote(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    write_engrams(store, _engram(1))
    report = run_sync(store)
    assert report.exit_code == 2 and "not a git clone" in str(report.error)
    git(store, "init", "-q")
    assert cli.main(["sync", str(store)]) == 2
    assert "no 'origin' remote" in str(run_sync(store).error)


def test_the_local_steps_run_under_plurs_store_lock(team: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    ann, bob = team
    _diverge(bob, ann)  # ann has a commit to merge in and one to push
    seen: dict[str, str | None] = {}
    for step in ("repair", "commit_local", "merge_remote"):
        original = getattr(sync_module._Sync, step)

        def spy(self: sync_module._Sync, *args: object, _step: str = step, _original: object = original) -> None:
            seen[_step] = current_holder(ann / "engrams.yaml")
            _original(self, *args)  # type: ignore[operator]

        monkeypatch.setattr(sync_module._Sync, step, spy)
    report = run_sync(ann)
    assert report.error is None and report.pushed  # (exit 1: the two edits of one engram wait for a reviewer)
    assert set(seen) == {"repair", "commit_local", "merge_remote"} and all(seen.values())
    assert current_holder(ann / "engrams.yaml") is None  # and released


def _stall(store: Path, service: str, gate: Path) -> None:
    """Make origin's `service` (upload-pack: fetch, receive-pack: push) wait at `gate` until `gate`.go exists."""
    script = gate.with_suffix(".sh")
    script.write_text(
        f"#!/bin/sh\ntouch '{gate}'\nwhile [ ! -e '{gate}.go' ]; do sleep 0.01; done\nexec git {service} \"$@\"\n"
    )
    script.chmod(0o755)
    git(store, "config", f"remote.origin.{service.replace('-', '')}", str(script))


@pytest.mark.parametrize("service", ["upload-pack", "receive-pack"])
def test_a_slow_remote_is_waited_for_without_the_store_lock(
    team: tuple[Path, Path], tmp_path: Path, service: str
) -> None:
    ann, bob = team
    _diverge(bob, ann)
    gate = tmp_path / service
    _stall(ann, service, gate)
    result: list[str | None] = []
    syncing = threading.Thread(target=lambda: result.append(run_sync(ann).error))
    syncing.start()
    try:
        deadline = time.monotonic() + 60
        while not gate.exists():  # the sync is now inside git's fetch (or push), the remote stalled
            assert time.monotonic() < deadline and syncing.is_alive(), "the sync never reached the remote"
            time.sleep(0.005)
        assert current_holder(ann / "engrams.yaml") is None
        with locked(ann / "engrams.yaml", LockPolicy(max_wait=1)):  # a PLUR write goes through meanwhile
            pass
    finally:
        Path(f"{gate}.go").touch()
        syncing.join(120)
    assert result == [None]
    assert git(ann, "rev-parse", "HEAD") == git(ann, "rev-parse", "origin/main")


def test_repairs_an_interrupted_rebase(team: tuple[Path, Path]) -> None:
    ann, bob = team
    _diverge(ann, bob)
    git(bob, "rebase", "origin/main", check=False)  # no driver yet: stops on engrams.yaml
    assert (bob / ".git" / "rebase-merge").exists() or (bob / ".git" / "rebase-apply").exists()
    report = run_sync(bob)
    assert report.converged and report.exit_code == 1, report.to_text()  # approve vs retire: listed
    assert "interrupted rebase" in report.to_text()
    text = (bob / "engrams.yaml").read_text()
    assert "<<<<<<<" not in text and "status: retired" in text and "commitment: decided" in text
    assert git(bob, "rev-parse", "HEAD") == git(bob, "rev-parse", "origin/main")


def test_repairs_a_failed_autostash_pop_without_losing_either_side(team: tuple[Path, Path]) -> None:
    ann, bob = team
    write_engrams(ann, _engram(1, commitment="decided", updated_at="2026-12-02T09:00:00.000Z"), _engram(2))
    git(ann, "commit", "-q", "-am", "ann")
    git(ann, "push", "-q")
    write_engrams(bob, _engram(1, status="retired", updated_at="2026-12-02T09:30:00.000Z"), _engram(2), _engram(3))
    git(bob, "stash", "-q")  # what git's autostash does before a pull ...
    git(bob, "pull", "-q", "--ff-only")
    git(bob, "stash", "pop", check=False)  # ... and its pop conflicts: markers in engrams.yaml, the stash kept
    assert "<<<<<<<" in (bob / "engrams.yaml").read_text()
    report = run_sync(bob)
    assert report.error is None, report.to_text()
    text = (bob / "engrams.yaml").read_text()
    assert "<<<<<<<" not in text
    assert "status: retired" in text and "commitment: decided" in text and "ENG-2026-12-02-003" in text
    assert "left unmerged by an earlier sync" in report.to_text()
    assert "stash" in report.to_text()  # the old stash is reported, never dropped
