"""The Validity pane: windows grouped by state as of a chosen moment (PLUR 0.20 rules), an editor, a timeline."""

from __future__ import annotations

from datetime import UTC, datetime

from PySide6.QtCore import QItemSelectionModel, QTimer, Signal
from PySide6.QtGui import QAction, QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from plur_desk.app.review.session import ChangeSet
from plur_desk.app.review.validity_rows import VALIDITY_GROUPS, ValidityRow, validity_sort
from plur_desk.ui.built_later import BuiltLater
from plur_desk.ui.common.models import Column, RowsModel
from plur_desk.ui.common.widgets import list_and_detail, make_table, pane_side
from plur_desk.ui.review.drafts_pane import action_button
from plur_desk.ui.workspace import Workspace

TICK_MS = 30_000
GROUPS = VALIDITY_GROUPS
GROUP_TEXT = {
    "expiring_soon": "△ expiring soon",
    "expired": "✖ expired",
    "not_yet_valid": "◔ not yet valid",
    "current": "✔ current",
}


def _by_state(row: ValidityRow) -> tuple[int, str]:
    return validity_sort(row)


COLUMNS: list[Column[ValidityRow]] = [
    Column("State", lambda r: GROUP_TEXT[r.state], _by_state),
    Column("From", lambda r: r.valid_from or "…", lambda r: r.valid_from or ""),
    Column("Until", lambda r: r.valid_until or "…", lambda r: r.valid_until or "~"),
    Column("Scope", lambda r: r.scope, lambda r: r.scope),
    Column("Statement", lambda r: r.statement, lambda r: r.statement.lower()),
]


