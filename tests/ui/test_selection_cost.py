"""A large selection in the drafts list costs the window what is on screen, not what is selected: every call from
Qt into the model's Python waits for the interpreter lock while a worker runs Python (a bulk approval's
contradiction check), so the header and the pane must not ask the model about each selected row. What they answer
stays the same: the selected drafts, and the actions enabled for the context."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QItemSelection, QItemSelectionModel, Qt
from PySide6.QtWidgets import QApplication

from plur_desk.app.review.rows import DraftRow
from plur_desk.domain.commands import ApproveDrafts
from plur_desk.ui.actions import ACTIONS, is_enabled
from plur_desk.ui.main_window import MainWindow
from plur_desk.ui.review.drafts_pane import DraftsPane


def _rows(n: int) -> list[DraftRow]:
    return [
        DraftRow(
            f"ENG-{k:05d}",
            f"statement {k}",
            "global",
            "dev",
            "behavioral",
            "2026-11-01",
            3.0,
            "agent",
            "",
            "",
            (),
            None,
            (),
        )
        for k in range(n)
    ]


@contextmanager
def _calls_into_python() -> Iterator[Counter[str]]:
    """The model's methods Qt calls while the block runs (and the events after it are processed)."""
    counts: Counter[str] = Counter()

    def count(frame, event, _arg):  # type: ignore[no-untyped-def]
        if event == "call" and frame.f_code.co_name in ("rowCount", "columnCount", "index"):
            counts[frame.f_code.co_name] += 1

    sys.setprofile(count)
    try:
        yield counts
        for _ in range(5):
            QApplication.processEvents()
    finally:
        sys.setprofile(None)


def _pane(qtbot, n: int) -> DraftsPane:  # type: ignore[no-untyped-def]
    pane = DraftsPane()
    qtbot.addWidget(pane)
    pane.resize(1200, 700)
    pane.show()
    qtbot.waitExposed(pane)
    pane.set_rows(_rows(n))
    return pane


def test_selecting_500_rows_asks_the_model_about_the_rows_on_screen_only(qtbot) -> None:
    pane = _pane(qtbot, 2000)
    model = pane.model
    whole = QItemSelection(model.index(0, 0), model.index(499, model.columnCount() - 1))
    with _calls_into_python() as calls:
        pane.table.selectionModel().select(whole, QItemSelectionModel.SelectionFlag.ClearAndSelect)
    assert calls["rowCount"] < 500  # the header asked about every selected row in every column: ~3,600
    with _calls_into_python() as calls:
        ids = pane.selected_ids()
        rows = pane.selected_rows()
    assert ids == [f"ENG-{k:05d}" for k in range(500)] and [r.id for r in rows] == ids
    assert calls["rowCount"] < 20  # selectedRows() asked about each selected row and column: 8,000 for the two


CELLS = st.lists(
    st.tuples(st.integers(0, 59), st.integers(0, 59), st.integers(0, 7), st.integers(0, 7), st.booleans()),
    max_size=6,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=CELLS)
def test_the_selected_drafts_are_those_qt_counts_as_selected(qtbot, parts) -> None:  # type: ignore[no-untyped-def]
    """Whole rows, overlapping runs, and (never made by this list, answered all the same) parts of rows."""
    pane = _pane(qtbot, 60)
    model, flags = pane.model, QItemSelectionModel.SelectionFlag
    pane.table.selectionModel().clearSelection()
    for top, bottom, left, right, whole in parts:
        first, last = min(top, bottom), max(top, bottom)
        columns = (0, model.columnCount() - 1) if whole else (min(left, right), max(left, right))
        part = QItemSelection(model.index(first, columns[0]), model.index(last, columns[1]))
        pane.table.selectionModel().select(part, flags.Select)
    qt = sorted({i.row() for i in pane.table.selectionModel().selectedRows()})
    expected = [model.rows[r].id for r in qt] or ([pane.current_id()] if pane.current_id() else [])
    assert pane.selected_ids() == expected
    assert [r.id for r in pane.selected_rows()] == expected


