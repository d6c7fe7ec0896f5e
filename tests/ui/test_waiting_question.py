"""The contradiction question of an approval checked in the background never takes a key typed for another widget
(real window): keys typed while the check runs and after it ends go where they were meant, and no key typed for
something else answers it yes."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication

from ui.conftest import engrams_on_disk, human_events
from ui.test_conflict_warnings import DRAFT, OTHER, _gate_checks, _ready
from ui.test_focus import key_in_a_dialog_over_the_window

NONE = Qt.KeyboardModifier.NoModifier


class Typist:
    """A reviewer typing on: every 15 ms the next key goes to whatever has the keyboard focus, as the window system
    delivers it (a question that opened takes it, if it has the focus then). The keys after `then` wait until
    `ready()` (typed from inside a dialog's own loop, should one be open then)."""

    def __init__(self, qtbot, window, keys, then=(), ready=lambda: True) -> None:
        self.qtbot, self.window, self.ready = qtbot, window, ready
        self.keys, self.then, self.typed_to = list(keys), list(then), []
        self.timer = QTimer(window)
        self.timer.timeout.connect(self._next)
        self.timer.start(15)

    def _next(self) -> None:
        if not self.keys and self.then and self.ready():
            self.keys, self.then = self.then, []
        if not self.keys:
            if not self.then:
                self.timer.stop()
            return
        key = self.keys.pop(0)
        target = QApplication.focusWidget() or self.window
        self.typed_to.append(target.objectName())
        self.qtbot.keyClick(target, key)

    def done(self) -> bool:
        return not self.keys and not self.then


def letters(word: str) -> list[Qt.Key]:
    return [getattr(Qt.Key, f"Key_{c.upper()}") for c in word]


def approve_in_the_background(qtbot, window, monkeypatch):
    """A pressed on DRAFT before its check was read for the detail: the approval's check runs on the read pool (held
    until the returned gate is set) and the queue moves on at once."""
    _ready(qtbot, window)
    quiet = next(r.id for r in window.drafts.model.rows if r.id != DRAFT and not window.conflicts.conflicts_for(r.id))
    window.drafts.select_id(quiet)
    gate = _gate_checks(monkeypatch, window, only=DRAFT)
    window.review._checked = None  # nothing known of DRAFT yet: the reviewer was quicker than its read
    window.drafts.select_id(DRAFT)
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    qtbot.waitUntil(gate.entered.is_set, timeout=10000)
    assert window.drafts.current_id() != DRAFT
    return gate


def test_keys_typed_into_search_while_the_check_runs_never_answer_the_question(qtbot, window, store_copy, monkeypatch):
    gate = approve_in_the_background(qtbot, window, monkeypatch)
    qtbot.waitUntil(gate.entered.is_set, timeout=10000)
    window.search.setFocus()  # the reviewer goes on to search
    qtbot.waitUntil(window.search.hasFocus, timeout=5000)

    def check_ended() -> bool:  # (a question that takes keys opens as it ends)
        return QApplication.activeModalWidget() is not None or window.jobs.pending("reads") == 0

    # "friday", the cursor back one letter, "s" (the search is "fridasy"), then Return: to the results
    typist = Typist(qtbot, window, letters("friday"), [Qt.Key.Key_Left, *letters("s"), Qt.Key.Key_Return], check_ended)
    qtbot.wait(40)
    gate.set()  # the check ends while the reviewer types
    qtbot.waitUntil(typist.done, timeout=20000)
    qtbot.waitUntil(lambda: window.jobs.pending("reads") == 0 and window.jobs.pending("session") == 0, timeout=20000)
    qtbot.wait(200)
    assert engrams_on_disk(store_copy)[DRAFT]["commitment"] == "draft"
    assert not human_events(store_copy)
    assert window.search.text() == "fridasy"
    assert typist.typed_to == ["search"] * 9, typist.typed_to  # each key reached the widget it was typed for


def _waiting(qtbot, window, monkeypatch):
    """DRAFT's approval, checked in the background, now waits for an answer under the queue."""
    gate = approve_in_the_background(qtbot, window, monkeypatch)
    gate.set()
    question = window.review.question
    qtbot.waitUntil(question.isVisible, timeout=20000)
    return question


def test_the_question_waits_with_both_statements_and_a_deliberate_yes_approves_that_text(
    qtbot, window, store_copy, monkeypatch
):
    question = _waiting(qtbot, window, monkeypatch)
    text = question.label.text()
    assert f"approve {DRAFT} anyway" in text
    assert "You approve: “Deploy freezes happen every Friday afternoon" in text  # the exact text approved
    assert OTHER in text and "Deploy freezes happen every Thursday afternoon" in text  # what it may contradict
    assert window.drafts.current_id() != DRAFT  # the reviewer's place in the queue was kept
    assert QApplication.focusWidget() is window.drafts.table  # the question took no focus
    assert window.jobs.pending("session") == 0 and not human_events(store_copy)  # nothing yet: it waits
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_Q, Qt.KeyboardModifier.AltModifier)  # to the question
    assert question.isAncestorOf(QApplication.focusWidget())
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert engrams_on_disk(store_copy)[DRAFT]["commitment"] == "decided"
    assert [(e["engram_id"], e["actor"]["kind"]) for e in human_events(store_copy)] == [(DRAFT, "human")]
    assert not question.isVisible() and QApplication.focusWidget() is window.drafts.table


