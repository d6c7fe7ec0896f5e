"""Approvals pressed faster than their contradiction checks answer (real window): each A keeps its own check and is
written as its own signed decision, in the order pressed; none is dropped because a newer one came meanwhile."""

from __future__ import annotations

from PySide6.QtCore import Qt

from ui.conftest import answer_modal, engrams_on_disk, human_events
from ui.test_conflict_warnings import DRAFT, _gate_checks


def _quiet_run(qtbot, window, n: int) -> list[str]:
    """`n` drafts in a row in the queue's order, none with a contradiction (no question waits for them)."""
    qtbot.waitUntil(
        lambda: window.conflicts.service is not None and window.jobs.pending("conflicts") == 0, timeout=20000
    )
    ids = [r.id for r in window.drafts.model.rows]
    quiet = [i != DRAFT and not window.conflicts.conflicts_for(i) for i in ids]
    start = next(k for k in range(len(ids) - n) if all(quiet[k : k + n + 1]))
    return ids[start : start + n + 1]  # and the draft after them, where the queue ends


def _press_a_on(qtbot, window, engram_id: str) -> None:
    assert window.drafts.current_id() == engram_id
    assert window.drafts.displayed_seen() is not None and window.drafts.displayed_seen().id == engram_id
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)


def _settled(qtbot, window) -> None:
    qtbot.waitUntil(lambda: window.jobs.pending("reads") == 0 and window.jobs.pending("session") == 0, timeout=20000)
    qtbot.wait(100)
    qtbot.waitUntil(lambda: window.jobs.pending("reads") == 0 and window.jobs.pending("session") == 0, timeout=20000)


def _approvals(store_copy) -> list[tuple[str, str]]:
    return [(e["engram_id"], e["data"]["action"]) for e in human_events(store_copy)]


def test_a_second_a_while_the_first_is_still_checked_approves_both(qtbot, window, store_copy, monkeypatch):
    x, y, after = _quiet_run(qtbot, window, 2)
    statements = {i: engrams_on_disk(store_copy)[i]["statement"] for i in (x, y)}
    window.drafts.select_id(x)
    gate = _gate_checks(monkeypatch, window)  # every check (the detail's and the approvals') waits for the gate
    window.review._checked = None  # nothing known of X yet: the reviewer was quicker than its read
    _press_a_on(qtbot, window, x)
    qtbot.waitUntil(gate.entered.is_set, timeout=10000)  # X's check is under way, held
    _press_a_on(qtbot, window, y)  # the queue moved on to Y at once; A again while X is still checked
    assert window.drafts.current_id() == after and not human_events(store_copy)
    gate.set()
    qtbot.waitUntil(lambda: len(human_events(store_copy)) >= 2, timeout=20000)
    _settled(qtbot, window)
    assert _approvals(store_copy) == [(x, "approve"), (y, "approve")]
    on_disk = engrams_on_disk(store_copy)
    for event in human_events(store_copy):
        assert event["signer"] == "human:Grace Tester" and event["signature"]
        assert on_disk[event["engram_id"]]["commitment"] == "decided"
        assert on_disk[event["engram_id"]]["statement"] == statements[event["engram_id"]]
        assert window.session.trust(event).state.value == "valid"
    assert window.drafts.current_id() == after  # where the reviewer went: neither check moved the selection back
    assert not window.review.question.waiting


def test_a_run_of_approvals_each_pressed_before_the_last_check_answered_is_all_written(
    qtbot, window, store_copy, monkeypatch
):
    """The benchmark's run (8 approves in a row, 7 written): every A, each on the draft the last one moved to."""
    run = _quiet_run(qtbot, window, 5)
    window.drafts.select_id(run[0])
    gate = _gate_checks(monkeypatch, window)
    window.review._checked = None
    for engram_id in run[:-1]:
        _press_a_on(qtbot, window, engram_id)
    gate.set()
    qtbot.waitUntil(lambda: len(human_events(store_copy)) >= 5, timeout=30000)
    _settled(qtbot, window)
    assert _approvals(store_copy) == [(i, "approve") for i in run[:-1]]
    assert window.drafts.current_id() == run[-1]


