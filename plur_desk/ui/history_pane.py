"""The History pane: every event, newest first, fetched in pages; filters; full JSON; per-engram timelines; export."""

from __future__ import annotations

import csv
import html
import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QAction, QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from plur_desk.app.history_index import HistoryFilter, actor_kind, actor_name
from plur_desk.domain.trust import Trust, TrustState
from plur_desk.ui.drafts_pane import action_button
from plur_desk.ui.widgets import make_table

if TYPE_CHECKING:
    from plur_desk.ui.main_window import MainWindow

PAGE = 200
TRUST_FILTERS: dict[str, frozenset[TrustState]] = {
    "any trust": frozenset(),
    "signed human decisions": frozenset({TrustState.VALID}),
    "unverified human claims": frozenset({TrustState.UNSIGNED, TrustState.INVALID, TrustState.UNKNOWN_SIGNER}),
    "unsigned human claims": frozenset({TrustState.UNSIGNED}),
    "invalid signatures": frozenset({TrustState.INVALID}),
    "unknown signers": frozenset({TrustState.UNKNOWN_SIGNER}),
}
HEADERS = ("When (UTC)", "Actor", "Event", "Engram", "Summary")


def summary_of(event: dict[str, object]) -> str:
    data = event.get("data") if isinstance(event.get("data"), dict) else {}
    assert isinstance(data, dict)
    parts = [str(data[k]) for k in ("action", "reason", "tension_id", "to") if data.get(k) not in (None, "")]
    if data.get("field") == "statement":
        parts = ["edit", f"“{data.get('to')}”"]
    return " · ".join(p if len(p) < 80 else p[:77] + "…" for p in parts)


class HistoryModel(QAbstractTableModel):
    """A filtered, newest-first list shown a page at a time (canFetchMore/fetchMore)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.events: Sequence[dict[str, object]] = []
        self.shown = 0
        self.trust: Callable[[dict[str, object]], Trust] | None = None
        self._trusts: dict[int, Trust | None] = {}  # by row, until the next reset
        self._bold = QFont()
        self._bold.setBold(True)

    def set_events(self, events: Sequence[dict[str, object]]) -> None:
        self.beginResetModel()
        self.events = events
        self._trusts = {}
        self.shown = min(PAGE, len(events))
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self.shown

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(HEADERS)

    def canFetchMore(self, parent: QModelIndex | QPersistentModelIndex) -> bool:
        return not parent.isValid() and self.shown < len(self.events)

    def fetchMore(self, parent: QModelIndex | QPersistentModelIndex) -> None:
        if parent.isValid():
            return
        more = min(PAGE, len(self.events) - self.shown)
        if more <= 0:
            return
        self.beginInsertRows(QModelIndex(), self.shown, self.shown + more - 1)
        self.shown += more
        self.endInsertRows()

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= self.shown:
            return None
        event = self.events[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            column = index.column()
            if column == 0:
                return str(event.get("timestamp", ""))[:19].replace("T", " ")
            if column == 1:
                kind = actor_kind(event)
                marker = {"human": "HUMAN", "agent": "agent", "unknown": "unknown"}[kind]
                trust = self._trust(index.row(), event)
                if trust is not None and trust.state is not TrustState.NOT_HUMAN:
                    marker = f"{marker} ({trust.label})"
                return f"{marker} · {actor_name(event)}" if actor_name(event) else marker
            if column == 2:
                return str(event.get("event", ""))
            if column == 3:
                return str(event.get("engram_id", ""))
            return summary_of(event)
        if role == Qt.ItemDataRole.FontRole and actor_kind(event) == "human":
            return self._bold
        if role in (Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.ForegroundRole) and index.column() == 1:
            return self._trust_hint(self._trust(index.row(), event), role)
        if role == Qt.ItemDataRole.UserRole:
            return event
        return None

    @staticmethod
    def _trust_hint(trust: Trust | None, role: int) -> Any:
        """Tooltip with the verdict's reason; red text (beside the label, never the only cue) when unverified."""
        if trust is None or not trust.suspicious:
            return _tip(trust.detail) if trust and role == Qt.ItemDataRole.ToolTipRole else None
        if role == Qt.ItemDataRole.ToolTipRole:
            return _tip(f"Not a verified human decision: {trust.detail}")
        return QBrush(QColor("#c0392b"))

    def _trust(self, row: int, event: dict[str, object]) -> Trust | None:
        """Verified once per row shown (every role of every repaint asks)."""
        if self.trust is None or actor_kind(event) != "human":
            return None
        if row not in self._trusts:
            self._trusts[row] = self.trust(event)
        return self._trusts[row]

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole and section < len(HEADERS):
            return HEADERS[section]
        return None


