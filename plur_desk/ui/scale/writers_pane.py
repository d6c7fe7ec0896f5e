"""The Writers pane: the writer ledger as a sortable table, with the selected writer's reasons and trend."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QSizePolicy,
    QTableView,
    QWidget,
)

from plur_desk.app.review.session import ChangeSet
from plur_desk.ui.built_later import BuiltLater
from plur_desk.ui.common.models import ID_ROLE, Column, RowsModel
from plur_desk.ui.common.widgets import SafeBrowser, list_and_detail, pane_side, text_html

if TYPE_CHECKING:  # numpy comes with it: loaded with the first ledger, not at launch
    from plur_desk.app.scale.review_at_scale import ScaleView
    from plur_desk.app.scale.writer_stats import WriterStats  # with the first ledger too (its dataclasses)


def _hours(value: float | None) -> str:
    return "-" if value is None else (f"{value:.1f} h" if value < 48 else f"{value / 24:.1f} d")


def _rate(s: WriterStats) -> str:
    return f"{100 * s.rejection_rate:.0f} %" if s.decided else "-"


def _top_reason(s: WriterStats) -> str:
    if not s.rejected_by_reason:
        return ""
    reason, count = s.rejected_by_reason[0]
    return f"{reason} ({count})"


_BARS = "▁▂▃▄▅▆▇█"


def _trend(s: WriterStats) -> str:
    """Share rejected per week, oldest first, as a small chart (· for a week without decisions)."""
    return (
        "".join(_BARS[min(7, int(8 * r / (a + r)))] if a + r else "·" for a, r in s.weekly)
        + f"  {s.last30[1]} ✓ {s.last30[2]} ✗ in 30 d"
    )


def _trend_tip(s: WriterStats) -> str:
    ago = [
        f"{len(s.weekly) - 1 - i} week(s) ago" if i < len(s.weekly) - 1 else "this week" for i in range(len(s.weekly))
    ]
    weeks = [f"{when}: {a} approved, {r} rejected" for when, (a, r) in zip(ago, s.weekly, strict=True)]
    return "Rejected share per week, oldest first:\n" + "\n".join(weeks)


WRITER_COLUMNS: list[Column[WriterStats]] = [
    Column("Writer", lambda s: s.writer.label, lambda s: s.writer),
    Column("Drafts", lambda s: str(s.drafts), lambda s: s.drafts),
    Column("Approved", lambda s: str(s.approved), lambda s: s.approved),
    Column("After edit", lambda s: str(s.approved_after_edit), lambda s: s.approved_after_edit),
    Column("Rejected", lambda s: str(s.rejected), lambda s: s.rejected),
    Column("Rejection rate", _rate, lambda s: s.rejection_rate),
    Column("Top reason", _top_reason, lambda s: _top_reason(s)),
    Column("Pending", lambda s: str(s.pending), lambda s: s.pending),
    Column(
        "Unverified",
        lambda s: str(s.unverified) if s.unverified else "",
        lambda s: s.unverified,
        lambda s: (
            "Human claims (history events or review records) that no validly signed event backs: not "
            "counted as decisions"
        ),
    ),
    Column(
        "Median to decision",
        lambda s: _hours(s.median_hours_to_decision),
        lambda s: s.median_hours_to_decision if s.median_hours_to_decision is not None else -1.0,
    ),
    Column("Trend (rejected share per week)", _trend, lambda s: s.last30[2], _trend_tip),
]


class WritersPane(BuiltLater, QWidget):
    writer_chosen = Signal(object)  # WriterStats: filter the drafts queue to this writer

    def __init__(self, scale_view: Callable[[], ScaleView | None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("writersPane")
        self.model: RowsModel[WriterStats] = RowsModel(WRITER_COLUMNS, lambda s: s.writer.label, self)
        self._scale_view = scale_view  # the open store's ledger and clusters, once computed
        self.build_later()  # the widgets: on first use (ui/built_later.py)

    def _build(self) -> None:
        self.table = QTableView(self)
        self.table.setObjectName("writersTable")
        self.table.setAccessibleName("Writers and what reviewers made of their drafts")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionsClickable(True)
        header.setSortIndicatorShown(True)
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        # the last column takes what is left (its text elided, whole in the tooltip): no sideways scrolling at 1366
        header.setSectionResizeMode(len(WRITER_COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        self.empty = QLabel("No writers yet: drafts and decisions appear here once the history is read.")
        self.empty.setObjectName("emptyWriters")
        self.detail = SafeBrowser(self)
        self.detail.setObjectName("writerDetail")
        self.detail.setAccessibleName("Writer details")
        self.hint = QLabel("Click a column to sort. Return shows only this writer's drafts in the queue.")
        self.hint.setWordWrap(True)
        self.hint.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)  # never widens the window
        list_and_detail(self, pane_side(self.table, self.empty), self.detail, stretch=(3, 1), above=[self.hint])

    def _connect(self) -> None:
        self.table.horizontalHeader().sectionClicked.connect(self._sort)
        self.table.selectionModel().currentRowChanged.connect(lambda *_: self._show_detail())
        self.table.activated.connect(lambda _index: self.choose_current())

    # -- content -------------------------------------------------------------------------------------------

    def set_writers(self, stats: list[WriterStats]) -> None:
        keep = self.current_label()
        self.model.set_rows(self.model.in_user_order(stats))  # the reviewer's sort survives every refresh
        self.empty.setVisible(not stats)
        row = self.model.row_of(keep) if keep else -1
        if stats:
            self.table.selectRow(max(row, 0))
        self._show_detail()

    def refresh(self, _change: ChangeSet | None) -> None:
        scale = self._scale_view()
        self.set_writers(scale.writers() if scale is not None else [])  # none until computed for this store

    @staticmethod
    def concerns(_change: ChangeSet) -> bool:
        """Never by itself: the writers come from the scale view, which every change has computed again; the pane is
        refreshed when the new view is applied (`ScaleController.apply`)."""
        return False

    def apply_search(self, text: str) -> None:
        words = text.lower().split()
        scale = self._scale_view()
        if scale is not None:
            self.set_writers([s for s in scale.writers() if all(w in s.writer.label.lower() for w in words)])

    def _sort(self, column: int) -> None:
        descending = self.table.horizontalHeader().sortIndicatorOrder() == Qt.SortOrder.DescendingOrder
        self.model.sorted_by(column, descending)

    def current(self) -> WriterStats | None:
        index = self.table.currentIndex()
        return self.model.rows[index.row()] if index.isValid() and index.row() < len(self.model.rows) else None

    def current_label(self) -> str | None:
        index = self.table.currentIndex()
        return str(index.siblingAtColumn(0).data(ID_ROLE)) if index.isValid() else None

    def choose_current(self) -> None:
        stats = self.current()
        if stats is not None:
            self.writer_chosen.emit(stats)

    def _show_detail(self) -> None:
        s = self.current()
        if s is None:
            self.detail.setHtml("")
            return
        reasons = "".join(f"<li>{text_html(r)}: {n}</li>" for r, n in s.rejected_by_reason) or "<li>none</li>"
        drafts, approved, rejected, median = s.last30
        self.detail.setHtml(
            f"<p><b>{text_html(s.writer.label)}</b> — {text_html(s.line())}</p>"
            f"<p>{s.created} engrams created in the history; {s.drafts} drafts reviewed or waiting.</p>"
            f"<p>Last 30 days: {drafts} new drafts, {approved} approved, {rejected} rejected, "
            f"median {_hours(median)} to a decision.</p><p>Rejections by reason:</p><ul>{reasons}</ul>"
        )

    # -- the pane protocol the main window uses ------------------------------------------------------------

    def focus_queue(self) -> None:
        self.table.setFocus(Qt.FocusReason.OtherFocusReason)

    def has_selection(self) -> bool:
        return self.current() is not None

    def current_engram_id(self) -> str | None:
        return None
