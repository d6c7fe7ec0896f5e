"""Table models over frozen rows from the app layer; sorting and filtering happen in Python, not in a Qt proxy."""

from __future__ import annotations

import operator
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from itertools import compress, count
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from plur_desk.app.review.rows import DraftRow, TensionRow
from plur_desk.domain.lint import reveal, severity, short_flag
from plur_desk.ui.common import theme
from plur_desk.ui.common.widgets import tooltip_text

ID_ROLE = Qt.ItemDataRole.UserRole + 1
SORT_ROLE = Qt.ItemDataRole.UserRole + 2
ROW_ROLE = Qt.ItemDataRole.UserRole + 3
# the roles as plain ints: comparing a role with an enum member (and looking the member up) cost more than the
# answer itself in a repaint's hundreds of calls
_DISPLAY = int(Qt.ItemDataRole.DisplayRole)
_ACCESSIBLE = int(Qt.ItemDataRole.AccessibleTextRole)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole)
_ID, _SORT, _ROW = int(ID_ROLE), int(SORT_ROLE), int(ROW_ROLE)

R = TypeVar("R")
Index = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True)
class Column(Generic[R]):
    """One column of a table: its title, text, sort key, and optional tip and colour."""

    title: str
    text: Callable[[R], str]
    sort: Callable[[R], Any]  # a comparable key (tuples of str, numbers); Any as sorted() needs comparability
    tip: Callable[[R], str] | None = None
    color: Callable[[R], str | None] | None = None  # a theme colour name for the cell's text


def _age(days: float) -> str:
    if days < 1 / 24:
        return "just now"
    if days < 1:
        return f"{int(days * 24)} h"
    if days < 60:
        return f"{int(days)} d"
    return f"{int(days / 30)} mo"


def _unmarked() -> None:
    """A model no window marks its repaints for (a test's, before its pane is given the window's marks)."""


class OneCallPerCell:
    """Every role a view's delegate asks of one cell, answered in one call into Python (`multiData`) instead of one
    `data()` call per role (about seven per cell on each repaint). Each call from Qt into Python takes the
    interpreter lock, and while another thread runs Python each take waits up to a switch interval: a repaint of
    the queue beside a busy thread took 48 ms through `data()` and 4 ms through `multiData` (1,274 calls -> 182).
    The first call of a repaint marks it under way (`painting`: the window's `RepaintMarks.mark`, set by the pane),
    so background work gives way until it is over and the rest of its calls find the lock free
    (ui/common/repaint_marks.py)."""

    painting: Callable[[], None] = staticmethod(_unmarked)

    def multiData(self, index: Index, roleDataSpan: Any) -> None:
        self.painting()
        data = self.data  # type: ignore[attr-defined]
        for role_data in roleDataSpan:
            role_data.setData(data(index, role_data.role()))


