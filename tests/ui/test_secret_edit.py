"""A secret edited out of a draft is never copied into history, by the edit or by its undo; the app says so, and
says where else the secret may still live and how to purge it."""

from __future__ import annotations

import json
import subprocess

from PySide6.QtCore import Qt

from plur_desk.domain.plur_rules.derived import content_hash

from ui.conftest import engrams_on_disk, human_events

SECRET_DRAFT = "ENG-2026-12-02-016"  # the demo's "… staging with password: Spring2026rocks"
SECRET = b"Spring2026rocks"
CTRL = Qt.KeyboardModifier.ControlModifier


def _history_bytes(store) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((store / "history").glob("*.jsonl")))


def _edit_to(qtbot, window, text: str) -> None:
    assert window.drafts.select_id(SECRET_DRAFT)
    qtbot.waitUntil(lambda: window.drafts.displayed_seen() is not None, timeout=10000)
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_E)
    assert window.drafts.editing
    window.drafts.editor.setPlainText(text)
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.editor, Qt.Key.Key_Return, CTRL)


def test_a_removed_secret_never_reaches_the_history_bytes(qtbot, window, store_copy):
    original = engrams_on_disk(store_copy)[SECRET_DRAFT]["statement"]
    assert SECRET.decode() in original and SECRET not in _history_bytes(store_copy)
    assert window.drafts.select_id(SECRET_DRAFT)
    qtbot.waitUntil(lambda: window.drafts.displayed_seen() is not None, timeout=10000)
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_E)
    assert "redacted marker" in window.drafts.edit_hint.text()  # the editor says so before the save
    window.drafts.cancel_edit()

    _edit_to(qtbot, window, "Smoke tests log in to staging with the password from the team vault")
    qtbot.waitUntil(lambda: window.jobs.pending("session") == 0, timeout=10000)
    assert SECRET not in _history_bytes(store_copy)
    (event,) = human_events(store_copy)
    data = event["data"]
    assert data["action"] == "edit" and data["from_redacted"] is True
    assert data["from"] == "Smoke tests log in to staging with password: [redacted credential]"
    assert data["from_content_hash"] == content_hash(original)
    assert data["to"] == "Smoke tests log in to staging with the password from the team vault"

    # where else it may live, with commands (the store is made a git work tree below, so the advice names git)
    qtbot.waitUntil(lambda: "redacted marker" in window.drafts.banner.text(), timeout=10000)
    advice = window.drafts.banner.text()
    assert "rotate" in advice and f"grep -n {SECRET_DRAFT}" in advice

    # an undo puts the secret back into the draft (the reviewer asked for it) but not into history
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_Z, CTRL)
    qtbot.waitUntil(lambda: window.jobs.pending("session") == 0, timeout=10000)
    assert engrams_on_disk(store_copy)[SECRET_DRAFT]["statement"] == original
    assert len(human_events(store_copy)) == 2
    assert SECRET not in _history_bytes(store_copy)


def test_the_advice_names_earlier_history_lines_and_the_git_history(qtbot, window, store_copy):
    line = {"event": "engram_created", "engram_id": SECRET_DRAFT, "data": {"statement": SECRET.decode()}}
    with (store_copy / "history" / "2026-11.jsonl").open("w") as f:
        f.write(json.dumps({"event": "x"}) + "\n" + json.dumps(line) + "\n")
    subprocess.run(["git", "init", "-q", str(store_copy)], check=True)
    _edit_to(qtbot, window, "Smoke tests log in to staging with the vault's password")
    qtbot.waitUntil(lambda: "redacted marker" in window.drafts.banner.text(), timeout=10000)
    advice = window.drafts.banner.text()
    assert "2026-11.jsonl line 2" in advice
    assert "git filter-repo" in advice and "log -p -S" in advice