def test_a_repeated_a_on_the_same_draft_still_approves_it_once(qtbot, window, store_copy, monkeypatch):
    x, y, _after = _quiet_run(qtbot, window, 2)
    window.drafts.select_id(x)
    gate = _gate_checks(monkeypatch, window)
    window.review._checked = None
    _press_a_on(qtbot, window, x)
    qtbot.waitUntil(gate.entered.is_set, timeout=10000)
    window.drafts.select_id(x)  # back to X (K) while its check runs, and A again
    _press_a_on(qtbot, window, x)
    gate.set()
    qtbot.waitUntil(lambda: len(human_events(store_copy)) >= 1, timeout=20000)
    _settled(qtbot, window)
    assert _approvals(store_copy) == [(x, "approve")]
    assert engrams_on_disk(store_copy)[y]["commitment"] == "draft"


def _select_pair(qtbot, window, first: str) -> None:
    window.drafts.select_id(first)
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_Down, Qt.KeyboardModifier.ShiftModifier)


def _confirm_bulks(qtbot, asked: list[int], times: int) -> None:
    """Answer the next `times` bulk questions yes (each one as it opens), flagged drafts included."""
    from plur_desk.ui.common.dialogs import BulkDialog

    def confirm(dialog) -> None:
        asked.append(dialog.deciding)
        if dialog.flagged.count():
            dialog.include.setChecked(True)
        dialog.combo.setCurrentText("checked")
        qtbot.keyClick(dialog.combo.lineEdit(), Qt.Key.Key_Return)
        if len(asked) < times:
            answer_modal(confirm, kind=BulkDialog)

    answer_modal(confirm, kind=BulkDialog)


def test_a_second_bulk_approval_while_the_first_is_checked_approves_both_selections(
    qtbot, window, store_copy, monkeypatch
):
    run = _quiet_run(qtbot, window, 4)
    gate = _gate_checks(monkeypatch, window)
    window.review._checked = None
    _select_pair(qtbot, window, run[0])
    assert window.drafts.selected_ids() == run[:2]
    asked: list[int] = []
    _confirm_bulks(qtbot, asked, 2)
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    qtbot.waitUntil(gate.entered.is_set, timeout=10000)
    _select_pair(qtbot, window, run[2])  # a different selection, approved while the first is still checked
    assert window.drafts.selected_ids() == run[2:4]
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    gate.set()
    qtbot.waitUntil(lambda: len(human_events(store_copy)) >= 4, timeout=30000)
    _settled(qtbot, window)
    assert len(asked) == 2
    assert _approvals(store_copy) == [(i, "approve") for i in run[:4]]


def test_cancelling_a_bulk_check_says_so_and_the_approval_asked_after_it_is_still_made(
    qtbot, window, store_copy, monkeypatch
):
    from PySide6.QtWidgets import QProgressDialog, QPushButton

    run = _quiet_run(qtbot, window, 3)
    gate = _gate_checks(monkeypatch, window)
    window.review._checked = None
    _select_pair(qtbot, window, run[0])
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    qtbot.waitUntil(gate.entered.is_set, timeout=10000)
    window.drafts.select_id(run[2])
    _press_a_on(qtbot, window, run[2])  # checked once the bulk approval's check is over
    progress = window.findChild(QProgressDialog, "conflictCheckProgress")
    qtbot.waitUntil(progress.isVisible, timeout=5000)
    progress.findChild(QPushButton).click()  # Cancel, as the reviewer would
    message = window.statusBar().currentMessage()
    assert "cancelled" in message and run[0] in message and run[1] in message and "not approved" in message
    gate.set()
    qtbot.waitUntil(lambda: len(human_events(store_copy)) >= 1, timeout=20000)
    _settled(qtbot, window)
    assert _approvals(store_copy) == [(run[2], "approve")]
    on_disk = engrams_on_disk(store_copy)
    assert on_disk[run[0]]["commitment"] == "draft" and on_disk[run[1]]["commitment"] == "draft"


def test_an_approval_whose_store_was_closed_while_it_was_checked_is_not_made_and_that_is_said(
    qtbot, window, store_copy, monkeypatch, tmp_path
):
    import shutil

    from ui.conftest import wait_loaded

    x, _y, _after = _quiet_run(qtbot, window, 2)
    other = tmp_path / "other"
    shutil.copytree(store_copy, other)
    said: list[str] = []
    window.statusBar().messageChanged.connect(said.append)
    window.drafts.select_id(x)
    gate = _gate_checks(monkeypatch, window)
    window.review._checked = None
    _press_a_on(qtbot, window, x)
    qtbot.waitUntil(gate.entered.is_set, timeout=10000)
    window.open_path(other)  # another store, opened before X's check answered
    wait_loaded(qtbot, window)
    gate.set()
    qtbot.waitUntil(lambda: any("Another store was opened" in m for m in said), timeout=20000)
    _settled(qtbot, window)
    (told,) = [m for m in said if "Another store was opened" in m]
    assert x in told and "nothing was approved" in told
    assert not human_events(store_copy) and not human_events(other)
    assert engrams_on_disk(store_copy)[x]["commitment"] == "draft" == engrams_on_disk(other)[x]["commitment"]