class RowsModel(OneCallPerCell, QAbstractTableModel, Generic[R]):
    """A list of frozen rows with declared columns; `set_rows` resets in one go (cheap even at 50k rows)."""

    def __init__(self, columns: Sequence[Column[R]], row_id: Callable[[R], str], parent: Any = None) -> None:
        super().__init__(parent)
        self.columns = list(columns)
        self.row_id = row_id
        self.rows: list[R] = []
        self.user_sort: tuple[int, bool] | None = None  # (column, descending) of the reviewer's last header click
        self._unique = True  # no id names two rows (update_rows keeps it so; set_rows checks)
        self.version = 0  # moves on with every change of the rows (what a caller's own bookkeeping checks)

    def set_rows(self, rows: list[R]) -> None:
        self.beginResetModel()
        self.rows = rows
        self._unique = len(set(map(self.row_id, rows))) == len(rows)  # every other change keeps ids unique
        self.version += 1
        self.endResetModel()

    def remove_ids(self, ids: Collection[str], near: int = -1) -> None:
        """Take the rows with these ids out (ids not listed are ignored); the others stay as they are, in their
        order. Looked for first within NEAR rows of `near` (a decision's rows sit next to the selection,
        `positions_of`); each run of rows removed is one signal."""
        likely = range(max(0, near - NEAR), near + NEAR + 1) if near >= 0 else ()
        positions = self.positions_of(ids, likely)
        runs = _runs(positions, reverse=True)
        drop = set(positions)
        self._remove_runs(runs, lambda: [row for n, row in enumerate(self.rows) if n not in drop])

    def positions_of(self, ids: Collection[str], likely: Iterable[int] = ()) -> list[int]:
        """The rows with these ids, ascending. Looked for among the `likely` rows first (a decision's rows are the
        selected ones, or next to the selection): when ids name one row each and every id is there, no pass over
        the list, which even in C cost 2-6 ms at 10,000 rows, their records cold in memory; else that pass."""
        wanted = ids if isinstance(ids, (set, frozenset)) else set(ids)
        rows, row_id = self.rows, self.row_id
        if self._unique:
            found = sorted({n for n in likely if 0 <= n < len(rows) and row_id(rows[n]) in wanted})
            if len(found) == len(wanted):
                return found
        return list(compress(count(), map(wanted.__contains__, map(row_id, rows))))

    def replace_listed(self, rows: Iterable[R]) -> bool:
        """Put each of `rows` in the place of the listed row with its id, each repainted; False, and nothing changed,
        when one of them is not listed. A new list: one handed out before is never changed under its holder."""
        by_id = {self.row_id(row): row for row in rows}
        found = list(compress(count(), map(by_id.__contains__, map(self.row_id, self.rows))))  # in C
        if len(found) != len(by_id):
            return False
        places = [(n, by_id[self.row_id(self.rows[n])]) for n in found]
        self.version += 1
        self.rows = list(self.rows)
        last = len(self.columns) - 1
        for n, row in places:
            self.rows[n] = row
            self.dataChanged.emit(self.index(n, 0), self.index(n, last))
        return True

    def update_rows(self, rows: list[R]) -> None:
        """Move to `rows` with the fewest signals: rows that left are removed, new ones inserted, changed ones
        repainted (dataChanged), so the view keeps its selection, current row and scroll position. A new order
        of the rows that stay (another sort) moves them as a layout change, persistent indexes following. More
        than RESET_ABOVE runs of rows to remove or insert (a search narrowing 10,000 rows to a scattered hundred:
        each run updated the whole view, ~100-180 ms) reset the model instead; the caller selects again."""
        if self._remove_only(rows):
            return
        new_ids = list(map(self.row_id, rows))  # in C when row_id is (as for drafts) an attrgetter
        if len(set(new_ids)) != len(new_ids):
            self.set_rows(rows)  # ids must name rows once for the diff; never expected, kept correct regardless
            return
        self._unique = True  # the rows listed from here on are these
        old_ids = list(map(self.row_id, self.rows))
        new_set, old_set = set(new_ids), set(old_ids)
        if list(filter(new_set.__contains__, old_ids)) != list(filter(old_set.__contains__, new_ids)):
            self._relayout(rows, new_ids)
            return
        removed = _runs(list(compress(count(), map(operator.not_, map(new_set.__contains__, old_ids)))), True)
        added = _runs(list(compress(count(), map(operator.not_, map(old_set.__contains__, new_ids)))))
        if len(removed) + len(added) > RESET_ABOVE:
            self.set_rows(rows)  # a search that keeps a scattered few (or brings them all back): one reset
            return
        self._delete_runs(removed)
        for start, end in added:
            self.beginInsertRows(QModelIndex(), start, end)
            self.rows[start:start] = rows[start : end + 1]
            self.endInsertRows()
        others = compress(count(), map(operator.is_not, self.rows, rows))
        changed = [n for n in others if self.rows[n] != rows[n]]
        self.rows = list(rows)
        last = len(self.columns) - 1
        for start, end in _runs(changed):
            self.dataChanged.emit(self.index(start, 0), self.index(end, last))

    def _remove_only(self, rows: list[R]) -> bool:
        """The usual update after a decision: the same row objects in the same order, less the decided ones.
        Found and applied with C-level passes over the rows (no Python call per row: 10,000 drafts took ~30 ms
        of the GUI thread's work after each decision through the general diff). False leaves the model as it is."""
        old = self.rows
        keep = set(map(id, rows))
        if len(keep) != len(rows) or len(rows) > len(old):
            return False
        kept = list(compress(old, map(keep.__contains__, map(id, old))))
        if len(kept) != len(rows) or not all(map(operator.is_, kept, rows)):
            return False
        gone = _runs(list(compress(count(), map(operator.not_, map(keep.__contains__, map(id, old))))), reverse=True)
        self._remove_runs(gone, lambda: list(rows))
        return True

    def _remove_runs(self, runs: list[tuple[int, int]], remaining: Callable[[], list[R]]) -> None:
        """Remove runs of rows, the last run first; more than RESET_ABOVE runs reset the model once instead, to
        the `remaining` rows."""
        if not runs:
            return
        if len(runs) > RESET_ABOVE:
            self.set_rows(remaining())
            return
        self._delete_runs(runs)

    def _delete_runs(self, runs: list[tuple[int, int]]) -> None:
        """Remove runs of rows (the last run first), one signal each, from a new list: one handed out before is
        never changed under its holder."""
        self.version += 1
        self.rows = list(self.rows)
        for start, end in runs:
            self.beginRemoveRows(QModelIndex(), start, end)
            del self.rows[start : end + 1]
            self.endRemoveRows()

    def _relayout(self, rows: list[R], new_ids: list[str]) -> None:
        self.layoutAboutToBeChanged.emit()
        where = dict(zip(new_ids, count()))  # in C; Python runs only per persistent index (the selection)
        old = self.persistentIndexList()
        moved = []
        for index in old:
            row = where.get(self.row_id(self.rows[index.row()])) if 0 <= index.row() < len(self.rows) else None
            moved.append(self.index(row, index.column()) if row is not None else QModelIndex())
        self.rows = list(rows)
        self.version += 1
        self.changePersistentIndexList(old, moved)
        self.layoutChanged.emit()

    def multiData(self, index: Index, roleDataSpan: Any) -> None:
        """Every role of one cell in one call (`OneCallPerCell`), the row and column looked up once, and only the
        roles this model answers set (the others stay invalid, as `data()`'s None leaves them): a repaint of the
        queue's visible cells made ~400 `data()` calls and as many `setData` calls into Qt, each a take of the
        interpreter lock while a worker runs Python."""
        self.painting()
        n = index.row()
        rows = self.rows
        if not 0 <= n < len(rows) or not 0 <= (c := index.column()) < len(self.columns):
            return
        row, column = rows[n], self.columns[c]
        for role_data in roleDataSpan:
            value = self._answer(row, column, role_data.role())
            if value is not None:
                role_data.setData(value)
            elif role_data.role() == _FOREGROUND:  # the delegate's span is reused: one cell's colour stays otherwise
                role_data.clearData()

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        """As QAbstractTableModel's, in one call into Python: its C++ asks rowCount and columnCount (two calls)
        for every index, e.g. each cell a repaint draws, and each call waits for the interpreter lock while a
        worker runs Python."""
        self.painting()
        if parent.isValid() or not (0 <= row < len(self.rows) and 0 <= column < len(self.columns)):
            return QModelIndex()
        return self.createIndex(row, column)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.columns)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not (0 <= index.row() < len(self.rows)):
            return None
        return self._answer(self.rows[index.row()], self.columns[index.column()], role)

    def _answer(self, row: R, column: Column[R], role: int) -> Any:
        """A cell's value for `role`; None for a role this model does not answer."""
        if role in (_DISPLAY, _ACCESSIBLE):
            return reveal(column.text(row))  # a U+202E must not reverse the cell, nor a U+200B hide in it
        if role == _TOOLTIP:
            return tooltip_text(column.tip(row) if column.tip else column.text(row))
        if role == _FOREGROUND:
            name = column.color(row) if column.color is not None else None
            return QColor(theme.color(name)) if name else None
        if role == _ID:
            return self.row_id(row)
        if role == _SORT:
            return column.sort(row)
        if role == _ROW:
            return row
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        self.painting()  # a header's repaint asks each section for several roles
        if (
            orientation == Qt.Orientation.Horizontal
            and role == Qt.ItemDataRole.DisplayRole
            and 0 <= section < len(self.columns)
        ):
            return self.columns[section].title
        return None

    def row_of(self, row_id: str) -> int:
        try:
            return list(map(self.row_id, self.rows)).index(row_id)  # in C when row_id is an attrgetter
        except ValueError:
            return -1

    def sorted_by(self, column: int, descending: bool) -> None:
        """The reviewer's sort (a header click): kept, so the rows the pane lists next come in it too."""
        self.user_sort = (column, descending)
        self.set_rows(self.in_user_order(self.rows))

    def in_user_order(self, rows: list[R]) -> list[R]:
        """`rows` in the reviewer's sort when one was chosen (ties by id: the same list whatever order the rows
        came in), else as given. A pane lists every refresh through it, so a decision or a reload keeps the sort
        the header shows."""
        if self.user_sort is None:
            return rows
        column, descending = self.user_sort
        key, row_id = self.columns[column].sort, self.row_id
        return sorted(rows, key=lambda row: (key(row), row_id(row)), reverse=descending)