def test_the_actions_follow_the_context_through_its_changes(qtbot, window: MainWindow) -> None:
    """The actions are set again only when the context changed: each state here is checked against the table."""
    drafts = window.drafts

    def check() -> None:
        ctx = window.ui_context()
        assert {s.id: window.qactions[s.id].isEnabled() for s in ACTIONS} == {s.id: is_enabled(s, ctx) for s in ACTIONS}
        session = window.session
        assert session is not None
        undo = f"Undo {session.undo_history.undo_label()}" if session.undo_history.can_undo else "Undo"
        assert window.qactions["edit.undo"].text() == undo

    check()
    model = drafts.model
    two = QItemSelection(model.index(0, 0), model.index(1, model.columnCount() - 1))
    drafts.table.selectionModel().select(two, QItemSelectionModel.SelectionFlag.ClearAndSelect)
    check()
    drafts.select_row(2)
    check()
    qtbot.keyClick(drafts.table, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)  # another pane
    check()
    qtbot.keyClick(window, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)
    check()
    current = drafts.current()
    assert current is not None
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        window.review.run_change(
            lambda: window.session.execute(ApproveDrafts((current.seen,))),  # type: ignore[union-attr]
            drafts.id_after([current.id]),
        )
    check()  # undo is possible now, and says what
    drafts.start_edit(drafts.displayed_seen(), drafts.current().statement)  # type: ignore[arg-type, union-attr]
    window._update_context()
    check()
    drafts.cancel_edit()
    check()


def test_a_repaint_asks_one_call_per_index_and_the_indexes_are_qts(qtbot) -> None:
    pane = _pane(qtbot, 2000)
    model = pane.model
    with _calls_into_python() as calls:
        pane.table.viewport().repaint()
    assert calls["index"] > 50 and calls["rowCount"] + calls["columnCount"] < 10  # were two per index
    last = model.columnCount() - 1
    for row, column in [(0, 0), (1999, last), (5, 3)]:
        index = model.index(row, column)
        assert (index.row(), index.column(), index.model(), index.isValid()) == (row, column, model, True)
        assert not model.index(row, column, index).isValid()  # a table: no children
    for row, column in [(-1, 0), (2000, 0), (0, last + 1), (0, -1)]:
        assert not model.index(row, column).isValid()


def _after_by_scan(rows: list[DraftRow], gone: set[str], current: str | None) -> str | None:
    """The rule `id_after` keeps: the first row after the last one leaving, else the last before the first."""
    positions = [n for n, r in enumerate(rows) if r.id in gone]
    if not positions:
        return current
    later = [r.id for r in rows[positions[-1] + 1 :] if r.id not in gone]
    earlier = [r.id for r in rows[: positions[0]] if r.id not in gone]
    return later[0] if later else (earlier[-1] if earlier else None)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_row_after_a_verdict_is_the_one_a_scan_finds_and_is_selected_by_id(qtbot, data) -> None:
    """`id_after` finds the rows leaving among the selected ones (a scan of 10,000 rows cost the key press 6 ms),
    and `select_id` takes the row it named without a scan: the same answers as scanning, whatever is selected."""
    n = data.draw(st.integers(1, 40))
    pane = _pane(qtbot, n)
    rows = pane.model.rows
    picked = sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=0, max_size=min(n, 6))))
    pane.select_row(data.draw(st.integers(0, n - 1)))
    if picked:
        pane.table.selectionModel().clearSelection()
        pane.select_also(picked)
    extra = data.draw(st.sets(st.integers(0, n - 1), max_size=2))  # ids not selected: the scan decides
    gone = {rows[k].id for k in set(picked) | extra} or {pane.current_id() or rows[0].id}
    expected = _after_by_scan(rows, gone, pane.current_id())
    after = pane.id_after(sorted(gone))
    assert after == expected
    if after is not None:
        assert pane.select_id(after) and pane.current_id() == after
