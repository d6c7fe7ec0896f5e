"""Before approval: the draft detail names the engram it may contradict, and approving asks once (real window)."""

from __future__ import annotations

import threading

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from ui.conftest import answer_modal, engrams_on_disk, human_events

DRAFT, OTHER = "ENG-2026-12-02-022", "ENG-2026-12-02-026"  # "every Friday afternoon" / "every Thursday afternoon"


def _ready(qtbot, window):
    qtbot.waitUntil(
        lambda: window.conflicts.service is not None and window.jobs.pending("conflicts") == 0, timeout=20000
    )
    assert window.drafts.select_id(DRAFT)
    _checked(qtbot, window)


def _checked(qtbot, window):
    """The contradiction check of the selected draft runs on the read pool; its result replaces "Checking…"."""
    qtbot.waitUntil(lambda: "Checking for contradictions" not in window.drafts.detail.toPlainText(), timeout=20000)


def test_the_draft_detail_says_what_approving_may_contradict(qtbot, window):
    _ready(qtbot, window)
    text = window.drafts.detail.toPlainText()
    assert "Approving this may contradict" in text
    assert OTHER in text and "Deploy freezes happen every Thursday afternoon" in text
    assert "Friday → Thursday" in text and "leaning" in text


def answer_question(qtbot, window, key: Qt.Key, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    """The reviewer goes to the question waiting under the queue (Alt+Q) and presses `key` there."""
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Q, Qt.KeyboardModifier.AltModifier)
    assert window.review.question.isAncestorOf(QApplication.focusWidget())
    qtbot.keyClick(QApplication.focusWidget(), key, modifier)


def test_approve_asks_once_and_no_keeps_the_draft(qtbot, window, store_copy):
    _ready(qtbot, window)
    question = window.review.question
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    qtbot.waitUntil(question.isVisible, timeout=10000)  # asked once, under the queue: nothing pops up
    assert [w.seen.id for w in question.waiting] == [DRAFT] and OTHER in question.label.text()
    answer_question(qtbot, window, Qt.Key.Key_Escape)  # leave as draft
    qtbot.wait(200)
    assert window.jobs.pending("session") == 0 and not question.isVisible()
    assert engrams_on_disk(store_copy)[DRAFT]["commitment"] == "draft"
    assert not human_events(store_copy)

    assert window.drafts.select_id(DRAFT)
    qtbot.waitUntil(lambda: window.drafts.displayed_seen() is not None, timeout=10000)
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    qtbot.waitUntil(question.isVisible, timeout=10000)
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        answer_question(qtbot, window, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)  # approve anyway
    assert engrams_on_disk(store_copy)[DRAFT]["commitment"] == "decided"
    assert [e["engram_id"] for e in human_events(store_copy)] == [DRAFT]


def test_drafts_without_a_conflict_are_approved_without_a_question(qtbot, window, store_copy):
    _ready(qtbot, window)
    quiet = next(r.id for r in window.drafts.model.rows if r.id != DRAFT and not window.conflicts.conflicts_for(r.id))
    window.drafts.select_id(quiet)
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    assert engrams_on_disk(store_copy)[quiet]["commitment"] == "decided"


def _open_conflicts(qtbot, window):
    window.qactions["view.conflicts"].trigger()
    dialog = window.conflicts.pane
    qtbot.waitUntil(lambda: dialog.model.rowCount() > 0, timeout=20000)
    return dialog


def test_the_conflicts_view_lists_candidates_with_evidence(qtbot, qtmodeltester, window):
    dialog = _open_conflicts(qtbot, window)
    qtmodeltester.check(dialog.model)
    first = dialog.model.rows[0]
    assert {first.engram_a, first.engram_b} == {DRAFT, OTHER}
    assert "Friday → Thursday" in dialog.detail.toPlainText()
    assert "likely contradiction" in dialog.status.text()  # "1 likely contradiction", "2 likely contradictions"


