"""The Conflicts pane (Ctrl+5): likely contradictions store-wide, scanned in the background; the selected pair's
two statements side by side in full, their differing words marked, the evidence, and what each of the reviewer's
four answers does, in the statements' own words. The answers (R record as a tension, N not a conflict, 1 A replaces
B, 2 B replaces A) are the conflicts controller's audited changes; the pane only shows and asks."""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal, SignalInstance
from PySide6.QtGui import QShortcut
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QWidget

from plur_desk.app.review.session import ChangeSet
from plur_desk.ui.built_later import BuiltLater
from plur_desk.ui.common.models import OneCallPerCell
from plur_desk.ui.common.widgets import (
    SafeBrowser,
    list_and_detail,
    make_table,
    pane_side,
    plain_label,
    text_html,
    window_shortcut,
)
from plur_desk.ui.tensions.tensions_pane import word_diff

if TYPE_CHECKING:  # the scan's module (numpy) loads with the first scan, off the GUI thread
    from plur_desk.app.conflicts.finder import ConflictCandidate

E = text_html  # stored text: escaped, hidden characters revealed
ID_ROLE = Qt.ItemDataRole.UserRole + 1
_Index = QModelIndex | QPersistentModelIndex
NO_PAIR = "Select a pair in the list first"


class Column(IntEnum):
    SCORE = 0
    A = 1
    B = 2
    RULE = 3
    WHY = 4


_HEADERS = {Column.SCORE: "Score", Column.A: "A", Column.B: "B", Column.RULE: "Signal", Column.WHY: "Evidence"}