NEAR = 64  # rows on either side of the selection where a decision's rows are looked for first
RESET_ABOVE = 32  # runs of rows removed or inserted: more, and one reset costs the view less than each run's update


def _runs(positions: list[int], reverse: bool = False) -> list[tuple[int, int]]:
    """Ascending positions as (first, last) runs of consecutive numbers; last run first when `reverse`."""
    runs: list[tuple[int, int]] = []
    for n in positions:
        if runs and runs[-1][1] == n - 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return runs[::-1] if reverse else runs


class DraftColumn(IntEnum):
    FLAGS = 0
    STATEMENT = 1
    SCOPE = 2
    DOMAIN = 3
    TYPE = 4
    AGE = 5
    WRITER = 6
    SESSION = 7


MARKS = {2: "⛔", 1: "⚠", 0: "ℹ"}  # a shape per severity: colour is never the only cue
SEVERITY_COLOR = {2: "danger", 1: "warn", 0: "info"}


def _by_severity(row: DraftRow) -> list[tuple[int, str]]:
    return sorted(((severity(f), f) for f in row.flags), key=lambda p: -p[0])


def _flags_text(row: DraftRow) -> str:
    """Each severity once, its mark then its flags, gravest first: "⛔ secret ⚠ expired"."""
    groups: dict[int, list[str]] = {}
    for level, flag in _by_severity(row):
        groups.setdefault(level, []).append(short_flag(flag))
    return " ".join(f"{MARKS[level]} {', '.join(names)}" for level, names in groups.items())