def test_recording_from_the_conflicts_view_is_a_human_tension(qtbot, window, store_copy):
    from ui.conftest import tensions_on_disk

    dialog = _open_conflicts(qtbot, window)
    before = set(tensions_on_disk(store_copy))
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        dialog.record.click()
    new = [t for k, t in tensions_on_disk(store_copy).items() if k not in before]
    assert len(new) == 1 and {new[0]["engram_a"], new[0]["engram_b"]} == {DRAFT, OTHER}
    assert new[0]["status"] == "detected" and new[0]["reason"].startswith("plur_desk local detector")
    events = human_events(store_copy)
    assert [e["event"] for e in events] == ["contradiction_detected"]
    assert dialog.model.rowCount() == 0
    qtbot.waitUntil(lambda: window.jobs.pending("conflicts") == 0, timeout=20000)
    assert not window.conflicts.conflicts_for(DRAFT)  # the pair is recorded now: no more warning


def test_not_a_conflict_from_the_view_is_a_dismissed_record(qtbot, window, store_copy):
    from ui.conftest import tensions_on_disk

    dialog = _open_conflicts(qtbot, window)
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        dialog.dismiss.click()
    recorded = [t for t in tensions_on_disk(store_copy).values() if {t["engram_a"], t["engram_b"]} == {DRAFT, OTHER}]
    assert [t["status"] for t in recorded] == ["dismissed"]
    assert [e["data"]["action"] for e in human_events(store_copy)] == ["not_a_conflict"]


def test_a_bulk_approval_asks_once_with_the_warning_in_the_same_question(qtbot, window, store_copy):
    from PySide6.QtWidgets import QLabel

    from plur_desk.ui.common.dialogs import BulkDialog

    _ready(qtbot, window)
    ids = [DRAFT, next(r.id for r in window.drafts.model.rows if r.id != DRAFT)]
    window.drafts.select_id(ids[0])
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    asked = []

    def confirm(dialog):
        asked.append("\n".join(label.text() for label in dialog.findChildren(QLabel)))
        if dialog.flagged.count():
            dialog.include.setChecked(True)  # flagged drafts in the batch are included only when ticked
        dialog.combo.setCurrentText("checked, the Friday one is right")
        qtbot.keyClick(dialog.combo.lineEdit(), Qt.Key.Key_Return)

    answer_modal(confirm, kind=BulkDialog)
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    assert len(asked) == 1 and "may contradict" in asked[0] and OTHER in asked[0]
    assert engrams_on_disk(store_copy)[DRAFT]["commitment"] == "decided"


# -- the check runs on the read pool: the window never waits for it ------------------------------------------------


class _Gate(threading.Event):
    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()  # a gated check is under way, waiting for the gate


def _gate_checks(monkeypatch, window, only: str | None = None) -> _Gate:
    """The real check, held until the returned event is set (for the drafts with `only` among them, or all)."""
    real = window.conflicts.checker()
    assert real is not None
    gate = _Gate()

    def gated(ids, progress):
        if only is None or only in ids:
            gate.entered.set()
            assert gate.wait(20)
        return real(ids, progress)

    monkeypatch.setattr(window.conflicts, "checker", lambda: gated)
    return gate


def _select_two(qtbot, window):
    ids = [DRAFT, next(r.id for r in window.drafts.model.rows if r.id != DRAFT)]
    window.drafts.select_id(ids[0])
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    return ids


def test_a_bulk_approval_asks_only_once_the_check_is_done_and_the_window_keeps_running(
    qtbot, window, store_copy, monkeypatch
):
    from PySide6.QtWidgets import QApplication, QLabel, QProgressDialog

    from plur_desk.ui.common.dialogs import BulkDialog

    _ready(qtbot, window)
    gate = _gate_checks(monkeypatch, window)
    _select_two(qtbot, window)
    asked = []

    def confirm(dialog):
        asked.append("\n".join(label.text() for label in dialog.findChildren(QLabel)))
        if dialog.flagged.count():
            dialog.include.setChecked(True)
        dialog.combo.setCurrentText("checked")
        qtbot.keyClick(dialog.combo.lineEdit(), Qt.Key.Key_Return)

    answer_modal(confirm, kind=BulkDialog)
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)  # returns while the check is held: the GUI thread is free
    progress = window.findChild(QProgressDialog, "conflictCheckProgress")
    assert progress is not None
    qtbot.waitUntil(progress.isVisible, timeout=5000)  # the event loop runs: the progress is shown
    assert not asked and not isinstance(QApplication.activeModalWidget(), BulkDialog)
    assert window.jobs.pending("session") == 0 and not human_events(store_copy)
    gate.set()
    with qtbot.waitSignal(window.changes_applied, timeout=20000):
        qtbot.waitUntil(lambda: bool(asked), timeout=20000)
    assert len(asked) == 1 and "may contradict" in asked[0] and OTHER in asked[0]
    assert not progress.isVisible()
    assert engrams_on_disk(store_copy)[DRAFT]["commitment"] == "decided"