class ConflictsModel(OneCallPerCell, QAbstractTableModel):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[ConflictCandidate] = []

    def set_rows(self, rows: list[ConflictCandidate]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 -- Qt's own signature
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(Column)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        self.painting()  # a header's repaint asks each section for several roles
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return _HEADERS[Column(section)]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or index.row() >= len(self.rows):
            return None
        row = self.rows[index.row()]
        if role == ID_ROLE:
            return row.key
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            column = Column(index.column())
            if column is Column.SCORE:
                return f"{row.score:.2f}"
            if column is Column.A:  # the statement first: a narrow column still shows words, not an id's prefix
                return f"“{row.statement_a}” ({row.engram_a})"
            if column is Column.B:
                return f"“{row.statement_b}” ({row.engram_b})"
            if column is Column.RULE:
                return f"{row.rule} / {row.kind}"
            return row.explanation()
        return None


def pair_html(c: ConflictCandidate) -> str:
    """Both statements in full, side by side, the differing words struck (A) and underlined (B); the evidence; and
    what each answer does to them. Everything stored is escaped: agent text is data, never markup."""
    left, right = word_diff(c.statement_a, c.statement_b)
    a, b = f"“{E(c.statement_a)}”", f"“{E(c.statement_b)}”"
    side = "<td width='50%' valign='top'><h3>{title} · {id}</h3><p style='font-size:14pt; white-space:pre-wrap'>{text}</p></td>"
    answers = (
        ("R", "Record as tension", "both stay; the pair is listed under Tensions, to settle there"),
        ("N", "Not a conflict", "both stay; the pair is recorded as dismissed and not proposed again"),
        ("1", "A replaces B", f"A {a} supersedes B {b}; B is marked superseded by A, nothing is retired"),
        ("2", "B replaces A", f"B {b} supersedes A {a}; A is marked superseded by B, nothing is retired"),
    )
    lines = "".join(f"<li><b>{key} · {name}</b>: {what}</li>" for key, name, what in answers)
    return (
        "<table width='100%' cellspacing='6'><tr>"
        + side.format(title="A", id=E(c.engram_a), text=left)
        + side.format(title="B", id=E(c.engram_b), text=right)
        + "</tr></table><p><small>Struck words appear only in A, underlined words only in B.</small></p>"
        f"<p style='white-space:pre-wrap'><b>Why:</b> {E(c.explanation())}</p>"
        f"<p><b>What each answer does</b> (recorded as your decision; Ctrl+Z undoes it):</p><ul>{lines}</ul>"
    )


class ConflictsPane(BuiltLater, QWidget):
    """Emits what the reviewer decided; the conflicts controller runs it through the session (audited, in order)."""

    record_requested = Signal(object)  # ConflictCandidate
    dismiss_requested = Signal(object)
    replace_requested = Signal(object, bool)  # ConflictCandidate, whether A is the newer (A replaces B)
    rescan_requested = Signal()
    count_changed = Signal()  # the candidates listed changed (the tab's count follows)
    selection_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("conflictsPane")
        self.model = ConflictsModel(self)
        self.found: list[ConflictCandidate] | None = None  # the last scan's candidates still unanswered (None: none)
        self._search = ""
        self._status = ""
        self.build_later()  # the widgets: on first use (ui/built_later.py)
        self.forget()

    def _build(self) -> None:
        self.status = plain_label(self._status)
        self.status.setObjectName("conflictsStatus")
        self.status.setWordWrap(True)
        self.table = make_table(self.model, "conflictsTable", "Conflict candidates", multi=False)
        for column, width in ((Column.SCORE, 60), (Column.A, 340), (Column.B, 340), (Column.RULE, 130)):
            self.table.setColumnWidth(column, width)
        self.detail = SafeBrowser()
        self.detail.setObjectName("conflictsDetail")
        self.detail.setAccessibleName("Conflict: both statements and the evidence")
        self.detail.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.record = QPushButton("Record as tension  (R)")
        self.dismiss = QPushButton("Not a conflict  (N)")
        self.a_replaces = QPushButton("A replaces B  (1)")
        self.b_replaces = QPushButton("B replaces A  (2)")
        self.rescan = QPushButton("Sc&an again")
        buttons = QHBoxLayout()
        for button in (self.record, self.dismiss, self.a_replaces, self.b_replaces):
            button.setAccessibleName(button.text().split("  (")[0])
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.rescan)
        list_and_detail(self, pane_side(self.status, self.table), pane_side((self.detail, 1), buttons), stretch=(2, 3))
        self._keys = [  # live while the list has the focus, as every pane's verdict keys
            self._key(key, button) for key, button in (("R", self.record), ("N", self.dismiss))
        ] + [self._key(key, button) for key, button in (("1", self.a_replaces), ("2", self.b_replaces))]
        self._show_rows()

    def _key(self, key: str, button: QPushButton) -> QShortcut:
        shortcut = window_shortcut(key, self.table, button.click)  # a key typed into an open dialog: not an answer
        shortcut.setAutoRepeat(False)  # a held key is one answer
        return shortcut

    def _connect(self) -> None:
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._selected())
        self.record.clicked.connect(lambda: self._emit(self.record_requested))
        self.dismiss.clicked.connect(lambda: self._emit(self.dismiss_requested))
        self.a_replaces.clicked.connect(lambda: self._replace(True))
        self.b_replaces.clicked.connect(lambda: self._replace(False))
        self.rescan.clicked.connect(self.rescan_requested.emit)

    # -- what navigation asks of a pane ----------------------------------------------------------------------

    def refresh(self, change: ChangeSet | None) -> None:
        """Shown afresh (a store opened, an explicit reload, shown again after changes elsewhere): scanned again."""
        self.rescan_requested.emit()

    def concerns(self, change: ChangeSet) -> bool:
        """An answer takes its pair off the list when written; nothing else rescans the pane on screen (an answer
        about a pair that changed since the scan is refused, never made on text nobody saw)."""
        return False

    def apply_search(self, text: str) -> None:
        self._search = text
        self._show_rows()

    def focus_queue(self) -> None:
        self.table.setFocus()

    def has_selection(self) -> bool:
        return self.current() is not None

    def current_engram_id(self) -> str | None:
        c = self.current()
        return c.engram_a if c is not None else None

    def count(self) -> int | None:
        """The pairs waiting for an answer (None before the first scan)."""
        return None if self.found is None else len(self.found)

    # -- rows ------------------------------------------------------------------------------------------------

    def current(self) -> ConflictCandidate | None:
        if not self.built:
            return None
        rows = self.table.selectionModel().selectedRows()
        return self.model.rows[rows[0].row()] if rows else None

    def set_progress(self, text: str) -> None:
        self._status = text
        if self.built:
            self.status.setText(text)

    def set_candidates(self, rows: list[ConflictCandidate], summary: str) -> None:
        self.found = list(rows)
        self.set_progress(summary)
        self._show_rows()
        self.count_changed.emit()

    def forget(self, *_: object) -> None:
        """Another store opens: nothing scanned of it yet (no count, no pairs of the store left)."""
        self.found = None
        self.set_progress("Not scanned yet: the pane scans when it is shown.")
        self._show_rows()
        self.count_changed.emit()

    def drop(self, key: str) -> None:
        """The pair answered leaves the list (the selection moves to the next one)."""
        if self.found is not None:
            self.set_candidates([c for c in self.found if c.key != key], self._status)

    def _show_rows(self) -> None:
        if not self.built:
            return
        keep = self.current()
        words = self._search.lower().split()
        found = self.found or []
        rows = [
            c
            for c in found
            if all(w in f"{c.engram_a} {c.engram_b} {c.statement_a} {c.statement_b} {c.rule}".lower() for w in words)
        ]
        at = self.table.currentIndex().row()
        self.model.set_rows(rows)
        keys = [c.key for c in rows]
        if rows:
            self.table.selectRow(
                keys.index(keep.key) if keep is not None and keep.key in keys else min(max(at, 0), len(rows) - 1)
            )
        self._selected()

    def _selected(self) -> None:
        c = self.current()
        if c is not None:
            self.detail.setHtml(pair_html(c))
        elif self.found is None:
            self.detail.setHtml("<p>Scanning the store for likely contradictions…</p>")
        else:
            searched = f" matching “{E(self._search.strip())}”" if self._search.strip() else ""
            self.detail.setHtml(
                f"<p>No likely contradictions{searched} to answer. Select a pair to see both statements.</p>"
            )
        has = c is not None
        for button in (self.record, self.dismiss, self.a_replaces, self.b_replaces):
            button.setEnabled(has)
            button.setToolTip("" if has else NO_PAIR)  # a grey button says why
        self.selection_changed.emit()

    def _emit(self, signal: SignalInstance) -> None:
        candidate = self.current()
        if candidate is not None:
            signal.emit(candidate)

    def _replace(self, a_is_newer: bool) -> None:
        c = self.current()
        if c is not None:
            self.replace_requested.emit(c, a_is_newer)
