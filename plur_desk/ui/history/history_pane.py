"""The History pane: every event, newest first, fetched in pages; filters; full JSON; per-engram timelines; export."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer
from PySide6.QtGui import QAction, QBrush, QColor, QFont, QFontMetrics
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLineEdit, QSizePolicy, QWidget

from plur_desk.app.history.history_index import HistoryFilter, actor_kind, actor_name
from plur_desk.app.review.session import ChangeSet
from plur_desk.domain.lint import reveal
from plur_desk.domain.trust import Trust, TrustState
from plur_desk.infra.jobs import cancelled
from plur_desk.ui.common import theme
from plur_desk.ui.common.models import OneCallPerCell
from plur_desk.ui.common.widgets import (
    SafeBrowser,
    list_and_detail,
    make_table,
    pane_side,
    plain_label,
    text_html,
    tooltip_text,
)
from plur_desk.ui.review.drafts_pane import action_button
from plur_desk.ui.workspace import Workspace

PAGE = 200
TRUST_FILTERS: dict[str, frozenset[TrustState]] = {
    "any trust": frozenset(),
    "signed human decisions": frozenset({TrustState.VALID}),
    "unverified human claims": frozenset(set(TrustState) - {TrustState.VALID, TrustState.NOT_HUMAN}),
    "unsigned human claims": frozenset({TrustState.UNSIGNED}),
    "invalid signatures": frozenset({TrustState.INVALID}),
    "unknown signers": frozenset({TrustState.UNKNOWN_SIGNER}),
    "keys you have not trusted": frozenset({TrustState.UNTRUSTED_KEY}),
    "forged or look-alike names": frozenset({TrustState.FOREIGN_KEY_FOR_IDENTITY, TrustState.CONFUSABLE_IDENTITY}),
}
HEADERS = ("When (UTC)", "Actor", "Event", "Engram", "Summary")
ACTOR_FILTERS = {"all actors": "", "human": "human", "agent or unknown kind": "agent", "no actor named": "unknown"}
DEBOUNCE_MS = 250
MOVED = ("statement", "commitment", "status")  # an undo's fields named in its summary (the rest are bookkeeping)
FILTER_OFF_SCREEN = 50_000  # history lines from which a filter runs off the GUI thread (a scan takes ~100 ms)


def value_text(value: object) -> str:
    """A field value as a reader expects it: strings as they are, nothing as 'none', the rest as JSON."""
    if value is None:
        return "none"
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return ", ".join(f"{k} {value_text(v)}" for k, v in value.items()) or "none"
    return json.dumps(value, ensure_ascii=False)


def _short(text: str) -> str:
    return text if len(text) < 80 else text[:77] + "…"


def summary_of(event: dict[str, object]) -> str:
    data = event.get("data") if isinstance(event.get("data"), dict) else {}
    assert isinstance(data, dict)
    if data.get("field") == "statement":
        return f"edit: “{_short(value_text(data.get('to')))}”"
    verb, fields = data.get("action"), data.get("fields")
    if verb in ("undo", "redo") and isinstance(fields, dict):  # what was taken back (or done again), not just "undo"
        moved = [
            f"{k}: {value_text(v.get('from'))} → {value_text(v.get('to'))}" for k, v in fields.items() if k in MOVED
        ]
        return " · ".join(
            _short(p) for p in [f"{verb} of {value_text(data.get('label') or data.get(f'{verb}s'))}", *moved]
        )
    parts = [value_text(data[k]) for k in ("action", "reason", "tension_id") if data.get(k) not in (None, "")]
    if data.get("field") and "to" in data:
        parts.append(f"{value_text(data['field'])}: {value_text(data.get('from'))} → {value_text(data['to'])}")
    elif data.get("to") not in (None, ""):
        parts.append(value_text(data["to"]))
    return " · ".join(_short(p) for p in parts)


def actor_text(event: dict[str, object]) -> str:
    """Who wrote the event, saying only what the event says: a missing `kind` is 'unknown kind', not 'agent'."""
    actor = event.get("actor")
    if not isinstance(actor, dict):
        return "no actor"
    kind = actor.get("kind")
    label = value_text(kind) if isinstance(kind, str) and kind else "unknown kind"
    name = actor_name(event)
    return f"{label} · {name}" if name else label


def parse_day(text: str, end: bool) -> datetime | None:
    """A YYYY-MM-DD day (its start, or its last second); ValueError for anything else."""
    text = text.strip()
    if len(text) != 10:
        raise ValueError(text)
    day = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
    return day.replace(hour=23, minute=59, second=59) if end else day


class HistoryModel(OneCallPerCell, QAbstractTableModel):
    """A filtered, newest-first list shown a page at a time (canFetchMore/fetchMore)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.events: Sequence[dict[str, object]] = []
        self.shown = 0
        self.trust: Callable[[dict[str, object]], Trust] | None = None
        self._trusts: dict[int, Trust | None] = {}  # by row, until the next reset
        self.bold = QFont()
        self.bold.setBold(True)

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

    def text(self, event: dict[str, object], column: int) -> str:
        if column == 0:
            return str(event.get("timestamp", ""))[:19].replace("T", " ")
        if column == 1:
            return actor_text(event)
        if column == 2:
            return str(event.get("event", ""))
        if column == 3:
            return str(event.get("engram_id", ""))
        return summary_of(event)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= self.shown:
            return None
        event = self.events[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            text = self.text(event, index.column())
            if index.column() == 1:
                trust = self._trust(index.row(), event)
                if trust is not None and trust.state is not TrustState.NOT_HUMAN:
                    head, sep, tail = text.partition(" · ")
                    text = f"{head} ({trust.label}){sep}{tail}"
            return reveal(text)
        if role == Qt.ItemDataRole.FontRole and actor_kind(event) == "human":
            return self.bold
        if role in (Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.ForegroundRole) and index.column() == 1:
            return self._trust_hint(self._trust(index.row(), event), role)
        if role == Qt.ItemDataRole.UserRole:
            return event
        return None

    @staticmethod
    def _trust_hint(trust: Trust | None, role: int) -> Any:
        """Tooltip with the verdict's reason; red text (beside the label, never the only cue) when unverified."""
        if trust is None or not trust.suspicious:
            return tooltip_text(trust.detail) if trust and role == Qt.ItemDataRole.ToolTipRole else None
        if role == Qt.ItemDataRole.ToolTipRole:
            return tooltip_text(f"Not a verified human decision: {trust.detail}")
        return QBrush(QColor(theme.color("danger")))

    def _trust(self, row: int, event: dict[str, object]) -> Trust | None:
        """Verified once per row shown (every role of every repaint asks)."""
        if self.trust is None or actor_kind(event) != "human":
            return None
        if row not in self._trusts:
            self._trusts[row] = self.trust(event)
        return self._trusts[row]

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        self.painting()  # a header's repaint asks each section for several roles
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole and section < len(HEADERS):
            return HEADERS[section]
        return None


class HistoryPane(QWidget):
    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("historyPane")
        self.workspace = workspace
        self.model = HistoryModel(self)
        self._text = ""
        self._debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._build()
        self._connect()

    def _field(self, placeholder: str, name: str, sample: str = "") -> QLineEdit:
        field = QLineEdit()
        field.setPlaceholderText(placeholder)
        field.setAccessibleName(name)
        if sample:  # wide enough for what it must show whole (an engram id); the rest may shrink
            field.setMinimumWidth(QFontMetrics(field.font()).horizontalAdvance(sample) + 24)
        return field

    def _build(self) -> None:
        self.type_filter = QComboBox()
        self.type_filter.setAccessibleName("Event type")
        self.actor_filter = QComboBox()
        self.actor_filter.setAccessibleName("Actor kind")
        self.actor_filter.addItems(list(ACTOR_FILTERS))
        self.trust_filter = QComboBox()
        self.trust_filter.setObjectName("historyTrust")
        self.trust_filter.setAccessibleName("Signature trust")
        self.trust_filter.addItems(list(TRUST_FILTERS))
        self.reviewer = self._field("reviewer", "Reviewer")
        self.engram = self._field("engram id", "Engram id", "ENG-2026-12-02-001-abc")
        self.engram.setObjectName("historyEngram")
        self.since = self._field("from YYYY-MM-DD", "From date")
        self.until = self._field("to YYYY-MM-DD", "To date")
        self.count = plain_label()
        self.count.setObjectName("historyCount")
        self.count.setWordWrap(True)
        self.count.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)  # never widens the window
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
        when = QFontMetrics(self.model.bold).horizontalAdvance("2026-12-02 23:59:59") + 28
        self.table = make_table(self.model, "historyTable", "History events", multi=False, widths=(when, 230, 170, 170))
        self.empty = plain_label("No events match these filters.")
        self.empty.setObjectName("historyEmpty")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.hide()
        self.detail = SafeBrowser()
        self.detail.setObjectName("historyDetail")
        self.detail.setAccessibleName("Event details")
        self.buttons = QHBoxLayout()
        top, bottom = pane_side(self.table, self.empty), pane_side(self.detail, self.buttons)
        list_and_detail(self, top, bottom, stretch=(3, 2), above=[filters])

    def _connect(self) -> None:
        for widget in (self.type_filter, self.actor_filter, self.trust_filter):
            widget.currentIndexChanged.connect(lambda _i: self.refresh(None))
        for field in (self.reviewer, self.engram, self.since, self.until):
            field.textChanged.connect(lambda _t: self._debounce.start())  # applies as you type
            field.returnPressed.connect(lambda: self.refresh(None))
        self._debounce.timeout.connect(lambda: self.refresh(None))
        self.table.selectionModel().currentRowChanged.connect(lambda *_: self._selected())

    def add_buttons(self, actions: dict[str, QAction]) -> None:
        self.buttons.addWidget(action_button(actions["history.export_csv"], ""))
        self.buttons.addWidget(action_button(actions["history.export_jsonl"], ""))
        self.buttons.addWidget(action_button(actions["history.timeline"], "Ctrl+T"))
        revert = action_button(actions["history.revert_change"], "R")
        revert.setText("Revert Change…   R")  # the pane fits a 800-pixel screen (its menu entry keeps the long name)
        self.buttons.addWidget(revert)
        self.buttons.addStretch(1)

    def _day(self, field: QLineEdit, end: bool, problems: list[str]) -> datetime | None:
        text = field.text().strip()
        day = None
        if text:
            try:
                day = parse_day(text, end)
            except ValueError:
                problems.append(f"“{text}” is not a date (YYYY-MM-DD)")
        field.setProperty("invalid", bool(text) and day is None)
        field.setToolTip(problems[-1] if text and day is None else "")
        field.setStyleSheet(f"border: 2px solid {theme.color('danger')};" if text and day is None else "")
        return day

    def current_filter(self, problems: list[str] | None = None) -> HistoryFilter:
        problems = [] if problems is None else problems
        kind = ACTOR_FILTERS.get(self.actor_filter.currentText(), "")
        kind_text = self.type_filter.currentText()
        return HistoryFilter(
            types=frozenset() if not kind_text or kind_text == "all events" else frozenset({kind_text}),
            actor_kinds=frozenset({kind}) if kind else frozenset(),
            reviewer=self.reviewer.text().strip(),
            engram_id=self.engram.text().strip(),
            text=self._text,
            since=self._day(self.since, False, problems),
            until=self._day(self.until, True, problems),
            trust=TRUST_FILTERS.get(self.trust_filter.currentText(), frozenset()),
        )

    def refresh(self, change: ChangeSet | None) -> None:
        self._debounce.stop()
        session = self.workspace.session
        if session is None:
            return
        index = session.history
        types = ["all events", *index.types()]
        if [self.type_filter.itemText(i) for i in range(self.type_filter.count())] != types:
            current = self.type_filter.currentText()
            self.type_filter.blockSignals(True)
            self.type_filter.clear()
            self.type_filter.addItems(types)
            self.type_filter.setCurrentText(current if current in types else "all events")
            self.type_filter.blockSignals(False)
        problems: list[str] = []
        flt = self.current_filter(problems)
        if flt.empty or len(index.lines) < FILTER_OFF_SCREEN:
            self.workspace.jobs.cancel("history")  # a filter still being read would replace this view when done
            self._show_events(index.newest_first(flt), problems)
            return
        self.count.setText("filtering…")  # a long history is filtered off the GUI thread; a newer filter wins
        self.workspace.jobs.read(
            "history",
            lambda: index.newest_first(flt, stale=cancelled),
            lambda events: self._show_events(events, problems),
            one_at_a_time=True,  # a filter a newer one made stale stops early; only the newest waits for it
        )

    def _show_events(self, events: Any, problems: list[str]) -> None:
        session = self.workspace.session
        if session is None:
            return
        index = session.history
        self.model.trust = index.trust
        self.model.set_events(events)
        # a month file changed while filtering: the history is read again, then filtered again
        partial = "changed" if getattr(events, "changed", False) else index.partial
        self.count.setText(self._count_text(len(events), index.malformed_count(), partial, problems))
        self.empty.setVisible(not events)
        self.table.setVisible(bool(events))
        if events:
            self.table.selectRow(0)
        self._selected()

    @staticmethod
    def _count_text(shown: int, malformed: int, partial: bool | str, problems: list[str]) -> str:
        parts = [f"{shown:,} event{'' if shown == 1 else 's'}"]
        if malformed:
            parts.append(f"{malformed} malformed line{'' if malformed == 1 else 's'}")
        if partial == "changed":
            parts.append("the history changed on disk: reading it again…")
        elif partial:
            parts.append("reading older months…")
        parts += [f"✖ {p}, ignored" for p in problems]
        return " · ".join(parts)

    def concerns(self, change: ChangeSet) -> bool:
        """Events were written or read, or the engram the selected event names changed (the detail shows it now)."""
        return change.events > 0 or self.current_engram_id() in change.engrams

    def apply_search(self, text: str) -> None:
        self._text = text.strip()
        self.refresh(None)

    def show_engram(self, engram_id: str) -> None:
        """The engram's whole timeline: every other filter is cleared, so no actor or date hides part of it."""
        for widget in (self.type_filter, self.actor_filter):
            widget.blockSignals(True)
            widget.setCurrentIndex(0)
            widget.blockSignals(False)
        for field in (self.reviewer, self.since, self.until, self.engram):
            field.blockSignals(True)
            field.setText(engram_id if field is self.engram else "")
            field.blockSignals(False)
        self._text = ""
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
        event, session = self.current_event(), self.workspace.session
        if event is None or session is None:
            self.detail.setHtml("")
            return
        clean = {k: v for k, v in event.items() if not k.startswith("_")}
        view = session.view(str(event.get("engram_id", "")))
        about = (
            f"<p style='white-space:pre-wrap'><b>Engram now:</b> {text_html(view.statement)} "
            f"({text_html(view.status)}, {text_html(view.commitment)})</p>"
            if view is not None
            else ""
        )
        month = event.get("_month")
        where = (f"history/{month}.jsonl" if month else "history") + (
            f", line {event['_line']}" if event.get("_line") else ""
        )
        trust = session.history.trust(event)
        verdict = (
            f"<p><b>{text_html(trust.label)}</b>: {text_html(trust.detail)}</p>"
            if trust.state is not TrustState.NOT_HUMAN
            else ""
        )
        self.detail.setHtml(
            f"<p><small>{text_html(where)}</small></p>{verdict}{about}"
            f"<pre>{text_html(json.dumps(clean, indent=2, ensure_ascii=False))}</pre>"
        )

    # -- export ----------------------------------------------------------------------------------------------

    def _export(self, fmt: str) -> None:
        from PySide6.QtWidgets import QFileDialog  # made on first use, not at launch

        from plur_desk.ui.history.history_export import FORMATS, format_of_filter, with_suffix  # on first use

        dialog = QFileDialog(self, "Export history view", f"plur-history.{fmt}")
        dialog.setObjectName("exportDialog")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setNameFilters(list(FORMATS.values()))
        dialog.selectNameFilter(FORMATS[fmt])
        if dialog.exec() != QFileDialog.DialogCode.Accepted or not dialog.selectedFiles():
            return
        chosen = format_of_filter(dialog.selectedNameFilter())
        self.export_to(with_suffix(dialog.selectedFiles()[0], chosen), chosen)

    def export_csv(self) -> None:
        self._export("csv")

    def export_jsonl(self) -> None:
        self._export("jsonl")

    def export_to(self, path: str, fmt: str) -> int | None:
        """Write the whole filtered view (not only the fetched pages); the outcome is shown in the window."""
        from plur_desk.ui.history.history_export import write_events  # on first use: not needed before the first draft

        messages = self.workspace.messages
        try:
            count = write_events(path, self.model.events, fmt)
        except OSError as error:
            messages.error(f"Could not export the history view to {path}: {error.strerror or error}")
            return None
        messages.show(f"Exported {count:,} event{'' if count == 1 else 's'} to {path} ({fmt.upper()}).")
        messages.status(f"Exported {count:,} events to {path}", 8000)
        return count