def _approve_one_first(qtbot, window, store_copy) -> tuple[str, str, str]:
    """W approved and written (so there is something to undo: Ctrl+Z is on); the selection moves on to X."""
    w, x, y, _after = _quiet_run(qtbot, window, 3)
    window.drafts.select_id(w)
    qtbot.waitUntil(lambda: window.drafts.displayed_seen() is not None, timeout=10000)
    with qtbot.waitSignal(window.changes_applied, timeout=20000):
        _press_a_on(qtbot, window, w)
    _settled(qtbot, window)
    assert _approvals(store_copy) == [(w, "approve")] and window.drafts.current_id() == x
    return w, x, y


def test_ctrl_z_behind_two_approvals_still_checked_takes_back_the_last_one_only(qtbot, window, store_copy, monkeypatch):
    w, x, y = _approve_one_first(qtbot, window, store_copy)
    gate = _gate_checks(monkeypatch, window)
    window.review._checked = None
    _press_a_on(qtbot, window, x)
    qtbot.waitUntil(gate.entered.is_set, timeout=10000)
    _press_a_on(qtbot, window, y)
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # held behind Y
    gate.set()
    qtbot.waitUntil(lambda: len(human_events(store_copy)) >= 4, timeout=20000)
    _settled(qtbot, window)
    assert _approvals(store_copy) == [(w, "approve"), (x, "approve"), (y, "approve"), (y, "undo")]
    on_disk = engrams_on_disk(store_copy)
    assert on_disk[x]["commitment"] == "decided" and on_disk[y]["commitment"] == "draft"


def test_ctrl_z_between_two_approvals_still_checked_takes_back_the_first_before_the_second_is_made(
    qtbot, window, store_copy, monkeypatch
):
    w, x, y = _approve_one_first(qtbot, window, store_copy)
    gate = _gate_checks(monkeypatch, window)
    window.review._checked = None
    _press_a_on(qtbot, window, x)
    qtbot.waitUntil(gate.entered.is_set, timeout=10000)
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # held behind X
    _press_a_on(qtbot, window, y)
    gate.set()
    qtbot.waitUntil(lambda: len(human_events(store_copy)) >= 4, timeout=20000)
    _settled(qtbot, window)
    assert _approvals(store_copy) == [(w, "approve"), (x, "approve"), (x, "undo"), (y, "approve")]
    on_disk = engrams_on_disk(store_copy)
    assert on_disk[x]["commitment"] == "draft" and on_disk[y]["commitment"] == "decided"


def test_an_approval_whose_check_is_known_waits_behind_one_still_checked_and_ctrl_z_takes_it_back(
    qtbot, window, store_copy, monkeypatch
):
    """Y's check was read for its detail; X's is still running: A on Y is written after X's approval, in the order
    the keys were pressed, so the Ctrl+Z pressed after it takes back Y, not X."""
    w, x, y = _approve_one_first(qtbot, window, store_copy)
    gate = _gate_checks(monkeypatch, window, only=x)
    window.review._checked = None
    _press_a_on(qtbot, window, x)
    qtbot.waitUntil(gate.entered.is_set, timeout=10000)
    qtbot.waitUntil(lambda: "Checking for contradictions" not in window.drafts.detail.toPlainText(), timeout=20000)
    assert window.review._known_conflicts(y) == []  # Y's check is known: no read needed for its approval
    _press_a_on(qtbot, window, y)
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.wait(100)
    assert _approvals(store_copy) == [(w, "approve")]  # Y waits for X's approval, asked before it
    gate.set()
    qtbot.waitUntil(lambda: len(human_events(store_copy)) >= 4, timeout=20000)
    _settled(qtbot, window)
    assert _approvals(store_copy) == [(w, "approve"), (x, "approve"), (y, "approve"), (y, "undo")]
    on_disk = engrams_on_disk(store_copy)
    assert on_disk[x]["commitment"] == "decided" and on_disk[y]["commitment"] == "draft"


