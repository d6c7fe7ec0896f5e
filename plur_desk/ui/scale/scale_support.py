"""Review at scale in the window: risk order and reasons in the queue, the writer's line, clusters and writers.

The ledger and the clusters are computed off the GUI thread on a lane of their own, from a snapshot taken here;
decisions (settling a cluster) go through the session on the session's lane like every other write.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import compress, count
from operator import attrgetter, is_, is_not
from typing import TYPE_CHECKING, NamedTuple

from PySide6.QtCore import QObject, QTimer, Signal

from plur_desk.app.review.rows import DraftRow
from plur_desk.domain.changes import ChangeSet
from plur_desk.domain.risk import factors_help
from plur_desk.infra.errors import ActionRefused
from plur_desk.infra.memory import gc_paused
from plur_desk.ui.common.jobs import SCALE, SESSION
from plur_desk.ui.common.models import Column, DraftColumn
from plur_desk.ui.navigation import NavigationController
from plur_desk.ui.review.drafts_pane import DraftsPane
from plur_desk.ui.scale.clusters_pane import ClustersPane
from plur_desk.ui.scale.writers_pane import WritersPane
from plur_desk.ui.workspace import Workspace

if TYPE_CHECKING:  # the clusters' modules (numpy among them) load with the first computation, off the GUI thread
    from plur_desk.app.scale.review_at_scale import RiskRow, ScaleView
    from plur_desk.app.scale.writer_stats import WriterKey  # with the first ledger (its dataclasses)


class OrderState(NamedTuple):
    view: object  # the scale view and its ranking (compared as objects: each refresh makes a new ranking)
    ranking: object
    by_risk: bool
    writer: WriterKey | None
    level: str

    def holds(self, other: OrderState | None) -> bool:
        return other is not None and self.view is other.view and self.ranking is other.ranking and self[2:] == other[2:]


RISK_COLUMN = len(DraftColumn)  # appended after the queue's own columns
_ID = attrgetter("id")
SETTLE_MS = 1000
APPLY_RETRY_MS, APPLY_TRIES = 100, 20  # a new view waits for a write under way, at most 2 s
STEP_RESTARTS = 3  # a view whose list keeps moving under its steps is then applied in one turn
KEEP_PLACE_ABOVE = 50  # selected rows: more than this, and a new risk order waits until the selection ends


class _Staged(NamedTuple):
    """A view's order of the listed rows, made in one turn, shown in the next if the list is still as it was."""

    rows: list[DraftRow]
    shown: dict[str, RiskRow]
    version: int
    view: ScaleView