def test_cancelling_the_check_of_a_bulk_approval_asks_nothing_and_approves_nothing(
    qtbot, window, store_copy, monkeypatch
):
    from PySide6.QtWidgets import QProgressDialog, QPushButton

    _ready(qtbot, window)
    gate = _gate_checks(monkeypatch, window)
    service, judged = window.conflicts.service, []
    real_warnings = service.warnings_for
    monkeypatch.setattr(service, "warnings_for", lambda *a, **k: judged.append(a[0]) or real_warnings(*a, **k))
    _select_two(qtbot, window)
    opened = []
    answer_modal(lambda box: opened.append(box.objectName()))  # the first modal: the progress of the check
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    progress = window.findChild(QProgressDialog, "conflictCheckProgress")
    qtbot.waitUntil(lambda: opened == ["conflictCheckProgress"], timeout=5000)
    progress.findChild(QPushButton).click()  # Cancel, as the reviewer would
    gate.set()
    qtbot.waitUntil(lambda: window.workspace.jobs.pending("reads") == 0, timeout=20000)
    qtbot.wait(200)
    assert judged == []  # the cancelled check stopped: no draft was judged for nobody
    assert opened == ["conflictCheckProgress"] and window.jobs.pending("session") == 0
    assert engrams_on_disk(store_copy)[DRAFT]["commitment"] == "draft" and not human_events(store_copy)


def test_a_stale_check_of_a_draft_selected_before_is_dropped(qtbot, window, monkeypatch):
    qtbot.waitUntil(lambda: window.conflicts.service is not None, timeout=20000)
    quiet = next(r.id for r in window.drafts.model.rows if r.id != DRAFT and not window.conflicts.conflicts_for(r.id))
    window.drafts.select_id(quiet)
    _checked(qtbot, window)
    gate = _gate_checks(monkeypatch, window, only=DRAFT)
    window.drafts.select_id(DRAFT)
    assert "Checking for contradictions" in window.drafts.detail.toPlainText()  # shown at once, not waited for
    dropped = window.workspace.jobs.dropped
    qtbot.waitUntil(gate.entered.is_set, timeout=10000)  # read once the selection rested on it
    window.drafts.select_id(quiet)  # moved on before DRAFT's check is done
    _checked(qtbot, window)
    gate.set()
    reads = window.workspace.jobs
    # every read under way has come back (shown or dropped), the stale check of DRAFT among them; other reads may
    # have been dropped too (a newer request on their own channel), so the count is a floor, not an exact number
    qtbot.waitUntil(lambda: reads.pending("reads") == 0 and reads.dropped >= dropped + 1, timeout=20000)
    assert window.drafts.current_id() == quiet
    text = window.drafts.detail.toPlainText()
    assert "may contradict" not in text and OTHER not in text


def test_the_question_about_a_draft_shows_that_draft_wherever_the_reviewer_went(qtbot, window):
    """A pressed, the queue moves on, the reviewer presses J before the check comes back: the question about the
    first draft names that draft and its statement, never the one the reviewer moved to, and leaves the reviewer
    where they are."""
    qtbot.waitUntil(
        lambda: window.conflicts.service is not None and window.jobs.pending("conflicts") == 0, timeout=20000
    )
    assert window.drafts.select_id(DRAFT)
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)  # checked on the read pool: the queue moves on meanwhile
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_J)  # and the reviewer moves once more
    moved_to = window.drafts.current_id()
    question = window.review.question
    qtbot.waitUntil(question.isVisible, timeout=10000)
    assert [w.seen.id for w in question.waiting] == [DRAFT]
    assert "You approve: “Deploy freezes happen every Friday afternoon" in question.label.text()
    assert window.drafts.current_id() == moved_to != DRAFT and QApplication.focusWidget() is window.drafts.table
