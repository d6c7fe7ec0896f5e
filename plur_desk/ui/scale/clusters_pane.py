"""The Clusters pane: near-duplicate drafts one row per cluster, its members below; one key settles a cluster."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSizePolicy,
    QTableView,
    QWidget,
)

from plur_desk.app.review.session import ChangeSet
from plur_desk.ui.built_later import BuiltLater
from plur_desk.ui.common.models import Column, RowsModel
from plur_desk.ui.common.widgets import list_and_detail, pane_side
from plur_desk.ui.review.drafts_pane import action_button

if TYPE_CHECKING:  # numpy comes with them: loaded with the first clusters, not at launch
    from plur_desk.app.scale.clusters import Cluster, Member
    from plur_desk.app.scale.review_at_scale import ScaleView


def _first(c: Cluster) -> Member:
    return c.members[0]


def _kept(c: Cluster) -> str:
    return "already approved" if c.approved else "draft"


CLUSTER_COLUMNS: list[Column[Cluster]] = [
    Column("Size", lambda c: f"×{c.size}", lambda c: (-c.size, c.representative)),
    Column("Keep", _kept, lambda c: (bool(c.approved), c.representative)),
    Column(
        "Representative",
        lambda c: _first(c).statement.replace("\n", " ⏎ "),
        lambda c: _first(c).statement.lower(),
        lambda c: _first(c).statement,
    ),
    Column("Scope", lambda c: _first(c).scope, lambda c: _first(c).scope),
    Column("Id", lambda c: c.representative, lambda c: c.representative),
]


def _role(m: Member) -> str:
    if m.joined_by == "representative":
        return "keep" + ("" if m.draft else " (approved)")
    return "duplicate" if m.draft else "approved"


MEMBER_COLUMNS: list[Column[Member]] = [
    Column("Role", _role, _role),
    Column(
        "Statement", lambda m: m.statement.replace("\n", " ⏎ "), lambda m: m.statement.lower(), lambda m: m.statement
    ),
    Column("Scope", lambda m: m.scope, lambda m: m.scope),
    Column("Similarity", lambda m: f"{m.similarity:.2f}", lambda m: m.similarity),
    Column("Joined by", lambda m: m.joined_by, lambda m: m.joined_by),
    Column("Id", lambda m: m.id, lambda m: m.id),
]


def next_step(cluster: Cluster) -> str:
    others = [m for m in cluster.drafts if m != cluster.representative]
    if cluster.approved:
        return f"D: reject all {len(others)} drafts as duplicates of {cluster.representative} (already approved)"
    return f"D: approve {cluster.representative} and reject {len(others)} other draft(s) as its duplicates"


class ClustersPane(BuiltLater, QWidget):
    def __init__(self, scale_view: Callable[[], ScaleView | None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("clustersPane")
        self.model: RowsModel[Cluster] = RowsModel(CLUSTER_COLUMNS, lambda c: c.representative, self)
        self.members: RowsModel[Member] = RowsModel(MEMBER_COLUMNS, lambda m: m.id, self)
        self._scale_view = scale_view  # the open store's ledger and clusters, once computed
        self.build_later()  # the widgets: on first use (ui/built_later.py)

    def _build(self) -> None:
        self.table = self._table("clustersTable", "Clusters of near-duplicate drafts", self.model)
        self.table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.member_table = self._table("clusterMembers", "Members of the selected cluster", self.members)
        self.member_table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.empty = QLabel("No near-duplicates among the drafts waiting.")
        self.empty.setObjectName("emptyClusters")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hint = QLabel(
            "D keeps the representative (approving it if it is a draft) and rejects every other draft as its "
            "duplicate. Shift+D keeps the member selected below instead. X takes the selected member out."
        )
        self.hint.setWordWrap(True)
        self.next_step = QLabel()
        self.next_step.setObjectName("clusterNextStep")
        self.next_step.setAccessibleName("What D does for the selected cluster")
        self.next_step.setTextFormat(Qt.TextFormat.PlainText)
        self.next_step.setWordWrap(True)
        for label in (self.hint, self.next_step):  # long text wraps; it never widens the window
            label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.buttons = QHBoxLayout()
        top = pane_side(self.hint, self.table, self.empty)
        list_and_detail(self, top, self.member_table, below=[self.next_step, self.buttons])

    def _table(self, name: str, accessible: str, model: RowsModel[Any]) -> QTableView:
        table = QTableView(self)
        table.setObjectName(name)
        table.setAccessibleName(accessible)
        table.setModel(model)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.verticalHeader().hide()
        table.setWordWrap(False)
        return table

    def _connect(self) -> None:
        self.table.selectionModel().currentRowChanged.connect(lambda *_: self._show_members())

    def add_buttons(self, actions: dict[str, QAction]) -> None:
        for action_id, key in (("clusters.settle", "D"), ("clusters.keep_member", "Shift+D"), ("clusters.split", "X")):
            self.buttons.addWidget(action_button(actions[action_id], key, primary=action_id == "clusters.settle"))
        self.buttons.addStretch(1)

    # -- content -------------------------------------------------------------------------------------------

    def set_clusters(self, clusters: list[Cluster]) -> None:
        keep = self.current_cluster()
        self.model.set_rows(clusters)
        self.empty.setVisible(not clusters)
        self.table.setVisible(bool(clusters))
        row = self.model.row_of(keep.representative) if keep else -1
        if clusters:
            self.table.selectRow(row if row >= 0 else min(self._last_row, len(clusters) - 1))
        self._show_members()

    _last_row = 0

    def refresh(self, _change: ChangeSet | None) -> None:
        scale = self._scale_view()
        self.set_clusters(scale.clusters() if scale is not None else [])  # none until computed for this store

    @staticmethod
    def concerns(_change: ChangeSet) -> bool:
        """Never by itself: the clusters come from the scale view, which every change has computed again; the pane is
        refreshed when the new view is applied (`ScaleController.apply`)."""
        return False

    def apply_search(self, text: str) -> None:
        words = text.lower().split()
        scale = self._scale_view()
        if scale is not None:
            self.set_clusters(
                [c for c in scale.clusters() if all(any(w in m.statement.lower() for m in c.members) for w in words)]
            )

    def _show_members(self) -> None:
        cluster = self.current_cluster()
        self.members.set_rows(list(cluster.members) if cluster else [])
        self.next_step.setText(next_step(cluster) if cluster else "")
        if cluster is not None:
            self._last_row = self.table.currentIndex().row()
            self.member_table.selectRow(0)

    def current_cluster(self) -> Cluster | None:
        index = self.table.currentIndex()
        return self.model.rows[index.row()] if index.isValid() and index.row() < len(self.model.rows) else None

    def current_member(self) -> Member | None:
        index = self.member_table.currentIndex()
        return self.members.rows[index.row()] if index.isValid() and index.row() < len(self.members.rows) else None

    # -- the pane protocol the main window uses ------------------------------------------------------------

    def focus_queue(self) -> None:
        self.table.setFocus(Qt.FocusReason.OtherFocusReason)

    def has_selection(self) -> bool:
        return self.current_cluster() is not None

    def current_engram_id(self) -> str | None:
        member = self.current_member()
        return member.id if member else None