def test_return_space_and_escape_in_the_question_leave_the_draft(qtbot, window, store_copy, monkeypatch):
    question = _waiting(qtbot, window, monkeypatch)
    for key in (Qt.Key.Key_Tab, Qt.Key.Key_Left, Qt.Key.Key_Space):  # never reaches "Approve anyway"
        question.take_focus()
        qtbot.keyClick(QApplication.focusWidget(), key)
        if not question.isVisible():
            break
    qtbot.wait(100)
    assert not question.isVisible() and window.jobs.pending("session") == 0
    assert engrams_on_disk(store_copy)[DRAFT]["commitment"] == "draft" and not human_events(store_copy)
    for key in (Qt.Key.Key_Return, Qt.Key.Key_Escape):
        question.add(question_for(window, monkeypatch))
        question.take_focus()
        qtbot.keyClick(QApplication.focusWidget(), key)
        assert not question.waiting
    qtbot.wait(100)
    assert window.jobs.pending("session") == 0 and not human_events(store_copy)


def question_for(window, monkeypatch):
    from plur_desk.ui.review.waiting_question import Waiting

    row = next(r for r in window.drafts.model.rows if r.id == DRAFT)
    return Waiting(window.session, row, row.seen, ("• may contradict",), lambda: pytest.fail("approved"))


def test_ctrl_return_that_saves_an_edit_never_answers_the_question(qtbot, window, store_copy, monkeypatch):
    question = _waiting(qtbot, window, monkeypatch)
    edited = window.drafts.current_id()
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_E)  # the reviewer edits the next draft meanwhile
    qtbot.waitUntil(window.drafts.editor.hasFocus, timeout=5000)
    qtbot.keyClicks(window.drafts.editor, "Edited")
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert engrams_on_disk(store_copy)[edited]["statement"] == "Edited"
    assert engrams_on_disk(store_copy)[DRAFT]["commitment"] == "draft"
    assert question.holds(DRAFT) and question.isVisible()  # still waiting for its own answer


