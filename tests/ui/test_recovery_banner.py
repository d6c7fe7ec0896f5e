"""A writer killed between replacing engrams.yaml and appending its event: opening the store in the window finishes
the action from the journal and says so in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from plur_desk.domain.commands import ApproveDrafts
from plur_desk.infra.clock import FixedClock

from ui.conftest import NOW, engrams_on_disk, open_window_on

ROOT = Path(__file__).resolve().parents[2]
NO_KEYRING = "keyring.backends.fail.Keyring"  # child processes never touch a real keyring

_KILLED_APPROVE = r"""
import os, sys
from pathlib import Path
from plur_desk.store.plur_store import PlurStore
from plur_desk.app.review.session import ReviewSession
from plur_desk.domain.commands import ApproveDrafts
from plur_desk.domain.review import Reviewer
store = PlurStore(Path(sys.argv[1])); store.load()
session = ReviewSession(store, Reviewer("Killed Reviewer"))
if len(sys.argv) > 2:  # an earlier decision registered her key: the window's reviewer can verify her record
    session.execute(ApproveDrafts(tuple(session.writes.seen([session.queue.rows()[1].id]))))
draft = session.queue.rows()[0].id
print(draft, flush=True)
os.environ["PLUR_DESK_CRASH_AT"] = "store-renamed:1"
session.execute(ApproveDrafts(tuple(session.writes.seen([draft]))))
"""


def test_window_finishes_an_interrupted_approve_and_says_so(qtbot, store_copy, tmp_path):
    draft = _killed_approve(store_copy, "decided before")
    (record,) = (store_copy / ".plur-desk" / "journal").glob("*.json")
    journaled = json.loads(record.read_text())["steps"][0]["events"]

    win = open_window_on(qtbot, tmp_path, store_copy)
    qtbot.waitUntil(
        lambda: win.session is not None and win.session.history.loaded and win.jobs.pending("session") == 0,
        timeout=20000,
    )
    assert "Recovery: completed 1 interrupted action(s) (approve" in win.banner.text()
    assert "1 history event(s) appended" in win.banner.text()
    events = [
        json.loads(line)
        for path in sorted((store_copy / "history").glob("*.jsonl"))
        for line in path.read_text().splitlines()
        if line.strip()
    ]
    mine = [e for e in events if e.get("engram_id") == draft and (e.get("actor") or {}).get("kind") == "human"]
    assert mine == journaled  # as she signed it: the window's reviewer signed nothing of hers
    (line,) = [e for e in events if e["event"] == "journal_recovered"]  # and said, signed, that they finished it
    assert line["data"]["started_by"] == "Killed Reviewer" and line["actor"]["asserted_by"] == win.session.reviewer.name
    assert not list((store_copy / ".plur-desk" / "journal").glob("*.json"))


def test_a_record_nobody_can_verify_is_named_never_applied_and_moved_aside(qtbot, store_copy, tmp_path):
    """The killed reviewer is another person, whose key the window's user never trusted: her record cannot be
    verified. The notice names it, nothing of it is applied, and the button moves it aside (kept, never deleted)."""
    from PySide6.QtCore import Qt

    draft = _killed_approve(store_copy, home=tmp_path / "someone-else")
    (record,) = (store_copy / ".plur-desk" / "journal").glob("*.json")
    history = {p.name: p.read_bytes() for p in (store_copy / "history").glob("*.jsonl")}
    win = open_window_on(qtbot, tmp_path, store_copy)
    qtbot.waitUntil(lambda: win.session is not None and win.opener.journal_notice.isVisible(), timeout=20000)
    name = f".plur-desk/journal/{record.name}"
    assert name in win.opener.journal_notice.label.text() and "Not applied" in win.opener.journal_notice.label.text()
    assert {p.name: p.read_bytes() for p in (store_copy / "history").glob("*.jsonl")} == history
    assert not [e for e in _human_events(store_copy) if e.get("engram_id") == draft]
    qtbot.mouseClick(win.opener.journal_notice.discard, Qt.MouseButton.LeftButton)
    assert not record.exists()
    assert (store_copy / ".plur-desk" / "journal-discarded" / record.name).exists()
    assert not win.opener.journal_notice.isVisible()
    assert "moved to .plur-desk/journal-discarded/" in win.banner.text()


def _human_events(store: Path) -> list[dict[str, object]]:
    return [
        e
        for path in sorted((store / "history").glob("*.jsonl"))
        for line in path.read_text().splitlines()
        if line.strip() and ((e := json.loads(line)).get("actor") or {}).get("kind") == "human"
    ]


def _killed_approve(store: Path, *decided_before: str, home: Path | None = None) -> str:
    """A reviewer killed between writing engrams.yaml and appending her event; `home`: another person's folders
    (her vault and trust file), whose key the window's user never trusted."""
    env = dict(os.environ, PYTHON_KEYRING_BACKEND=NO_KEYRING, PYTHONPATH=str(ROOT))
    if home is not None:
        env.update(
            XDG_CONFIG_HOME=str(home / ".config"),
            XDG_DATA_HOME=str(home / ".local" / "share"),
            XDG_CACHE_HOME=str(home / ".cache"),
        )
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_APPROVE, str(store), *decided_before],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert killed.returncode == -9, killed.stderr
    draft = killed.stdout.strip()
    assert engrams_on_disk(store)[draft]["review"]["by"] == "Killed Reviewer"  # the change landed...
    assert list((store / ".plur-desk" / "journal").glob("*.json"))  # ...its event did not
    return draft


def test_a_review_without_its_event_is_reported_without_a_scan_on_the_gui_thread(
    qtbot, store_copy, tmp_path, monkeypatch
):
    """Engrams reviewed with no history event (a write interrupted before its append, the journal gone) are found
    by comparing every engram with the history: on the loading thread, then reported in the banner."""
    import threading

    from plur_desk.app.review.bootstrap import open_session
    from plur_desk.app.review.session import ReviewSession

    session = open_session(store_copy, "Grace", clock=FixedClock(NOW))
    draft = session.queue.rows()[0].id
    session.execute(ApproveDrafts(tuple(session.writes.seen([draft]))))
    for month in (store_copy / "history").glob("*.jsonl"):  # as if the events were never appended
        month.write_text("".join(line for line in month.read_text().splitlines(True) if draft not in line))
    scanned_on: list[threading.Thread] = []
    real = ReviewSession.unlogged_reviews

    def unlogged(self: ReviewSession) -> list[str]:
        scanned_on.append(threading.current_thread())
        return real(self)

    monkeypatch.setattr(ReviewSession, "unlogged_reviews", unlogged)
    win = open_window_on(qtbot, tmp_path, store_copy)
    qtbot.waitUntil(lambda: "have no history event" in win.banner.text(), timeout=20000)
    assert f"1 reviewed engram(s) have no history event ({draft})" in win.banner.text()
    assert scanned_on and threading.main_thread() not in scanned_on