def _tip(text: str) -> str:
    """A tooltip showing agent-written text (a signer name) as text: Qt guesses rich text for tooltips."""
    return f"<p>{html.escape(text)}</p>"


def _parse_day(text: str, end: bool) -> datetime | None:
    text = text.strip()
    if not text:
        return None
    try:
        day = datetime.fromisoformat(text[:10]).replace(tzinfo=UTC)
    except ValueError:
        return None
    return day.replace(hour=23, minute=59, second=59) if end else day


class HistoryPane(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("historyPane")
        self.window_: MainWindow | None = None
        self.model = HistoryModel(self)
        self._text = ""
        self._build()

    def _build(self) -> None:
        self.type_filter = QComboBox()
        self.type_filter.setAccessibleName("Event type")
        self.actor_filter = QComboBox()
        self.actor_filter.setAccessibleName("Actor kind")
        self.actor_filter.addItems(["all actors", "human", "agent", "unknown"])
        self.trust_filter = QComboBox()
        self.trust_filter.setObjectName("historyTrust")
        self.trust_filter.setAccessibleName("Signature trust")
        self.trust_filter.addItems(list(TRUST_FILTERS))
        self.reviewer = QLineEdit()
        self.reviewer.setPlaceholderText("reviewer")
        self.reviewer.setAccessibleName("Reviewer")
        self.engram = QLineEdit()
        self.engram.setObjectName("historyEngram")
        self.engram.setPlaceholderText("engram id")
        self.engram.setAccessibleName("Engram id")
        self.since = QLineEdit()
        self.since.setPlaceholderText("from YYYY-MM-DD")
        self.since.setAccessibleName("From date")
        self.until = QLineEdit()
        self.until.setPlaceholderText("to YYYY-MM-DD")
        self.until.setAccessibleName("To date")
        self.count = QLabel()
        filters = QHBoxLayout()
        for widget in (
            self.type_filter,
            self.actor_filter,
            self.trust_filter,
            self.reviewer,
            self.engram,
            self.since,
            self.until,
        ):
            filters.addWidget(widget)
        filters.addWidget(self.count, 1)
        self.table = make_table(self.model, "historyTable", "History events", multi=False, widths=(150, 200, 170, 170))
        self.detail = QTextBrowser()
        self.detail.setObjectName("historyDetail")
        self.detail.setAccessibleName("Event details")
        self.buttons = QHBoxLayout()
        bottom = QWidget()
        bottom_layout = QVBoxLayout(bottom)
        bottom_layout.setContentsMargins(0, 0, 0, 0)
        bottom_layout.addWidget(self.detail)
        bottom_layout.addLayout(self.buttons)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(bottom)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addLayout(filters)
        layout.addWidget(splitter)

    def attach(self, window: MainWindow) -> None:
        self.window_ = window
        for widget in (self.type_filter, self.actor_filter, self.trust_filter):
            widget.currentIndexChanged.connect(lambda _i: self.refresh(None))
        for field in (self.reviewer, self.engram, self.since, self.until):
            field.editingFinished.connect(lambda: self.refresh(None))
        self.table.selectionModel().currentRowChanged.connect(lambda *_: self._selected())

    def add_buttons(self, actions: dict[str, QAction]) -> None:
        self.buttons.addWidget(action_button(actions["history.export_csv"], ""))
        self.buttons.addWidget(action_button(actions["history.export_jsonl"], ""))
        self.buttons.addWidget(action_button(actions["history.timeline"], "Ctrl+T"))
        self.buttons.addStretch(1)

    def current_filter(self) -> HistoryFilter:
        kind = self.actor_filter.currentText()
        kind_text = self.type_filter.currentText()
        return HistoryFilter(
            types=frozenset() if not kind_text or kind_text == "all events" else frozenset({kind_text}),
            actor_kinds=frozenset() if kind == "all actors" else frozenset({kind}),
            reviewer=self.reviewer.text().strip(),
            engram_id=self.engram.text().strip(),
            text=self._text,
            since=_parse_day(self.since.text(), False),
            until=_parse_day(self.until.text(), True),
            trust=TRUST_FILTERS.get(self.trust_filter.currentText(), frozenset()),
        )

    def refresh(self, change: object) -> None:
        window = self.window_
        if window is None or window.session is None:
            return
        index = window.session.history
        types = ["all events", *index.types()]
        if [self.type_filter.itemText(i) for i in range(self.type_filter.count())] != types:
            current = self.type_filter.currentText()
            self.type_filter.blockSignals(True)
            self.type_filter.clear()
            self.type_filter.addItems(types)
            self.type_filter.setCurrentText(current if current in types else "all events")
            self.type_filter.blockSignals(False)
        events = index.newest_first(self.current_filter())
        self.model.trust = index.trust
        self.model.set_events(events)
        malformed = index.malformed_count()
        more = " · reading older months…" if index.partial else ""
        self.count.setText(f"{len(events):,} events" + (f" · {malformed} malformed lines" if malformed else "") + more)
        if events:
            self.table.selectRow(0)
        self._selected()

    def apply_search(self, text: str) -> None:
        self._text = text.strip()
        self.refresh(None)

    def show_engram(self, engram_id: str) -> None:
        self.engram.setText(engram_id)
        self.refresh(None)

    def current_event(self) -> dict[str, object] | None:
        index = self.table.currentIndex()
        return self.model.events[index.row()] if index.isValid() and index.row() < self.model.shown else None

    def current_engram_id(self) -> str | None:
        event = self.current_event()
        return str(event.get("engram_id")) if event and event.get("engram_id") else None

    def has_selection(self) -> bool:
        return self.current_event() is not None

    def focus_queue(self) -> None:
        self.table.setFocus()

    def _selected(self) -> None:
        event, window = self.current_event(), self.window_
        if event is None or window is None or window.session is None:
            self.detail.setHtml("")
            return
        clean = {k: v for k, v in event.items() if not k.startswith("_")}
        engram = window.session.engram(str(event.get("engram_id", "")))
        about = (
            f"<p><b>Engram now:</b> {engram.get('statement')} ({engram.get('status')}, {engram.get('commitment')})</p>"
            if engram
            else ""
        )
        where = f"history/{event.get('_month')}.jsonl" + (f", line {event['_line']}" if event.get("_line") else "")
        trust = window.session.history.trust(event)
        verdict = (
            f"<p><b>{html.escape(trust.label)}</b>: {html.escape(trust.detail)}</p>"
            if trust.state is not TrustState.NOT_HUMAN
            else ""
        )
        self.detail.setHtml(
            f"<p><small>{where}</small></p>{verdict}{about}<pre>"
            f"{json.dumps(clean, indent=2, ensure_ascii=False).replace('<', '&lt;')}</pre>"
        )

    def _export(self, suffix: str) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export history view", f"plur-history.{suffix}")
        if path:
            self.export_to(path)

    def export_csv(self) -> None:
        self._export("csv")

    def export_jsonl(self) -> None:
        self._export("jsonl")

    def export_to(self, path: str) -> int:
        """Write the whole filtered view (not only the fetched pages) as CSV or JSONL."""
        events = [{k: v for k, v in e.items() if not k.startswith("_")} for e in self.model.events]
        with open(path, "w", encoding="utf-8", newline="") as handle:
            if path.endswith(".csv"):
                writer = csv.writer(handle)
                writer.writerow(["timestamp", "event", "engram_id", "actor_kind", "actor", "data"])
                for e in events:
                    writer.writerow(
                        [
                            e.get("timestamp"),
                            e.get("event"),
                            e.get("engram_id"),
                            actor_kind(e),
                            actor_name(e),
                            json.dumps(e.get("data"), ensure_ascii=False),
                        ]
                    )
            else:
                for e in events:
                    handle.write(json.dumps(e, ensure_ascii=False) + "\n")
        return len(events)