class ScaleController(QObject):
    """The writer ledger and the clusters of the open store, the queue's risk order, and the cluster actions."""

    semantic_clusters = True  # tests may turn embeddings off
    queue_changed = Signal()  # the queue's order or filter changed: fill it again
    writer_line_changed = Signal()  # the current draft's writer line changed: draw its detail again
    order_shown = Signal(int)  # the listed rows were put in the current order (the list's version before)

    def __init__(
        self,
        workspace: Workspace,
        drafts: DraftsPane,
        clusters: ClustersPane,
        writers: WritersPane,
        navigation: NavigationController,
    ) -> None:
        super().__init__(workspace)
        self.workspace = workspace
        self._drafts, self._clusters, self._writers = drafts, clusters, writers
        self._navigation = navigation
        self._view: ScaleView | None = None
        self.risk: dict[str, RiskRow] = {}
        self.risk_order: bool | None = None  # None: the default for the store's size
        self.writer_filter: WriterKey | None = None
        # after the last change: a run of decisions is computed once, when the reviewer pauses (the computation is
        # seconds of Python over the whole store at 50k, competing with the window for the interpreter lock)
        self._timer = QTimer(self, singleShot=True, interval=SETTLE_MS)
        self._timer.timeout.connect(self._compute)
        # a new view waits for a write under way (`_apply_when_quiet`): one timer, so views that arrive meanwhile
        # are applied once, and none fires after the controller is gone
        self._apply_timer = QTimer(self, singleShot=True, interval=APPLY_RETRY_MS)
        self._apply_timer.timeout.connect(self._apply_when_quiet)
        self._step_timer = QTimer(self, singleShot=True, interval=0)  # the next step of applying a view
        self._step_timer.timeout.connect(self._next_step)
        self._staged: _Staged | None = None
        self._restarts = 0
        self._apply_waited = 0
        self._again = False
        self._dirty = True  # the store changed since the last computation was started (or none was)
        workspace.changes.subscribe(self._changed)
        self.writer_line_shown: tuple[str, str] = ("", "")
        drafts.model.columns.append(Column("Risk", self._risk_text, self._risk_sort, self._risk_tip))
        drafts.table.setColumnWidth(RISK_COLUMN, 260)
        writers.writer_chosen.connect(self._filter_by_writer)
        self._order_waiting = False  # a new order was held back while a large selection lasted
        drafts.selection_changed.connect(self._selection_changed)

    @property
    def view(self) -> ScaleView | None:
        """The open store's ledger and clusters; None until computed for it. A view of a store the window left is
        never shown, ranked by or acted on (settling a cluster listed from it would write to the store left)."""
        view = self._view
        return view if view is not None and view.session is self.workspace.session else None

    @view.setter
    def view(self, view: ScaleView | None) -> None:
        self._view = view

    # -- computing -----------------------------------------------------------------------------------------

    @property
    def settled(self) -> bool:
        """No computation under way and none of its results waiting to be shown. A computed view is taken as soon
        as it arrives (a fresh listing of the queue orders by it) but put on the list only later: after the write
        under way (up to 2 s) and then in steps of the event loop. Until then the list is in the order before it,
        so only a settled controller's list is what a fresh listing gives. Not counted: a computation merely
        scheduled (the list is in the current view's order), and a new order held back while a large selection
        lasts (it waits for the reviewer, not for the window)."""
        return not (
            self.workspace.jobs.pending(SCALE)
            or self._staged is not None
            or self._step_timer.isActive()
            or self._apply_timer.isActive()
        )

    def schedule(self) -> None:
        self._timer.start()

    def _changed(self, change: ChangeSet) -> None:
        if change.store_changed:  # not for the queue shown in another order (which this controller asks for)
            self.store_changed()

    def store_changed(self) -> None:
        """The store changed (a decision, a reload, the load completing): compute again once things settle. Showing
        the queue again for any other reason (a search, a new order) computes nothing."""
        self._dirty = True
        self.schedule()

    def _compute(self) -> None:
        session = self.workspace.session
        if session is None or not session.history.loaded:
            return
        if self.workspace.jobs.pending(SCALE):
            self._again = True
            return
        self._dirty = False
        scale = self.view  # (only ever the open store's)
        engrams, rows, lines, now = session.engrams_by_id(), session.queue.rows(), session.history.lines, session.now()
        semantic, level = self.semantic_clusters, self.workspace.settings.default_level
        cache_root = self.workspace.cache_root

        def work() -> ScaleView:  # the model and the vector cache load here too, never on the GUI thread
            from plur_desk.app.scale.review_at_scale import ScaleView

            # The collector is paused while the view computes, and what it built is then kept out of the passes: a
            # young pass on this thread walked the new graph's large dicts whole, 9-14 ms holding the interpreter
            # (the window's stall, after each decision and while a store loads). A first computation (or the
            # clusters' move to embeddings) makes ~300,000 lasting objects at 50,000 engrams; the first idle pass
            # walked them in 166 ms. Garbage the view leaves in cycles waits for the idle full pass.
            with gc_paused():
                view = scale or ScaleView.open(session, cache_root, semantic=semantic, wait_for_vectors=True)
                view.refresh_from(engrams, lines, now, level, rows)
            return view

        self.workspace.jobs.submit(work, self._done, self.workspace.fail, lane=SCALE, same_store=True)

    def _done(self, view: object) -> None:
        from plur_desk.app.scale.review_at_scale import ScaleView

        assert isinstance(view, ScaleView)  # (of the open store: `same_store`)
        self.view = view
        if view.stale:  # a month file changed under the snapshot: results as they were, computed again once the
            self._dirty = True  # window's poll has the history read again
            self.schedule()
            return
        if self._again:
            self._again = False
            self.schedule()
        self._apply_waited = 0
        self._apply_when_quiet()

    def _apply_when_quiet(self) -> None:
        """Apply the new view once no decision is being written: reordering the queue and listing the two panes
        is window work over every draft, which, done while a bulk approval's write ran beside it, stalled the
        window 80-140 ms (a view computed from the decisions before). At most APPLY_TRIES waits."""
        if self._apply_waited < APPLY_TRIES and self.workspace.jobs.pending(SESSION):
            self._apply_waited += 1
            self._apply_timer.start()
            return
        self._apply_timer.stop()
        self._restarts = 0
        self._order_step()

    def apply(self) -> None:
        """Show the new ledger and clusters: the queue's order and risk column, and the two panes (at once)."""
        staged = self._ordered()
        if staged is not None:
            self.reorder_keeping_selection(staged.rows, staged.shown)
            self._panes_step()

    def _ordered(self) -> _Staged | None:
        session, scale = self.workspace.session, self.view
        if session is None or scale is None:
            return None
        if self.risk_order is None and scale.default_order() == "risk":
            self.risk_order = True
        self._drafts.queue_order_column(RISK_COLUMN if self.risk_order else DraftColumn.AGE)
        shown, model = self.risk, self._drafts.model
        # the rows listed (the queue narrowed by a search or a writer): none listed stays none, whatever the queue
        return _Staged(self.order_drafts(list(model.rows)), shown, model.version, scale)

    # A view arriving by itself is applied in three turns of the event loop, so keys and paints come between: in
    # one turn it took the window 14-17 ms at 9,587 drafts (ordering 4-5 ms, the list's new order 6-8 ms, the
    # panes and the writer line 3-4 ms), the window's longest tick while History was filtered.

    def _order_step(self) -> None:
        self._staged = self._ordered()
        if self._staged is not None:
            self._step_timer.start()

    def _next_step(self) -> None:
        staged, self._staged = self._staged, None
        if staged is None:
            self._panes_step()
            return
        if staged.view is not self.view or staged.version != self._drafts.model.version:
            self._restarts += 1  # the list or the view moved meanwhile (a decision): ordered again
            if self._restarts <= STEP_RESTARTS:
                self._order_step()
            else:
                self.apply()
            return
        self.reorder_keeping_selection(staged.rows, staged.shown)
        self._step_timer.start()  # then the panes

    def _panes_step(self) -> None:
        scale = self.view
        if scale is None:
            return
        self._navigation.refresh_panes(None, [self._clusters, self._writers])
        row = self._drafts.current()
        if row is not None and (row.id, scale.writer_line(row.id)) != self.writer_line_shown:
            self.writer_line_changed.emit()  # only when it changed: the detail costs a similarity search

    def _selection_changed(self) -> None:
        if self._order_waiting and len(self._drafts.selected_ids()) <= KEEP_PLACE_ABOVE:
            # the order held back, now that the large selection ended; with this controller as the timer's context,
            # dropped if the window is gone before it fires (it would run on a deleted controller)
            QTimer.singleShot(0, self, self.apply)

    def scale_view(self) -> ScaleView | None:
        return self.view

    # -- the drafts queue ----------------------------------------------------------------------------------

    def reorder_keeping_selection(self, rows: list[DraftRow], shown: dict[str, RiskRow] | None = None) -> None:
        """New risk values arrive while the reviewer works: keep the current draft and a multi-selection. The
        same rows in the same order (the usual case: found in C) only repaint the Risk cells that changed from
        `shown`; a new order moves the rows as one layout change."""
        drafts = self._drafts
        model = drafts.model
        version = model.version
        rows = drafts.in_view_order(rows)
        if len(rows) == len(model.rows) and all(map(is_, rows, model.rows)):
            self._repaint_risk(shown)
            self.order_shown.emit(version)
            return
        selected, current = drafts.selected_ids(), drafts.current_id()
        if len(selected) > KEEP_PLACE_ABOVE and set(map(id, rows)) == set(map(id, model.rows)):  # the same rows
            # a large selection stays where it is until it ends: a new order scattered hundreds of selected rows
            # (~1 s of the window's time with 500) and moved them out from under the reviewer's eyes
            self._order_waiting = True
            self._repaint_risk(None)
            return
        self._order_waiting = False
        drafts.set_rows(rows, keep=current)
        where = dict(zip(map(_ID, model.rows), count())) if len(selected) > 1 else {}
        drafts.select_also([where[i] for i in selected if i != current and i in where])
        self.order_shown.emit(version)

    def _repaint_risk(self, shown: dict[str, RiskRow] | None) -> None:
        """One dataChanged over the Risk cells from the first to the last row whose risk changed (the view
        repaints only what is on screen); nothing when none did."""
        risk, model = self.risk, self._drafts.model
        if shown is risk or not model.rows:
            return
        ids = list(map(_ID, model.rows))
        moved = list(compress(count(), map(is_not, map(risk.get, ids), map(shown.get, ids)))) if shown else [0]
        if moved:
            last = moved[-1] if shown else len(ids) - 1
            model.dataChanged.emit(model.index(moved[0], RISK_COLUMN), model.index(last, RISK_COLUMN))

    def order_drafts(self, rows: list[DraftRow]) -> list[DraftRow]:
        """Risk order (when on) and the writer filter, over rows already narrowed by the search box."""
        session = self.workspace.session
        if self.writer_filter is not None and session is not None:
            from plur_desk.app.scale.writer_stats import writer_key  # loaded by the ledger that set the filter

            wanted = self.writer_filter
            rows = [r for r in rows if writer_key(session.engram(r.id)) == wanted]
        if self.view is None:
            self.risk = {}  # no risk shown but the open store's
            return rows
        ordered, self.risk = self.view.order(rows, self.workspace.settings.default_level, bool(self.risk_order))
        return ordered

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

    def queue_rows(
        self, narrow: Callable[[list[DraftRow]], list[DraftRow]] | None = None
    ) -> tuple[int, list[DraftRow]]:
        """The drafts queue in its order (risk or age, the writer filter), narrowed first by `narrow` (a search:
        only the rows it keeps are put in order, the same order they have in the whole queue), and the queue's
        generation they are from; new scale results are on their way when the store changed since they were
        computed."""
        self.keep_up()
        session = self.workspace.session
        if session is None:
            return 0, []
        generation, rows = session.queue.rows_at()
        return generation, self.order_drafts(narrow(rows) if narrow is not None else rows)

    def keep_up(self) -> None:
        """New scale results are on their way when the store changed since they were computed."""
        if self._dirty or self.view is None:  # (None too for a view of a store left)
            self.schedule()

    def order_state(self) -> OrderState:
        """What the queue's order rests on besides its rows: an order made while this is the same holds for
        the same rows less some (each row's place among the others is its own, in risk order as in age order)."""
        view = self.view
        by_risk = bool(self.risk_order)
        level = self.workspace.settings.default_level
        return OrderState(
            view, view.ranking if view is not None and by_risk else None, by_risk, self.writer_filter, level
        )

    def writer_line(self, row: DraftRow | None) -> str:
        """The writer's line for the draft's detail (remembered, so new results redraw it only when it changed)."""
        line = self.view.writer_line(row.id) if self.view is not None and row is not None else ""
        self.writer_line_shown = (row.id if row is not None else "", line)
        return line

    def end_session(self) -> None:
        self.workspace.jobs.wait(
            10000, lane=SCALE
        )  # never leave the ledger or the clusters half-built behind a closed store

    def store_opening(self) -> None:
        """Another store is being opened: a writer filter chosen in the one left (its banner) does not carry over."""
        if self.writer_filter is not None:
            self.writer_filter = None
            self._drafts.show_banner("")

    def toggle_risk_order(self) -> None:
        self.risk_order = not self.risk_order
        self._drafts.follow_queue_order(RISK_COLUMN if self.risk_order else DraftColumn.AGE)
        self.workspace.messages.status("Queue in risk order" if self.risk_order else "Queue in age order", 3000)
        self.queue_changed.emit()

    def _filter_by_writer(self, stats: object) -> None:
        from plur_desk.app.scale.writer_stats import WriterStats  # loaded by the ledger that listed it

        assert isinstance(stats, WriterStats)
        self.writer_filter = None if self.writer_filter == stats.writer else stats.writer
        shown = self.writer_filter is not None
        self._drafts.show_banner(f"Showing only drafts by {stats.writer.label}." if shown else "")
        self._navigation.show_drafts()
        self.queue_changed.emit()

    # -- cluster actions -----------------------------------------------------------------------------------

    def settle_cluster(self, keep_member: bool = False) -> None:
        cluster, scale = self._clusters.current_cluster(), self.view
        if cluster is None or scale is None or self.workspace.session is None:
            return
        member = self._clusters.current_member() if keep_member else None
        keep = member.id if member is not None else cluster.representative
        level = self.workspace.settings.default_level
        self.workspace.change(lambda: scale.settle(cluster, keep, level, refresh=False))

    def settle_cluster_keeping_member(self) -> None:
        self.settle_cluster(keep_member=True)

    def split_cluster(self) -> None:
        cluster, member, scale = self._clusters.current_cluster(), self._clusters.current_member(), self.view
        if cluster is None or member is None or scale is None:
            return
        try:
            self.workspace.jobs.submit(
                lambda: scale.split(cluster, member.id), lambda _r: self.apply(), self.workspace.fail, lane=SCALE
            )
        except ActionRefused as exc:
            self.workspace.messages.error(str(exc))
