"""Bad input in the files plur_desk keeps beside PLUR's (keys.yaml, the journal folder and its records), each
reproduced: a FIFO is never opened, a record nested five million deep is reported, bytes that are not UTF-8 refuse
a decision before anything is written, a link out of the store is never followed, a lock holder is named without
waiting out the lock, and a decision that changes nothing is refused before any lock is taken."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from unit.store.test_hostile_stores import good_engrams, snapshot, write_store

from plur_desk.app.check import run_check
from plur_desk.app.review.bootstrap import open_session
from plur_desk.domain.commands import ApproveDrafts, ConfirmTension, EditStatement
from plur_desk.infra.errors import ActionRefused, LockTimeout, PlurDeskError
from plur_desk.store.journal import JOURNAL_DIR

ROOT = Path(__file__).resolve().parents[3]
NO_KEYRING = "keyring.backends.fail.Keyring"  # child processes never touch a real keyring
HANG_GUARD = 60  # seconds: only so a regression fails instead of hanging the suite (no timing is asserted)

_OPEN_AND_CHECK = r"""
import sys
from pathlib import Path
from plur_desk.app.review.bootstrap import open_session
from plur_desk.app.check import run_check
report = run_check(Path(sys.argv[1]))
print("check", report.exit_code, report.warnings)
session = open_session(Path(sys.argv[1]), "Tester", for_review=True, use_cache=False)
print("opened", len(session.queue.rows()))
"""


def _store(tmp_path: Path) -> Path:
    return write_store(tmp_path / "store", good_engrams(5))


def _approve(root: Path) -> list[str]:
    session = open_session(root, "Tester", use_cache=False)
    return list(session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-12-01-001"])))).warnings)


def test_keys_yaml_as_a_fifo_is_never_opened(tmp_path):
    root = _store(tmp_path)
    os.mkfifo(root / "keys.yaml")
    env = dict(os.environ, PYTHON_KEYRING_BACKEND=NO_KEYRING, PYTHONPATH=str(ROOT))
    try:
        out = subprocess.run(
            [sys.executable, "-c", _OPEN_AND_CHECK, str(root)],
            capture_output=True,
            text=True,
            env=env,
            timeout=HANG_GUARD,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("check or opening the store hung on keys.yaml as a FIFO")
    assert out.returncode == 0, out.stderr
    assert "a FIFO (named pipe), not a regular file" in out.stdout and "opened 5" in out.stdout
    # a decision is written (keys.yaml counts for nothing by itself); the key is not registered, and it says so
    warnings = _approve(root)
    assert any("could not be registered" in w and "a FIFO" in w for w in warnings), warnings
    assert (root / "keys.yaml").is_fifo()


def test_keys_yaml_not_utf8_is_read_before_any_write_and_never_rewritten(tmp_path):
    """Today the approve writes both files, then fails with a UnicodeDecodeError (the reviewer is told it failed);
    now it is written and says, in plain words, that keys.yaml is not UTF-8, and keys.yaml stays as it was."""
    root = _store(tmp_path)
    keys = b"keys:\n  - identity: human:Other\n    public_key: \xff\xfe\n"
    (root / "keys.yaml").write_bytes(keys)
    warnings = _approve(root)
    assert any("could not be registered" in w and "keys.yaml, line 3: not UTF-8" in w for w in warnings), warnings
    assert (root / "keys.yaml").read_bytes() == keys
    assert len(list((root / "history").glob("*.jsonl"))) == 1  # the decision and its event


def test_keys_yaml_linking_out_of_the_store_is_not_read(tmp_path):
    root = _store(tmp_path)
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text("keys: []\n")
    (root / "keys.yaml").symlink_to(outside)
    report = run_check(root)
    assert any("link out of the store" in w for w in report.warnings), report.warnings


def test_a_journal_record_nested_five_million_deep_is_reported_and_the_store_opens(tmp_path):
    root = _store(tmp_path)
    (root / JOURNAL_DIR).mkdir(parents=True)
    (root / JOURNAL_DIR / "20261201T000000-1-1.json").write_bytes(b"[" * 5_000_000)
    session = open_session(root, "Tester", for_review=True, use_cache=False)
    assert f"{JOURNAL_DIR}/20261201T000000-1-1.json: nested too deeply" in session.recovery_note
    assert len(session.queue.rows()) == 5
    report = run_check(root)
    assert report.exit_code == 1
    assert any(u.startswith(f"unverifiable_journal_record {JOURNAL_DIR}/20261201T") for u in report.unfinished)


def test_a_journal_folder_linking_out_of_the_store_is_never_followed(tmp_path):
    root = _store(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    theirs = outside / f"notes.txt.{dead.pid}.1.tmp"  # looks like an abandoned temp file: not ours to remove
    theirs.write_text("someone else's")
    os.utime(theirs, (1, 1))
    (root / ".plur-desk").mkdir()
    (root / JOURNAL_DIR).symlink_to(outside)
    before = snapshot(root)
    with pytest.raises(PlurDeskError, match=r"link out of the store.*Nothing was written"):
        _approve(root)
    assert snapshot(root) == before and list(outside.iterdir()) == [theirs]
    session = open_session(root, "Tester", for_review=True, use_cache=False)
    assert f"{JOURNAL_DIR}: .plur-desk/journal is a link out of the store" in session.recovery_note
    assert theirs.exists()  # the sweep of abandoned temp files does not follow the link either
    assert run_check(root).exit_code == 1


@pytest.fixture
def live_holder():
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield sleeper.pid
    sleeper.kill()
    sleeper.wait()


@pytest.mark.parametrize("file", ["engrams.yaml", "tensions.yaml"])
def test_a_lock_kept_by_a_live_holder_is_named_with_pid_host_and_age(session, live_holder, file):
    """The session's default lock policies (20 s for engrams, 6 s for tensions): a holder that keeps the lock is
    named (pid, host, how long it has held it) instead of being waited out."""
    root = session.store.root
    lock = root / f"{file}.lock"
    old = time.time() - 42
    lock.write_text(f"{socket.gethostname()}:{live_holder}:{int(old * 1000)}:1")  # taken 42 s ago ...
    os.utime(lock, (old + 20, old + 20))  # ... and re-touched once by a heartbeat since
    before = snapshot(root)
    if file == "engrams.yaml":
        command = ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"])))
    else:
        command = ConfirmTension(session.writes.seen_tension("T-2026-1201-001"))
    with pytest.raises(LockTimeout) as refused:
        session.execute(command)
    assert f"process {live_holder} on this computer, holding it for 4" in str(refused.value)
    assert "Nothing was written" in str(refused.value)
    assert snapshot(root) == before


def test_a_routine_write_in_progress_is_waited_for_not_refused(session):
    """A PLUR write that took the lock a moment ago (a big store's save holds it a second or two) is waited out: the
    decision lands once it releases, instead of being refused for arriving during an agent's routine write."""
    root = session.store.root
    lock = root / "engrams.yaml.lock"
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import os, socket, sys, time; from pathlib import Path\n"
            "lock = Path(sys.argv[1])\n"
            "lock.write_text(f'{socket.gethostname()}:{os.getpid()}:{int(time.time() * 1000)}:1')\n"
            "print('held', flush=True)\n"
            "time.sleep(1.6)\n"
            "lock.unlink()\n",
            str(lock),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline() == "held\n"
        session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"]))))
    finally:
        writer.wait()
    assert session.engram("ENG-2026-11-01-001")["commitment"] == "decided"


def test_a_decision_that_changes_nothing_is_refused_before_any_lock(session, live_holder):
    root = session.store.root
    (root / "engrams.yaml.lock").write_text(f"{socket.gethostname()}:{live_holder}:1700000000000:1")
    before = snapshot(root)
    unchanged = EditStatement(session.writes.seen(["ENG-2026-11-01-001"])[0], "Statement number 1")
    with pytest.raises(ActionRefused, match="the statement is unchanged"):
        session.execute(unchanged)
    with pytest.raises(ActionRefused, match="not a draft"):
        session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-06-001"]))))
    assert snapshot(root) == before


@pytest.mark.parametrize(
    ("code", "said"),
    [
        (28, "the disk is full (No space left on device). Nothing was written."),
        (13, "Permission denied. Nothing was written."),
    ],
)
def test_a_journal_that_cannot_be_saved_says_why_and_nothing_is_written(session, monkeypatch, code, said):
    """The record is saved after the new file is staged and before it replaces the store file: a full disk there
    (ENOSPC) is said as such and is true; any other error keeps the system's words."""
    import plur_desk.store.journal as journal

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(journal, "atomic_write", refuse)
    root = session.store.root
    before = snapshot(root)
    with pytest.raises(PlurDeskError) as refused:
        session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"]))))
    assert said in str(refused.value)
    assert ("disk is full" in str(refused.value)) == (code == 28)
    assert snapshot(root) == before
    assert not [p for p in root.iterdir() if p.name.endswith(".tmp")]