def test_ctrl_z_after_another_decision_made_behind_an_approval_still_checked_takes_back_nothing(
    qtbot, window, store_copy, monkeypatch
):
    """A on X (its check held), then R on Y: the reject is written at once. A Ctrl+Z now meant the reject; held
    behind X it would take back X's approval once written (then on top), and run now it would take back the reject
    while X is still to come. It is refused, and says so: X is approved, Y stays rejected, no undo is written."""
    w, x, y = _approve_one_first(qtbot, window, store_copy)
    gate = _gate_checks(monkeypatch, window, only=x)
    window.review._checked = None
    _press_a_on(qtbot, window, x)
    qtbot.waitUntil(gate.entered.is_set, timeout=10000)
    assert window.drafts.current_id() == y

    def reason(dialog) -> None:
        dialog.combo.setCurrentText("wrong")
        qtbot.keyClick(dialog.combo.lineEdit(), Qt.Key.Key_Return)

    answer_modal(reason)
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_R)
    qtbot.waitUntil(lambda: len(human_events(store_copy)) >= 2, timeout=20000)  # the reject, written at once
    qtbot.waitUntil(lambda: window.jobs.pending("session") == 0, timeout=20000)  # and shown
    said: list[str] = []
    window.statusBar().messageChanged.connect(said.append)
    window.activateWindow()  # the reason dialog is gone: the window has the keys again
    window.drafts.table.setFocus()
    qtbot.waitUntil(lambda: window.isActiveWindow() and window.drafts.table.hasFocus(), timeout=10000)
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert any("another decision came after it; nothing was undone" in m for m in said), said
    gate.set()
    qtbot.waitUntil(lambda: len(human_events(store_copy)) >= 3, timeout=20000)
    _settled(qtbot, window)
    assert [action for _id, action in _approvals(store_copy)][-1] != "undo"
    assert sorted(_approvals(store_copy)) == sorted([(w, "approve"), (y, "reject"), (x, "approve")])
    on_disk = engrams_on_disk(store_copy)
    assert on_disk[x]["commitment"] == "decided" and on_disk[y]["status"] == "retired"


def test_a_return_typed_as_a_late_bulk_question_appears_approves_nothing(qtbot, window, store_copy, monkeypatch):
    """The bulk question opens when its check answers, not at the key press: a Return meant for the list that reaches
    it as it appears is dropped (its button is off for GRACE_S); a Return once it takes answers approves."""
    import time

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from plur_desk.ui.common.dialogs import BulkDialog

    run = _quiet_run(qtbot, window, 2)
    gate = _gate_checks(monkeypatch, window)
    window.review._checked = None
    _select_pair(qtbot, window, run[0])
    seen: dict[str, object] = {}
    deadline = time.monotonic() + 30

    def on_question() -> None:  # runs inside the question's own event loop, as the reviewer's keys would
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, BulkDialog):
            if time.monotonic() < deadline:
                QTimer.singleShot(10, on_question)
            return
        ok = dialog.buttons.button(dialog.buttons.StandardButton.Ok)
        seen["armed at first"], seen["ok at first"], seen["why"] = dialog.armed(), ok.isEnabled(), ok.toolTip()
        qtbot.keyClick(dialog.combo.lineEdit(), Qt.Key.Key_Return)  # typed for the list, as the question came up
        ok.click()  # a click meant for what was under the pointer
        dialog.accept()
        seen["still open"] = dialog.isVisible()
        seen["written meanwhile"] = len(human_events(store_copy))

        def once_armed() -> None:
            if not dialog.armed():
                QTimer.singleShot(20, once_armed)
                return
            seen["ok once armed"] = ok.isEnabled()
            qtbot.keyClick(dialog.combo.lineEdit(), Qt.Key.Key_Return)  # now read: the reviewer's answer
            if dialog.isVisible():
                dialog.reject()  # (never hang the test)

        QTimer.singleShot(20, once_armed)

    qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    qtbot.waitUntil(gate.entered.is_set, timeout=10000)
    QTimer.singleShot(0, on_question)
    gate.set()  # the check answers: the question appears on its own
    qtbot.waitUntil(lambda: len(human_events(store_copy)) >= 2, timeout=30000)
    _settled(qtbot, window)
    assert seen["armed at first"] is False and seen["ok at first"] is False and seen["why"]
    assert seen["still open"] is True and seen["written meanwhile"] == 0
    assert seen["ok once armed"] is True
    assert _approvals(store_copy) == [(i, "approve") for i in run[:2]]