def _flags_tip(row: DraftRow) -> str:
    return "\n".join(f"{MARKS[level]} {flag}" for level, flag in _by_severity(row))


def flags_color(row: DraftRow) -> str | None:
    """The colour of the gravest flag (theme.color name), None without flags."""
    return SEVERITY_COLOR[max(severity(f) for f in row.flags)] if row.flags else None


def _writer(row: DraftRow) -> str:
    return row.writer + (f" · {row.model}" if row.model else "")


DRAFT_COLUMNS: list[Column[DraftRow]] = [
    Column(
        "Flags",
        _flags_text,
        lambda r: (-max((severity(f) for f in r.flags), default=-1), -len(r.flags), r.created),
        _flags_tip,
        flags_color,
    ),
    Column(
        "Statement", lambda r: r.statement.replace("\n", " ⏎ "), lambda r: r.statement.lower(), lambda r: r.statement
    ),
    Column("Scope", lambda r: r.scope, lambda r: (r.scope, r.created)),
    Column("Domain", lambda r: r.domain, lambda r: (r.domain, r.created)),
    Column("Type", lambda r: r.type, lambda r: (r.type, r.created)),
    Column("Age", lambda r: _age(r.age_days), lambda r: (r.created, r.id), lambda r: r.created),
    Column("Asserted by", _writer, lambda r: (r.writer, r.created)),
    Column("Session", lambda r: r.session, lambda r: (r.session, r.created), lambda r: r.session),
]


def drafts_model(parent: Any = None) -> RowsModel[DraftRow]:
    return RowsModel(DRAFT_COLUMNS, operator.attrgetter("id"), parent)


TENSION_COLUMNS: list[Column[TensionRow]] = [
    Column("Status", lambda r: r.status, lambda r: (r.status, r.detected_at)),
    Column("Confidence", lambda r: f"{r.confidence:.2f}", lambda r: r.confidence),
    Column("Category", lambda r: r.category, lambda r: (r.category, r.detected_at)),
    Column("Age", lambda r: _age(r.age_days), lambda r: r.detected_at, lambda r: r.detected_at),
    Column("Left", lambda r: r.statement_a, lambda r: r.statement_a.lower()),
    Column("Right", lambda r: r.statement_b, lambda r: r.statement_b.lower()),
]


def tensions_model(parent: Any = None) -> RowsModel[TensionRow]:
    return RowsModel(TENSION_COLUMNS, operator.attrgetter("id"), parent)
