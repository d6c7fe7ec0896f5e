"""After a decision the window updates only what changed: the queue loses the decided row without a model reset
(selection and scroll stay), and the next draft's detail is rendered once."""

from __future__ import annotations

from PySide6.QtCore import Qt

from plur_desk.domain.changes import ChangeSet
from plur_desk.domain.commands import ApproveDrafts
from plur_desk.ui.main_window import MainWindow


def test_one_approve_renders_the_next_detail_once_and_never_resets_the_queue(qtbot, window: MainWindow) -> None:
    # the scale view's first result redraws the detail with the writer's line: let it arrive before counting
    qtbot.waitUntil(lambda: window.scale.view is not None and window.scale.settled, timeout=20000)
    drafts = window.drafts
    first, second = drafts.model.rows[0].id, drafts.model.rows[1].id
    renders: list[str] = []
    show_detail = drafts.show_detail

    def counting(html, row=None, seen=None):  # type: ignore[no-untyped-def]
        renders.append(row.id if row is not None else "")
        show_detail(html, row, seen)

    drafts.show_detail = counting  # type: ignore[method-assign]
    resets: list[int] = []
    drafts.model.modelReset.connect(lambda: resets.append(1))
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(drafts.table, Qt.Key.Key_A)
    qtbot.waitUntil(lambda: window.jobs.pending("session") == 0, timeout=10000)
    assert first not in [r.id for r in drafts.model.rows]
    assert drafts.current_id() == second
    assert renders == [second]  # moved on at once; the write's result did not render it again
    assert drafts.displayed_seen() is not None  # and the verdict keys still rest on what is shown
    assert not resets


def test_confirming_a_tension_repaints_its_row_and_never_resets_the_list(qtbot, window: MainWindow) -> None:
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    tensions = window.tensions
    detected = next(r for r in tensions.model.rows if r.status == "detected")
    tensions._select(tensions.model.row_of(detected.id))
    others = [r for r in tensions.model.rows if r.id != detected.id]
    resets: list[int] = []
    tensions.model.modelReset.connect(lambda: resets.append(1))
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(tensions.table, Qt.Key.Key_C)
    qtbot.waitUntil(lambda: window.jobs.pending("session") == 0, timeout=10000)
    assert tensions.current_id() == detected.id
    assert tensions.model.rows[tensions.model.row_of(detected.id)].status == "confirmed"
    assert [r for r in tensions.model.rows if r.id != detected.id] == others  # the same rows, in the same order
    assert not resets


def test_a_changes_banner_and_listeners_come_in_a_tick_after_its_lists(qtbot, window: MainWindow) -> None:
    """Applying a decision updates the lists at once; the banner (which moves the panes down and repaints the whole
    window), the index's update and the changes_applied listeners follow on a timer, after the lists' repaint."""
    told: list[object] = []
    window.changes_applied.connect(told.append)
    at_apply: list[tuple[int, bool]] = []
    approved = window.drafts.current_id()

    def right_after_the_window(_change: object) -> None:  # connected after the window's own slot: the same tick
        at_apply.append((len(told), approved in {r.id for r in window.drafts.model.rows}))

    window.workspace.applied.connect(right_after_the_window)
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    qtbot.waitUntil(lambda: bool(told), timeout=10000)
    assert at_apply == [(0, False)]  # the row had left the list; no listener had been told yet
    assert len(told) == 1


def test_each_change_is_published_once_saying_where_it_came_from(qtbot, window: MainWindow) -> None:
    """A decision, its undo and a reload asked for: one publication each (app/broadcast.py), whatever number of
    views subscribe; each view reads the kind and the ids and decides what to show again."""
    published: list[ChangeSet] = []
    window.workspace.changes.subscribe(published.append)
    approved = window.drafts.current_id()
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    assert [c.kind for c in published] == ["decided"] and published[0].engrams == {approved}
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        window.qactions["edit.undo"].trigger()
    assert [c.kind for c in published] == ["decided", "undone"] and published[1].engrams == {approved}
    assert approved in {r.id for r in window.drafts.model.rows}  # back in the queue
    with qtbot.waitSignal(window.opener.reloaded, timeout=10000):
        window.opener.reload()  # asked for: every pane shown afresh
    assert [c.kind for c in published] == ["decided", "undone", "reread"] and published[2].afresh


