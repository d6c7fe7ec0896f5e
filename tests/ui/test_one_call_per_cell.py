"""The lists answer a repaint with one call into Python per cell (`multiData`), not one per role: each call from
Qt takes the interpreter lock, which waits behind any busy thread. What they answer is what `data()` answers."""

from __future__ import annotations

import sys

from PySide6.QtCore import QModelIndex, QModelRoleData, QModelRoleDataSpan, Qt

from plur_desk.ui.common.models import ID_ROLE, ROW_ROLE, SORT_ROLE

ROLES = [
    Qt.ItemDataRole.DisplayRole,
    Qt.ItemDataRole.AccessibleTextRole,
    Qt.ItemDataRole.ToolTipRole,
    Qt.ItemDataRole.FontRole,
    Qt.ItemDataRole.ForegroundRole,
    Qt.ItemDataRole.DecorationRole,
    Qt.ItemDataRole.UserRole,
    ID_ROLE,
    SORT_ROLE,
    ROW_ROLE,
]


def _answers(model, index: QModelIndex) -> list[object]:  # type: ignore[no-untyped-def]
    out = []
    for role in ROLES:  # a span of one (PySide builds no longer span from Python); Qt's own spans are longer
        role_data = QModelRoleData(role)
        model.multiData(index, QModelRoleDataSpan(role_data))
        out.append(role_data.data())
    return out


def _cells_shown(table) -> int:  # type: ignore[no-untyped-def]
    """The cells a repaint of the table's viewport paints (those whose rectangle meets it, wholly or in part)."""
    model, area = table.model(), table.viewport().rect()
    return sum(
        1
        for row in range(model.rowCount())
        for column in range(model.columnCount())
        if table.visualRect(model.index(row, column)).intersects(area)
    )


def _direct_calls_during_repaint(table) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """Calls into the model's Python during one repaint: `data` straight from Qt, and `multiData`."""
    calls = {"direct": 0, "multi": 0}

    def profile(frame, event, _arg):  # type: ignore[no-untyped-def]
        if event != "call":
            return
        name = frame.f_code.co_name
        if name == "multiData":
            calls["multi"] += 1
        elif name == "data" and (frame.f_back is None or frame.f_back.f_code.co_name != "multiData"):
            calls["direct"] += 1

    sys.setprofile(profile)
    try:
        table.viewport().repaint()
    finally:
        sys.setprofile(None)
    return calls["direct"], calls["multi"]


def test_the_queue_and_the_history_repaint_one_call_per_cell(qtbot, window):
    model, table = window.drafts.model, window.drafts.table
    assert len(model.rows) >= 2
    for row in range(len(model.rows)):
        for column in range(model.columnCount()):
            index = model.index(row, column)
            assert _answers(model, index) == [model.data(index, role) for role in ROLES]
    direct, multi = _direct_calls_during_repaint(table)
    assert multi >= _cells_shown(table) > 0 and direct == 0

    window.navigation.show_history()
    history = window.history
    qtbot.waitUntil(lambda: history.model.rowCount() > 0, timeout=10000)
    for row in range(history.model.rowCount()):
        for column in range(history.model.columnCount()):
            index = history.model.index(row, column)
            assert _answers(history.model, index) == [history.model.data(index, role) for role in ROLES]
    direct, multi = _direct_calls_during_repaint(history.table)
    # (a bound on the cells painted, not on the rows: how many of the 41 fit depends on the window's height)
    assert multi >= _cells_shown(history.table) > 0 and direct == 0
