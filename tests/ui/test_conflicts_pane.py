"""The Conflicts pane (real window): each answer is about the two texts the pane shows, and only those."""

from __future__ import annotations

import pytest

from ui.conftest import human_events, tensions_on_disk

FRIDAY, THURSDAY = "ENG-2026-12-02-022", "ENG-2026-12-02-026"  # "every Friday afternoon" / "every Thursday afternoon"
PAIR = ":".join(sorted((FRIDAY, THURSDAY)))


def _scanned(qtbot, window):  # type: ignore[no-untyped-def]
    """The view open and scanned, its row for the pair selected; returns the dialog."""
    qtbot.waitUntil(
        lambda: window.conflicts.service is not None and window.jobs.pending("conflicts") == 0, timeout=20000
    )
    window.qactions["view.conflicts"].trigger()
    dialog = window.conflicts.pane
    qtbot.waitUntil(lambda: any(c.key == PAIR for c in dialog.model.rows), timeout=30000)
    dialog.table.selectRow(next(k for k, c in enumerate(dialog.model.rows) if c.key == PAIR))
    assert dialog.current().key == PAIR and THURSDAY in dialog.detail.toPlainText()
    return dialog


def test_not_a_conflict_records_the_pair_as_shown_and_it_leaves_the_list(qtbot, window, store_copy):
    dialog = _scanned(qtbot, window)
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        dialog.dismiss.click()
    qtbot.waitUntil(lambda: all(c.key != PAIR for c in dialog.model.rows), timeout=5000)
    (event,) = human_events(store_copy)
    assert event["event"] == "tension_reviewed" and event["data"]["action"] == "not_a_conflict"
    assert {event["engram_id"], event["data"]["engram_b"]} == {FRIDAY, THURSDAY}
    record = tensions_on_disk(store_copy)[event["data"]["tension_id"]]
    assert record["status"] == "dismissed"


@pytest.mark.parametrize("button", ["record", "dismiss", "a_replaces", "b_replaces"])
def test_an_answer_after_an_agent_rewrote_one_side_is_refused_and_writes_nothing(qtbot, window, store_copy, button):
    """The dialog still shows "every Thursday afternoon"; the file now says Monday. Recording the pair, not a
    conflict, or one replacing the other would name a reviewer on text they never saw."""
    dialog = _scanned(qtbot, window)
    engrams = store_copy / "engrams.yaml"
    text = engrams.read_text(encoding="utf-8")
    engrams.write_text(text.replace("every Thursday afternoon", "every Monday morning"), encoding="utf-8")
    qtbot.waitUntil(lambda: window.jobs.pending("session") == 0)
    window.session.reload_if_changed()  # the session has read it (a reload), the list is not scanned again yet
    assert "every Thursday afternoon" in dialog.detail.toPlainText()
    tensions_before = (store_copy / "tensions.yaml").read_bytes()
    errors: list[str] = []
    window.messages.error_shown.connect(errors.append)
    getattr(dialog, button).click()
    qtbot.waitUntil(lambda: bool(errors), timeout=10000)
    assert f"{THURSDAY} changed since you looked (statement" in errors[0], errors
    qtbot.waitUntil(lambda: window.jobs.pending("session") == 0, timeout=10000)  # (the reload the refusal asks for)
    assert human_events(store_copy) == []
    assert (store_copy / "tensions.yaml").read_bytes() == tensions_before
    assert "every Monday morning" in engrams.read_text(encoding="utf-8")  # the agent's text, untouched


def test_the_pane_is_a_tab_of_the_window_answered_by_keys(qtbot, window, store_copy):
    """Ctrl+5 brings the pane up in the window (no dialog): both statements in full side by side, the differing
    words marked, what each answer does in the statements' words; then N on the list answers, as a keypress."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QDialog

    dialog = _scanned(qtbot, window)
    assert window.tabs.currentWidget() is dialog and not [w for w in window.findChildren(QDialog) if w.isVisible()]
    c = dialog.current()
    html = dialog.detail.toHtml()
    text = dialog.detail.toPlainText()
    assert c.statement_a in text and c.statement_b in text  # in full, not cut to a column's width
    assert text.index(c.engram_a) < text.index(c.engram_b)
    assert "line-through" in html and "underline" in html  # the differing words, not colour alone
    assert f"A “{c.statement_a}” supersedes B “{c.statement_b}”; B is marked superseded by A" in text
    assert f"B “{c.statement_b}” supersedes A “{c.statement_a}”; A is marked superseded by B" in text
    assert window.tabs.tabText(window.tabs.currentIndex()).startswith("Conflicts")
    dialog.table.setFocus()
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(dialog.table, Qt.Key.Key_N)
    qtbot.waitUntil(lambda: all(c.key != PAIR for c in dialog.model.rows), timeout=5000)
    (event,) = human_events(store_copy)
    assert event["data"]["action"] == "not_a_conflict"
    assert {event["engram_id"], event["data"]["engram_b"]} == {FRIDAY, THURSDAY}


def test_key_1_makes_a_replace_b_and_the_search_narrows_the_pairs(qtbot, window, store_copy):
    from PySide6.QtCore import Qt

    dialog = _scanned(qtbot, window)
    window.search.setText("Thursday")
    window.apply_search()
    assert dialog.model.rows and all(
        "thursday" in f"{c.statement_a} {c.statement_b}".lower() for c in dialog.model.rows
    )
    window.search.setText("no pair says this 9f3k")
    window.apply_search()
    assert dialog.model.rowCount() == 0 and not dialog.a_replaces.isEnabled()
    assert "No likely contradictions matching" in dialog.detail.toPlainText()
    window.search.setText("Thursday")
    window.apply_search()
    dialog.table.selectRow(next(k for k, c in enumerate(dialog.model.rows) if c.key == PAIR))
    c = dialog.current()
    dialog.table.setFocus()
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(dialog.table, Qt.Key.Key_1)
    from ui.conftest import engrams_on_disk

    on_disk = engrams_on_disk(store_copy)
    assert c.engram_a in on_disk[c.engram_b]["relations"]["superseded_by"]  # A replaces B, as the preview said
    assert c.engram_b in on_disk[c.engram_a]["relations"]["supersedes"]
    assert on_disk[c.engram_b]["status"] == "active"  # nothing retired
    assert human_events(store_copy)
