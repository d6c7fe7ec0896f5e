"""The write-ahead journal seen from outside: a change whose events could not be appended is finished on the next
open for review (the events exactly as their reviewer signed them; another reviewer finishing it adds one signed
line of their own), `check` reports a pending record read-only with exit 1, abandoned temp files are swept, caches
are private, and the owner of a file is kept."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from unit.store.test_hostile_stores import good_engrams, session_for, snapshot, write_store

from plur_desk.app.check import run_check
from plur_desk.app.review.bootstrap import open_session
from plur_desk.domain.commands import ApproveDrafts
from plur_desk.store.journal import JOURNAL_DIR
from plur_desk.store.sweep import sweep_temp_files

from support.users import another_user

ROOT = Path(__file__).resolve().parents[3]
NO_KEYRING = "keyring.backends.fail.Keyring"  # child processes never touch a real keyring

_APPEND_FAILS = r"""
import resource, signal, sys
from pathlib import Path
from plur_desk.store.plur_store import PlurStore
from plur_desk.app.review.session import ReviewSession
from plur_desk.domain.commands import ApproveDrafts
from plur_desk.domain.review import Reviewer
from plur_desk.infra.errors import PartialWrite
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
root = Path(sys.argv[1])
store = PlurStore(root); store.load()
session = ReviewSession(store, Reviewer("Tester"))
if len(sys.argv) > 2:  # Tester decided before: her key is registered, so another reviewer can verify her record
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-12-01-002"]))))
limit = (root / "engrams.yaml").stat().st_size + 4096  # the store file and the journal fit; the month file is bigger
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
try:
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-12-01-001"]))))
except PartialWrite as exc:
    print("partial:", exc); sys.exit(0)
