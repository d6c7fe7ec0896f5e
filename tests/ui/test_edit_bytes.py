"""The edit-then-approve path must write exactly the text the reviewer saw and typed.

QPlainTextEdit.toPlainText() replaces U+00A0 with a space and U+2028/U+2029/CR/CRLF with LF, so a statement
holding any of them is silently rewritten by an edit the reviewer never made, under a signed `kind: human` event.
"""

from __future__ import annotations

import re
import shutil

import pytest
from PySide6.QtCore import Qt

from plur_desk.app.demo import demo_source

from ui.conftest import engrams_on_disk, human_events

NBSP = "\u00a0"


@pytest.fixture
def store_copy(tmp_path):
    dest = tmp_path / "store"
    shutil.copytree(demo_source(), dest)
    path = dest / "engrams.yaml"
    text = path.read_text(encoding="utf-8")
    # every statement's first space becomes a no-break space (a plain scalar either way; PLUR reads it as is)
    text = re.sub(r"(?m)^(    statement: \S+) ", lambda m: m.group(1) + NBSP, text)
    path.write_text(text, encoding="utf-8")
    return dest


def _settle(qtbot, window):
    qtbot.waitUntil(lambda: window.jobs.pending("session") == 0, timeout=10000)


def test_edit_saved_without_a_change_writes_nothing(qtbot, window, store_copy):
    target = window.drafts.model.rows[0].id
    original = engrams_on_disk(store_copy)[target]["statement"]
    assert NBSP in original
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_E)
    assert window.drafts.editing
    qtbot.keyClick(window.drafts.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    _settle(qtbot, window)
    assert engrams_on_disk(store_copy)[target]["statement"] == original
    assert human_events(store_copy) == []


def test_edit_keeps_every_character_the_reviewer_did_not_touch(qtbot, window, store_copy):
    target = window.drafts.model.rows[0].id
    original = engrams_on_disk(store_copy)[target]["statement"]
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_E)
    qtbot.keyClick(window.drafts.editor, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(window.drafts.editor, " today")
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    _settle(qtbot, window)
    assert engrams_on_disk(store_copy)[target]["statement"] == original + " today"
    (event,) = human_events(store_copy)
    assert event["data"]["from"] == original and event["data"]["to"] == original + " today"


def test_a_statement_the_editor_cannot_keep_is_not_opened_for_editing(qtbot, window, tmp_path):
    """A carriage return or a Unicode line separator would come back out of the editor as a plain line break, so
    any save would change characters nobody touched: the editor does not open, a banner says why."""
    dest = tmp_path / "crstore"
    shutil.copytree(demo_source(), dest)
    path = dest / "engrams.yaml"
    text = path.read_text(encoding="utf-8")
    text = re.sub(
        r"(?m)^    statement: (.*)$", lambda m: '    statement: "' + m.group(1).replace('"', "") + '\\r\\nend"', text
    )
    path.write_text(text, encoding="utf-8")
    window.open_path(dest)
    qtbot.waitUntil(
        lambda: window.session is not None and window.session.root == dest and window.jobs.pending("session") == 0,
        timeout=20000,
    )
    qtbot.waitUntil(lambda: bool(window.drafts.model.rows), timeout=10000)
    target = window.drafts.model.rows[0].id
    assert "\r" in engrams_on_disk(dest)[target]["statement"]
    window.drafts.table.setFocus()
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_E)
    assert not window.drafts.editing
    assert "carriage return" in window.drafts.banner.text()
    assert human_events(dest) == []