def test_keys_meant_for_a_dialog_never_answer_the_question_behind_it(qtbot, window, store_copy, monkeypatch):
    """The question has the focus and a dialog opens over the window: its Ctrl+Return (yes) and Return (leave the
    draft) typed into the dialog before it has the focus are the dialog's; the question still waits, then yes."""
    question = _waiting(qtbot, window, monkeypatch)
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_Q, Qt.KeyboardModifier.AltModifier)  # to the question
    inside = QApplication.focusWidget()
    assert question.isAncestorOf(inside)
    for key, modifier in ((Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier), (Qt.Key.Key_Return, NONE)):
        assert key_in_a_dialog_over_the_window(qtbot, window, inside, key, modifier) == [inside.objectName()]
        assert question.isVisible() and question.holds(DRAFT)
        assert window.jobs.pending("session") == 0 and not human_events(store_copy)
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(inside, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert [(e["engram_id"], e["data"]["action"]) for e in human_events(store_copy)] == [(DRAFT, "approve")]


def test_a_click_as_the_question_appears_is_ignored(qtbot, window, store_copy, monkeypatch):
    from plur_desk.ui.review.waiting_question import GRACE_S

    now = [1000.0]
    monkeypatch.setattr(window.review.question, "clock", lambda: now[0])
    question = _waiting(qtbot, window, monkeypatch)
    qtbot.mouseClick(question.approve_button, Qt.MouseButton.LeftButton)  # meant for what was there before
    qtbot.wait(100)
    assert question.holds(DRAFT) and window.jobs.pending("session") == 0 and not human_events(store_copy)
    now[0] += GRACE_S
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.mouseClick(question.approve_button, Qt.MouseButton.LeftButton)
    assert [e["engram_id"] for e in human_events(store_copy)] == [DRAFT]


def _approve_one_first(qtbot, window, store_copy) -> str:
    """An approval written before: what an undo run at the wrong moment would take back."""
    _ready(qtbot, window)
    quiet = next(r.id for r in window.drafts.model.rows if r.id != DRAFT and not window.conflicts.conflicts_for(r.id))
    window.drafts.select_id(quiet)
    qtbot.waitUntil(lambda: window.drafts.displayed_seen() is not None, timeout=10000)
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    qtbot.waitUntil(lambda: window.jobs.pending("session") == 0, timeout=10000)
    assert [e["engram_id"] for e in human_events(store_copy)] == [quiet]
    return quiet


def test_ctrl_z_withdraws_the_approval_waiting_and_undoes_nothing_else(qtbot, window, store_copy, monkeypatch):
    earlier = _approve_one_first(qtbot, window, store_copy)
    question = _waiting(qtbot, window, monkeypatch)
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert not question.waiting and not question.isVisible()
    qtbot.wait(100)
    assert window.jobs.pending("session") == 0 and [e["engram_id"] for e in human_events(store_copy)] == [earlier]
    assert engrams_on_disk(store_copy)[DRAFT]["commitment"] == "draft"
    assert engrams_on_disk(store_copy)[earlier]["commitment"] == "decided"  # the approval before is kept
    with qtbot.waitSignal(window.changes_applied, timeout=10000):  # and the next Ctrl+Z undoes it, as before
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert engrams_on_disk(store_copy)[earlier]["commitment"] == "draft"


def test_ctrl_z_pressed_while_the_check_runs_withdraws_the_approval_once_it_waits(
    qtbot, window, store_copy, monkeypatch
):
    earlier = _approve_one_first(qtbot, window, store_copy)
    gate = approve_in_the_background(qtbot, window, monkeypatch)
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # held: still checking
    gate.set()
    qtbot.waitUntil(lambda: window.jobs.pending("reads") == 0, timeout=20000)
    qtbot.wait(100)
    assert not window.review.question.waiting and not window.review.question.isVisible()
    assert window.jobs.pending("session") == 0 and [e["engram_id"] for e in human_events(store_copy)] == [earlier]
    assert engrams_on_disk(store_copy)[DRAFT]["commitment"] == "draft"
    assert engrams_on_disk(store_copy)[earlier]["commitment"] == "decided"


def test_keys_typed_on_the_next_drafts_while_the_check_runs_move_the_queue_there(qtbot, window, monkeypatch):
    gate = approve_in_the_background(qtbot, window, monkeypatch)
    start = window.drafts.current_row()

    def check_ended() -> bool:
        return QApplication.activeModalWidget() is not None or window.jobs.pending("reads") == 0

    # J as the check ends, then J and K (back one) after: each moves the queue, none reaches the question
    typist = Typist(qtbot, window, [Qt.Key.Key_J], [Qt.Key.Key_J, Qt.Key.Key_K, Qt.Key.Key_Return], check_ended)
    gate.set()
    qtbot.waitUntil(typist.done, timeout=20000)
    qtbot.waitUntil(window.review.question.isVisible, timeout=20000)
    assert typist.typed_to == ["draftsTable"] * 4, typist.typed_to
    assert window.drafts.current_row() == start + 1 and QApplication.activeModalWidget() is None
    assert window.review.question.holds(DRAFT)  # still waiting: Return on the queue did not answer it


def test_keys_typed_on_after_saving_an_edit_never_answer_its_question_yes(qtbot, window, store_copy):
    """The question before an edit that may contradict opens at the key that saves; keys typed on after it (Tab,
    an arrow, Space, Return) never reach "Save anyway": only Ctrl+Return or a click does."""
    from ui.conftest import answer_modal

    _ready(qtbot, window)
    original = engrams_on_disk(store_copy)[DRAFT]["statement"]
    asked: list[str] = []

    def type_on(box) -> None:
        asked.append(box.objectName())
        for key in (Qt.Key.Key_Tab, Qt.Key.Key_Left, Qt.Key.Key_Right, Qt.Key.Key_Space):
            if box.isVisible():
                qtbot.keyClick(QApplication.focusWidget() or box, key)
        if box.isVisible():
            qtbot.keyClick(QApplication.focusWidget() or box, Qt.Key.Key_Return)

    def edit() -> None:
        window.drafts.select_id(DRAFT)
        qtbot.waitUntil(lambda: window.drafts.displayed_seen() is not None, timeout=10000)
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_E)
        qtbot.keyClicks(window.drafts.editor, original + " always")
        qtbot.keyClick(window.drafts.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)

    answer_modal(type_on)
    edit()
    qtbot.waitUntil(lambda: bool(asked), timeout=10000)
    qtbot.wait(200)
    assert asked == ["conflictConfirm"] and window.jobs.pending("session") == 0
    assert engrams_on_disk(store_copy)[DRAFT]["statement"] == original and not human_events(store_copy)

    def yes(box) -> None:  # once the question has the focus, as a person sees it before answering: a key typed
        # before the window system activated it is not the question's (its Ctrl+Return is the question's window's)
        qtbot.waitUntil(lambda: QApplication.activeWindow() is box, timeout=10000)
        qtbot.keyClick(box, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)

    answer_modal(yes)
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        edit()
    assert engrams_on_disk(store_copy)[DRAFT]["statement"] == original + " always"
    assert [e["engram_id"] for e in human_events(store_copy)] == [DRAFT]