sys.exit(1)
"""

_KILLED = r"""
import os, sys
from pathlib import Path
from plur_desk.store.plur_store import PlurStore
from plur_desk.app.review.session import ReviewSession
from plur_desk.domain.commands import ApproveDrafts
from plur_desk.domain.review import Reviewer
store = PlurStore(Path(sys.argv[1])); store.load()
session = ReviewSession(store, Reviewer("Tester"))
os.environ["PLUR_DESK_CRASH_AT"] = sys.argv[2]
session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-12-01-001"]))))
"""


def _month() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).strftime("%Y-%m")


def _run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHON_KEYRING_BACKEND=NO_KEYRING, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, env=env, check=False)


def _events(root: Path) -> list[dict[str, object]]:
    path = root / "history" / f"{_month()}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip().startswith("{")]


def _store_with_big_month(tmp_path: Path) -> Path:
    root = write_store(tmp_path / "store", good_engrams(40))
    (root / "history").mkdir()
    filler = '{"event":"engram_created","engram_id":"ENG-0","timestamp":"2026-01-01T00:00:00.000Z"}\n'
    (root / "history" / f"{_month()}.jsonl").write_text(filler * 2000)  # bigger than the size limit
    return root


def test_failed_append_is_reported_truthfully_and_finished_on_reopen(tmp_path):
    root = _store_with_big_month(tmp_path)
    out = _run(_APPEND_FAILS, str(root), "decided before")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "engrams.yaml was changed (ENG-2026-12-01-001), but its history events could not be appended" in out.stdout
    assert "Nothing was written" not in out.stdout
    assert len(list((root / JOURNAL_DIR).glob("*.json"))) == 1
    report = run_check(root)
    assert report.exit_code == 1
    assert any("pending journal record" in u and "1 history event(s) missing" in u for u in report.unfinished)
    (journaled,) = json.loads(next((root / JOURNAL_DIR).glob("*.json")).read_text())["steps"][0]["events"]
    session = open_session(root, "Someone Else", for_review=True, use_cache=False)
    assert session.recovery_note.startswith("Recovery: completed 1 interrupted action(s)")
    assert "1 history event(s) appended" in session.recovery_note
    recovered = [e for e in _events(root) if e.get("engram_id") == "ENG-2026-12-01-001"]
    assert recovered == [journaled]  # as Tester signed it when she journaled it: nobody signed it again
    assert recovered[0]["actor"]["asserted_by"] == "Tester"  # the original actor, not whoever reopened
    record = session.engram("ENG-2026-12-01-001")["review"]
    assert recovered[0]["timestamp"] == record["at"]  # the original time
    (completed,) = [e for e in _events(root) if e["event"] == "journal_recovered"]
    assert completed["actor"]["asserted_by"] == "Someone Else" and completed["signer"] == "human:Someone Else"
    assert completed["data"]["started_by"] == "Tester" and completed["data"]["events_appended"] == 1
    assert not list((root / JOURNAL_DIR).glob("*.json"))
    after = run_check(root)
    assert after.unfinished == [] and after.untrusted == [], after.to_text()
    assert after.exit_code == 0


def test_a_record_nobody_can_verify_is_reported_never_finished(tmp_path):
    """Tester's key is hers alone: another person, who never trusted it, can verify her record neither with `check`
    nor by opening the store, so it is reported to them and nothing of it is done."""
    root = _store_with_big_month(tmp_path)
    assert _run(_APPEND_FAILS, str(root)).returncode == 0
    (name,) = [p.name for p in (root / JOURNAL_DIR).glob("*.json")]
    before = snapshot(root)
    with another_user(tmp_path / "someone-else"):
        report = run_check(root)
        assert report.exit_code == 1
        assert any(u.startswith(f"unverifiable_journal_record {JOURNAL_DIR / name}") for u in report.unfinished)
        session = open_session(root, "Someone Else", for_review=True, use_cache=False)
    assert f"{JOURNAL_DIR / name}" in session.recovery_note and "not applied" in session.recovery_note
    assert session.unverified_records == [str(JOURNAL_DIR / name)]
    assert snapshot(root) == before


@pytest.mark.parametrize(("point", "outcome"), [("journal-saved", "rolled back"), ("store-renamed", "completed")])
def test_check_reports_a_pending_record_read_only(point, outcome, tmp_path):
    root = write_store(tmp_path / "store", good_engrams())
    out = _run(_KILLED, str(root), f"{point}:1")
    assert out.returncode == -9, out.stderr
    before = snapshot(root)
    with another_user(tmp_path / "someone-else"):  # someone who never trusted her key cannot verify the record
        report = run_check(root)
    assert report.exit_code == 1
    assert any(u.startswith("unverifiable_journal_record") for u in report.unfinished), report.unfinished
    assert "UNFINISHED unverifiable_journal_record" in report.to_text()
    report = run_check(root)  # she can: her own key is in her trust file
    assert report.exit_code == 1
    assert any(u.startswith("pending journal record") for u in report.unfinished), report.unfinished
    assert snapshot(root) == before  # check wrote nothing
    session = open_session(root, "Tester", for_review=True, use_cache=False)  # the same reviewer: her key signs again
    assert outcome in session.recovery_note
    assert run_check(root).exit_code == 0


def test_unevented_review_record_makes_check_exit_1(tmp_path):
    root = write_store(tmp_path / "store", good_engrams())
    (_s := session_for(root)).execute(ApproveDrafts(tuple(_s.writes.seen(["ENG-2026-12-01-001"]))))
    for path in (root / "history").glob("*.jsonl"):
        path.write_text("")
    report = run_check(root)
    assert report.exit_code == 1
    assert any("ENG-2026-12-01-001" in u and "no history event" in u for u in report.unfinished)


def test_only_certainly_abandoned_temp_files_are_swept(tmp_path):
    root = write_store(tmp_path / "store", good_engrams())
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    old = time.time() - 300
    names = {
        "abandoned_ours": f"engrams.yaml.{dead.pid}.3.tmp",
        "abandoned_plur": f"tensions.yaml.tmp.{dead.pid}.0b6c1a2e-8f3d-4a8b-9c1d-2e3f4a5b6c7d",
        "live_writer": f"engrams.yaml.{os.getppid()}.1.tmp",
        "too_young": f"engrams.yaml.{dead.pid}.4.tmp",
        "not_a_temp": "engrams.yaml.backup",
    }
    for key, name in names.items():
        (root / name).write_text("x")
        if key != "too_young":
            os.utime(root / name, (old, old))
    removed = {p.name for p in sweep_temp_files(root)}
    assert removed == {names["abandoned_ours"], names["abandoned_plur"]}
    assert all((root / names[k]).exists() for k in ("live_writer", "too_young", "not_a_temp"))


def test_block_cache_is_private(tmp_path):
    old = os.umask(0o022)  # a permissive umask: the modes must come from plur_desk, not from it
    try:
        root = write_store(tmp_path / "store", good_engrams())
        open_session(root, "Tester")
    finally:
        os.umask(old)
    cache = Path(os.environ["XDG_CACHE_HOME"]) / "plur-desk"
    files = [p for p in cache.rglob("*") if p.is_file()]
    assert files
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    for folder in [p for p in cache.rglob("*") if p.is_dir()]:
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can write another user's file")
def test_root_keeps_the_owner_of_the_file(tmp_path):
    root = write_store(tmp_path / "store", good_engrams())
    os.chown(root / "engrams.yaml", 65534, 65534)
    (_s := session_for(root)).execute(ApproveDrafts(tuple(_s.writes.seen(["ENG-2026-12-01-001"]))))
    info = (root / "engrams.yaml").stat()
    assert (info.st_uid, info.st_gid) == (65534, 65534)


_UNWRITABLE_HISTORY = r"""
import sys
from pathlib import Path
from plur_desk.store.plur_store import PlurStore
from plur_desk.app.review.session import ReviewSession
from plur_desk.domain.commands import ApproveDrafts
from plur_desk.domain.review import Reviewer
from plur_desk.infra.errors import PlurDeskError
store = PlurStore(Path(sys.argv[1])); store.load()
try:
    (_s := ReviewSession(store, Reviewer("Tester"))).execute(ApproveDrafts(tuple(_s.writes.seen(["ENG-2026-12-01-001"]))))