class ValidityPane(BuiltLater, QWidget):
    """Windows grouped by state; the verdicts (edit, expire) are the validity controller's."""

    selection_changed = Signal()

    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("validityPane")
        self.workspace = workspace
        self.model: RowsModel[ValidityRow] = RowsModel(COLUMNS, lambda r: r.id, self)
        self._search = ""
        self._extra: set[str] = set()
        self._updating = False  # a refresh is replacing the rows and selecting: it shows the selection once, after
        self.build_later()  # the widgets: on first use (ui/built_later.py)

    def _build(self) -> None:
        # with the widgets, after the first draft: PySide makes each Qt class (and its enums) on its first import,
        # ~2 M instructions a class, which a launch does not need
        from PySide6.QtCore import QDateTime, QTimeZone
        from PySide6.QtWidgets import QCheckBox, QDateTimeEdit

        from plur_desk.ui.validity.timeline import Timeline

        self.as_of = QDateTimeEdit(QDateTime.currentDateTimeUtc())
        self.as_of.setObjectName("asOf")
        self.as_of.setTimeZone(QTimeZone.utc())
        self.as_of.setDisplayFormat("yyyy-MM-dd HH:mm 'UTC'")
        self.as_of.setCalendarPopup(True)
        self.as_of.setAccessibleName("As of")
        self.as_of.setEnabled(False)
        self.follow_now = QCheckBox("now")
        self.follow_now.setObjectName("asOfNow")
        self.follow_now.setAccessibleName("As of now (follows the clock)")
        self.follow_now.setToolTip("Untick to look at the windows as of another moment")
        self.follow_now.setChecked(True)
        self._tick = QTimer(self, interval=TICK_MS)  # 'now' moves on: states are re-grouped while the pane shows
        self.summary = QLabel()
        self.table = make_table(
            self.model, "validityTable", "Engrams with validity windows", multi=True, widths=(140, 110, 170, 130)
        )
        self.timeline = Timeline()
        self.buttons = QHBoxLayout()
        top = QHBoxLayout()
        top.addWidget(QLabel("As of:"))
        top.addWidget(self.follow_now)
        top.addWidget(self.as_of)
        top.addWidget(self.summary, 1)
        legend = QLabel("Windows of engrams in the same domain (dashed line: the 'as of' moment):")
        list_and_detail(self, self.table, pane_side(legend, (self.timeline, 1), self.buttons), above=[top])

    def _connect(self) -> None:
        self.as_of.dateTimeChanged.connect(lambda _d: None if self.follow_now.isChecked() else self.refresh(None))
        self.follow_now.toggled.connect(self._follow_now)
        self._tick.timeout.connect(self._on_tick)
        self._tick.start()
        self.table.selectionModel().selectionChanged.connect(self._selection_moved)

    def add_buttons(self, actions: dict[str, QAction]) -> None:
        self.buttons.addWidget(action_button(actions["validity.edit"], "W"))
        self.buttons.addWidget(action_button(actions["validity.expire"], "X"))
        self.buttons.addStretch(1)

    def _follow_now(self, follow: bool) -> None:
        self.as_of.setEnabled(not follow)
        self.refresh(None)

    def _on_tick(self) -> None:
        if self.follow_now.isChecked() and self.isVisible():
            self.refresh(None)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self.follow_now.isChecked():
            self.refresh(None)

    def moment(self) -> datetime:
        """The 'as of' moment: the window's clock while 'now' is ticked, else the chosen moment."""
        from PySide6.QtCore import QDateTime, QTimeZone  # made by _build, which runs first

        if self.follow_now.isChecked():
            now = self.workspace.clock.now().astimezone(UTC)
            self.as_of.blockSignals(True)
            self.as_of.setDateTime(QDateTime.fromSecsSinceEpoch(int(now.timestamp()), QTimeZone.utc()))
            self.as_of.blockSignals(False)
            return now
        moment = self.as_of.dateTime().toPython()
        assert isinstance(moment, datetime)
        return moment.replace(tzinfo=UTC)

    def refresh(self, change: ChangeSet | None) -> None:
        session = self.workspace.session
        if session is None:
            return
        keep = self.current_engram_id()
        now = self.moment()
        rows = session.validity.rows(now, self._extra, self._search)  # kept by id in the app layer
        counts = {g: sum(1 for r in rows if r.state == g) for g in GROUPS}
        self.summary.setText("   ".join(f"{GROUP_TEXT[g]}: {counts[g]}" for g in GROUPS))
        self._updating = True  # a row that left, or the selection below, moves it: shown once, after
        try:
            self.model.update_rows(rows)
            row = self.model.row_of(keep) if keep else -1
            if rows:
                index = self.model.index(max(row, 0), 0)
                self.table.selectionModel().setCurrentIndex(
                    index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
                )
        finally:
            self._updating = False
        self._selected()  # moved or not: a selection that stayed may have windows that changed

    @staticmethod
    def concerns(change: ChangeSet) -> bool:
        """Any engram changed: it may have gained or lost a window, and the timeline beside a window shows every
        window of its domain (a tension or a history line alone changes nothing here)."""
        return bool(change.engrams)

    def apply_search(self, text: str) -> None:
        self._search = text
        self.refresh(None)

    def show_engram(self, engram_id: str) -> None:
        """Bring any engram here (from search or another pane) to give it a window."""
        self._extra.add(engram_id)
        self.refresh(None)
        row = self.model.row_of(engram_id)
        if row >= 0:
            self.table.selectRow(row)

    def selected_ids(self) -> list[str]:
        rows = sorted({i.row() for i in self.table.selectionModel().selectedRows()})
        ids = [self.model.rows[r].id for r in rows if r < len(self.model.rows)]
        current = self.current_engram_id()
        return ids or ([current] if current else [])

    def current_engram_id(self) -> str | None:
        index = self.table.currentIndex()
        return self.model.rows[index.row()].id if index.isValid() and index.row() < len(self.model.rows) else None

    def has_selection(self) -> bool:
        return self.current_engram_id() is not None

    def focus_queue(self) -> None:
        self.table.setFocus()

    def _selection_moved(self, *_: object) -> None:
        if not self._updating:
            self._selected()

    def _selected(self) -> None:
        session, current = self.workspace.session, self.current_engram_id()
        if session is None:
            return
        self.timeline.set_bars(session.window_bars(current) if current else [], self.moment())
        self.selection_changed.emit()

    def selected_rows(self) -> list[ValidityRow]:
        """The selected rows as listed (the current one when none is selected)."""
        rows = sorted({i.row() for i in self.table.selectionModel().selectedRows()})
        out = [self.model.rows[r] for r in rows if r < len(self.model.rows)]
        current = self.current_row()
        return out or ([current] if current is not None else [])

    def current_row(self) -> ValidityRow | None:
        index = self.table.currentIndex()
        return self.model.rows[index.row()] if index.isValid() and index.row() < len(self.model.rows) else None
