"""Review at scale in the window: risk order and reasons in the queue, the writer's line, clusters and writers.

The ledger and the clusters are computed off the GUI thread on a runner of their own, from a snapshot taken here;
decisions (settling a cluster) go through the session on the window's serial runner like every other write.
"""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, QTimer
from PySide6.QtWidgets import QWidget

from plur_desk.app.rows import DraftRow
from plur_desk.app.scale import RiskRow, ScaleView
from plur_desk.app.writer_stats import WriterKey, WriterStats
from plur_desk.domain.risk import factors_help
from plur_desk.infra.errors import ActionRefused
from plur_desk.infra.paths import cache_dir
from plur_desk.ui.clusters_pane import ClustersPane
from plur_desk.ui.draft_actions import DraftActionsMixin
from plur_desk.ui.models import Column, DraftColumn
from plur_desk.ui.runner import Runner
from plur_desk.ui.widgets import text_html
from plur_desk.ui.writers_pane import WritersPane

RISK_COLUMN = len(DraftColumn)  # appended after the queue's own columns


class ScaleMixin(DraftActionsMixin):
    semantic_clusters = True  # tests may turn embeddings off

    def _scale_panes(self) -> dict[str, QWidget]:
        """The Clusters and Writers tabs, added after the others, and what computes their content."""
        self.clusters = ClustersPane(self)
        self.writers = WritersPane(self)
        self.tabs.addTab(self.clusters, "Clusters")
        self.tabs.addTab(self.writers, "Writers")
        self._init_scale()
        return {"clusters": self.clusters, "writers": self.writers}

    def _init_scale(self) -> None:
        self.scale: ScaleView | None = None
        self.risk: dict[str, RiskRow] = {}
        self.risk_order: bool | None = None  # None: the default for the store's size
        self.writer_filter: WriterKey | None = None
        self.scale_runner = Runner(self)
        self._scale_timer = QTimer(self, singleShot=True, interval=250)
        self._scale_timer.timeout.connect(self._compute_scale)
        self._scale_again = False
        self._writer_line_shown: tuple[str, str] = ("", "")
        self.drafts.model.columns.append(Column("Risk", self._risk_text, self._risk_sort, self._risk_tip))
        self.drafts.table.setColumnWidth(RISK_COLUMN, 260)
        self.writers.writer_chosen.connect(self._filter_by_writer)

    # -- computing -----------------------------------------------------------------------------------------

    def schedule_scale(self) -> None:
        self._scale_timer.start()

    def _compute_scale(self) -> None:
        session = self.session
        if session is None or not session.history.loaded:
            return
        if self.scale_runner.pending:
            self._scale_again = True
            return
        scale = self.scale if self.scale is not None and self.scale.session is session else None
        engrams, lines, now = list(session.all_engrams()), session.history.lines, session.now()
        semantic, level = self.semantic_clusters, self.settings.default_level

        def work() -> ScaleView:  # the model and the vector cache load here too, never on the GUI thread
            view = scale or ScaleView.open(session, cache_dir(), semantic=semantic)
            view.refresh_from(engrams, lines, now, level)
            return view

        self.scale_runner.submit(work, self._scale_done, self._failed)

    def _scale_done(self, view: object) -> None:
        assert isinstance(view, ScaleView)
        if view.session is not self.session:
            return  # another store was opened meanwhile
        self.scale = view
        if self._scale_again:
            self._scale_again = False
            self.schedule_scale()
        self.apply_scale()

    def apply_scale(self) -> None:
        """Show the new ledger and clusters: the queue's order and risk column, and the two panes."""
        session, scale = self.session, self.scale
        if session is None or scale is None:
            return
        if self.risk_order is None and scale.default_order() == "risk":
            self.risk_order = True
        self.drafts.queue_order_column(RISK_COLUMN if self.risk_order else DraftColumn.AGE)
        self._reorder_keeping_selection(self.order_drafts(list(self.drafts.model.rows) or session.drafts()))
        current = self.tabs.currentWidget()
        for pane in (self.clusters, self.writers):
            if pane is current:
                pane.refresh(None)
            else:
                self._stale.add(pane)  # refreshed when shown: a hidden pane costs nothing here
        row = self.drafts.current()
        if row is not None and (row.id, scale.writer_line(row.id)) != self._writer_line_shown:
            self._draft_selected()  # only when the writer's line changed: the detail costs a similarity search

    # -- the drafts queue ----------------------------------------------------------------------------------

    def _reorder_keeping_selection(self, rows: list[DraftRow]) -> None:
        """New risk values arrive while the reviewer works: keep the current draft and a multi-selection."""
        model = self.drafts.model
        rows = self.drafts.in_view_order(rows)
        if [r.id for r in rows] == [r.id for r in model.rows]:
            self.drafts.table.viewport().update()  # only the Risk column's text changed: repaint, no model signal
            return
        selected, current = self.drafts.selected_ids(), self.drafts.current_id()
        self.drafts.set_rows(rows, keep=current)
        selection = self.drafts.table.selectionModel()
        flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
        for engram_id in selected:
            row = model.row_of(engram_id)
            if row >= 0 and engram_id != current:
                selection.select(model.index(row, 0), flags)

    def order_drafts(self, rows: list[DraftRow]) -> list[DraftRow]:
        """Risk order (when on) and the writer filter, over rows already narrowed by the search box."""
        if self.writer_filter is not None and self.session is not None:
            session, wanted = self.session, self.writer_filter
            rows = [r for r in rows if WriterKey.of((session.engram(r.id) or {}).get("attribution")) == wanted]
        if self.scale is None:
            return rows
        ranked = self.scale.risk_rows(rows, self.settings.default_level, "risk" if self.risk_order else "age")
        self.risk = {r.row.id: r for r in ranked}
        return [r.row for r in ranked]

    def _risk_text(self, row: DraftRow) -> str:
        risk = self.risk.get(row.id)
        if risk is None:
            return ""
        cluster = f"×{risk.cluster_size} cluster · " if risk.cluster_size > 1 else ""
        top = [text for _name, points, text in risk.risk.parts[:3] if points > 0]
        return f"{risk.risk.score:.2f} · {cluster}{'; '.join(top)}"

    def _risk_sort(self, row: DraftRow) -> object:
        risk = self.risk.get(row.id)
        return -(risk.risk.score if risk else 0.0)

    def _risk_tip(self, row: DraftRow) -> str:
        risk = self.risk.get(row.id)
        parts = "\n".join(f"  {name}: +{points:.2f} ({text})" for name, points, text in risk.risk.parts) if risk else ""
        return f"{factors_help()}\n\nThis draft:\n{parts}" if parts else factors_help()

    def queue_rows(self) -> list[DraftRow]:
        """The drafts queue in its order (risk or age, the writer filter); new scale results are on their way."""
        self.schedule_scale()
        return self.order_drafts(self.session.drafts()) if self.session is not None else []

    def end_session(self) -> None:
        self.scale_runner.wait(10000)  # never leave the ledger or the clusters half-built behind a closed store

    def toggle_risk_order(self) -> None:
        self.risk_order = not self.risk_order
        self.drafts.follow_queue_order(RISK_COLUMN if self.risk_order else DraftColumn.AGE)
        self.statusBar().showMessage("Queue in risk order" if self.risk_order else "Queue in age order", 3000)
        self.refresh_all()

    def _draft_selected(self) -> None:
        super()._draft_selected()
        row, scale = self.drafts.current(), self.scale
        line = scale.writer_line(row.id) if scale is not None and row is not None else ""
        self._writer_line_shown = (row.id if row is not None else "", line)
        if line:
            self.drafts.detail.append(f"<p><b>Writer:</b> {text_html(line)}</p>")

    def _filter_by_writer(self, stats: object) -> None:
        assert isinstance(stats, WriterStats)
        self.writer_filter = None if self.writer_filter == stats.writer else stats.writer
        shown = self.writer_filter is not None
        self.drafts.show_banner(f"Showing only drafts by {stats.writer.label}." if shown else "")
        self.show_drafts()
        self.refresh_all()

    # -- cluster actions -----------------------------------------------------------------------------------

    def settle_cluster(self, keep_member: bool = False) -> None:
        cluster, scale = self.clusters.current_cluster(), self.scale
        if cluster is None or scale is None or self.session is None:
            return
        member = self.clusters.current_member() if keep_member else None
        keep = member.id if member is not None else cluster.representative
        level = self.settings.default_level
        self.run_change(lambda: scale.settle(cluster, keep, level, refresh=False))

    def settle_cluster_keeping_member(self) -> None:
        self.settle_cluster(keep_member=True)

    def split_cluster(self) -> None:
        cluster, member, scale = self.clusters.current_cluster(), self.clusters.current_member(), self.scale
        if cluster is None or member is None or scale is None:
            return
        try:
            self.scale_runner.submit(
                lambda: scale.split(cluster, member.id), lambda _r: self.apply_scale(), self._failed
            )
        except ActionRefused as exc:
            self.show_error(str(exc))

    def show_clusters(self) -> None:
        self.tabs.setCurrentWidget(self.clusters)

    def show_writers(self) -> None:
        self.tabs.setCurrentWidget(self.writers)
