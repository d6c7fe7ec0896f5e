"""The Conflicts view: likely contradictions store-wide, scanned in the background, each with its evidence, and
the reviewer's three answers (record as a tension, not a conflict, one replaces the other) as audited actions."""

from __future__ import annotations

from enum import IntEnum

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal, SignalInstance
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from plur_desk.app.conflicts import ConflictCandidate
from plur_desk.ui.models import OneCallPerCell

ID_ROLE = Qt.ItemDataRole.UserRole + 1
_Index = QModelIndex | QPersistentModelIndex


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


class ConflictsDialog(QDialog):
    """Emits what the reviewer decided; the main window runs it through the session (audited, in order)."""

    record_requested = Signal(object)  # ConflictCandidate
    dismiss_requested = Signal(object)
    replace_requested = Signal(object, bool)  # ConflictCandidate, whether A is the newer (A replaces B)
    rescan_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("conflictsDialog")
        self.setWindowTitle("Conflicts — likely contradictions found on this machine")
        self.resize(1100, 560)
        self.model = ConflictsModel(self)
        self._build()
        self._connect()

    def _build(self) -> None:
        self.status = QLabel("Scanning…")
        self.status.setObjectName("conflictsStatus")
        self.table = QTableView(self)
        self.table.setObjectName("conflictsTable")
        self.table.setAccessibleName("Conflict candidates")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        for column, width in ((Column.SCORE, 60), (Column.A, 340), (Column.B, 340), (Column.RULE, 130)):
            self.table.setColumnWidth(column, width)
        self.detail = QPlainTextEdit(self)  # plain text: statements are data, never markup
        self.detail.setObjectName("conflictsDetail")
        self.detail.setAccessibleName("Conflict evidence")
        self.detail.setReadOnly(True)
        self.detail.setMaximumHeight(160)
        self.record = QPushButton("&Record as tension")
        self.dismiss = QPushButton("&Not a conflict")
        self.a_replaces = QPushButton("A &replaces B")
        self.b_replaces = QPushButton("&B replaces A")
        self.rescan = QPushButton("Sc&an again")
        buttons = QHBoxLayout()
        for button in (self.record, self.dismiss, self.a_replaces, self.b_replaces):
            button.setAccessibleName(button.text().replace("&", ""))
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.rescan)
        layout = QVBoxLayout(self)
        layout.addWidget(self.status)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.detail)
        layout.addLayout(buttons)
        self._update_buttons()

    def _connect(self) -> None:
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._selected())
        self.record.clicked.connect(lambda: self._emit(self.record_requested))
        self.dismiss.clicked.connect(lambda: self._emit(self.dismiss_requested))
        self.a_replaces.clicked.connect(lambda: self._replace(True))
        self.b_replaces.clicked.connect(lambda: self._replace(False))
        self.rescan.clicked.connect(self.rescan_requested.emit)

    def current(self) -> ConflictCandidate | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.rows[rows[0].row()] if rows else None

    def set_progress(self, text: str) -> None:
        self.status.setText(text)

    def set_candidates(self, rows: list[ConflictCandidate], summary: str) -> None:
        self.model.set_rows(rows)
        self.status.setText(summary)
        if rows:
            self.table.selectRow(0)
        self._selected()

    def _selected(self) -> None:
        c = self.current()
        self.detail.setPlainText(
            "Select a pair to see both statements and the evidence."
            if c is None
            else f"A ({c.engram_a}):\n  {c.statement_a}\nB ({c.engram_b}):\n  {c.statement_b}\n\nWhy: {c.explanation()}"
        )
        self._update_buttons()

    def _update_buttons(self) -> None:
        has = self.current() is not None
        for button in (self.record, self.dismiss, self.a_replaces, self.b_replaces):
            button.setEnabled(has)
            button.setToolTip("" if has else "Select a pair in the list first")  # a grey button says why

    def _emit(self, signal: SignalInstance) -> None:
        candidate = self.current()
        if candidate is not None:
            signal.emit(candidate)

    def _replace(self, a_is_newer: bool) -> None:
        c = self.current()
        if c is not None:
            self.replace_requested.emit(c, a_is_newer)