def _reload(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    """What the window's watch does when PLUR wrote a file: read it again (not the reviewer's explicit reload)."""
    with qtbot.waitSignal(window.opener.reloaded, timeout=10000):
        window.opener.reload_quiet()
    qtbot.waitUntil(lambda: window.jobs.pending("session") == 0, timeout=10000)


def test_a_pane_an_outside_change_does_not_concern_keeps_its_detail_as_the_reviewer_left_it(
    qtbot, window: MainWindow, store_copy
) -> None:
    """An agent writing an engram no tension names leaves the Tensions pane alone (its detail is not rendered again,
    so it stays scrolled where the reviewer reads); a change to an engram on a side of a tension shows at once."""
    from tests.support.blocks import rewrite_block

    session = window.session
    assert session is not None
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_4, Qt.KeyboardModifier.ControlModifier)  # History shown once
    qtbot.keyClick(window.history.table, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    assert window.history not in window.navigation.stale
    tensions = window.tensions
    row = tensions.current()
    assert row is not None
    sides = {s for t in session.all_tensions() for s in (str(t["engram_a"]), str(t["engram_b"]))}
    outsider = next(v.id for v in map(session.view, session.engrams_by_id()) if v is not None and v.id not in sides)
    renders: list[int] = []
    tensions.detail.textChanged.connect(lambda: renders.append(1))

    rewrite_block(store_copy, outsider, "statement: ", "statement: Outside edit. ")
    _reload(qtbot, window)
    assert session.view(outsider).statement.startswith("Outside edit.")  # type: ignore[union-attr]
    assert renders == []  # not rendered again: not this pane's change
    assert window.history in window.navigation.stale  # a hidden pane is shown afresh next time, whatever changed
    assert window.history.concerns(ChangeSet(engrams=frozenset({outsider}))) is False

    rewrite_block(store_copy, row.engram_a, "statement: ", "statement: Side edit. ")
    _reload(qtbot, window)
    assert renders  # the tension's side changed: its detail shows the engram as it reads now
    assert "Side edit." in tensions.detail.toPlainText()
    assert tensions.current_id() == row.id  # the selection stays


def test_an_explicit_reload_shows_every_pane_afresh(qtbot, window: MainWindow) -> None:
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    renders: list[int] = []
    window.tensions.detail.textChanged.connect(lambda: renders.append(1))
    with qtbot.waitSignal(window.opener.reloaded, timeout=10000):
        window.opener.reload()  # F5: nothing changed on disk, every pane is shown again anyway
    assert renders


def test_an_agents_edit_our_own_write_read_in_reaches_the_pane_it_concerns(
    qtbot, window: MainWindow, store_copy
) -> None:
    """PLUR edits a tension's side; before any poll sees it, a decision on another draft is written: the write reads
    engrams.yaml again under the lock and takes the edit in, and its change names that engram too, so the Tensions
    pane shows it (the poll will not: the file on disk is now the one the session knows)."""
    from tests.support.blocks import rewrite_block

    session = window.session
    assert session is not None
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    row = window.tensions.current()
    assert row is not None
    sides = {s for t in session.all_tensions() for s in (str(t["engram_a"]), str(t["engram_b"]))}
    seen = session.writes.seen([next(r.id for r in session.queue.rows() if r.id not in sides)])
    rewrite_block(store_copy, row.engram_a, "statement: ", "statement: Agent edit. ")
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        window.workspace.change(lambda: session.execute(ApproveDrafts(tuple(seen))))
    assert session.view(row.engram_a).statement.startswith("Agent edit.")  # type: ignore[union-attr]
    assert "Agent edit." in window.tensions.detail.toPlainText()