except PlurDeskError as exc:
    print("refused:", exc); sys.exit(0)
sys.exit(1)
"""


def test_history_not_writable_while_the_store_is_refuses_before_the_first_byte(tmp_path):
    """history/ cannot be written but the store folder can: the approve is refused before engrams.yaml changes."""
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="plur-hist-"))
    try:
        os.chmod(base, 0o755)
        root = write_store(base / "store", good_engrams())
        (root / "history").mkdir()
        (root / "history" / "2026-01.jsonl").write_text('{"event":"engram_created","engram_id":"E"}\n')
        cmd = [sys.executable, "-c", _UNWRITABLE_HISTORY, str(root)]
        if os.geteuid() == 0:  # root writes anywhere: run as nobody, who owns the store but not history/
            for path in (root, root / "engrams.yaml"):
                os.chown(path, 65534, 65534)
            cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *cmd]
        else:
            os.chmod(root / "history", 0o555)
        before = snapshot(root)
        home = base / "home"  # the reviewer's own folders (their signing key goes there), owned by them
        home.mkdir()
        if os.geteuid() == 0:
            os.chown(home, 65534, 65534)
        env = dict(
            os.environ,
            HOME=str(home),
            XDG_CONFIG_HOME=str(home / ".config"),
            XDG_DATA_HOME=str(home / ".local/share"),
            XDG_CACHE_HOME=str(home / ".cache"),
            PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
            PYTHONPATH=str(ROOT),
        )
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "cannot open" in out.stdout and "Nothing was written." in out.stdout
        assert snapshot(root) == before
        assert not list((root / JOURNAL_DIR).glob("*.json"))
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(base)], check=False)
        subprocess.run(["rm", "-rf", str(base)], check=False)
