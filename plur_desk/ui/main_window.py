"""The main window: builds the panes and widgets, assembles the controllers around them, and maps every action to
its handler. It holds no review logic of its own; see docs/architecture.md (the window and its controllers)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import cast

from PySide6.QtCore import QTimer, Signal, SignalInstance
from PySide6.QtGui import QAction, QCloseEvent
from PySide6.QtWidgets import (
    QApplication,
    QLineEdit,
    QMainWindow,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from plur_desk.app.session import ChangeSet, ReviewSession
from plur_desk.app.settings import Settings, SettingsStore
from plur_desk.infra.clock import Clock, SystemClock
from plur_desk.infra.paths import cache_dir
from plur_desk.ui import icons, idle_collect, tab_counts, theme, theme_redraw, window_state
from plur_desk.ui.actions import (
    ACTIONS,
    MENU_ORDER,
    Handlers,
    UiContext,
    build_actions,
    recolor_icons,
    update_enabled,
)
from plur_desk.ui.built_later import BuiltLater
from plur_desk.ui.changes_controller import ChangesController, ChangesPane
from plur_desk.ui.clusters_pane import ClustersPane
from plur_desk.ui.conflicts_pane import ConflictsPane
from plur_desk.ui.conflicts_support import ConflictsController
from plur_desk.ui.drafts_pane import DraftsPane, action_button
from plur_desk.ui.history_pane import HistoryPane
from plur_desk.ui.jobs import Jobs
from plur_desk.ui.messages import Messages
from plur_desk.ui.navigation import PANES, NavigationController, as_pane
from plur_desk.ui.review_controller import ReviewController
from plur_desk.ui.reviewer_identity import IdentityController, UnlockAsker
from plur_desk.ui.scale_support import ScaleController
from plur_desk.ui.search_support import SearchController
from plur_desk.ui.session_drafts import on_session
from plur_desk.ui.start_screen import start_screen
from plur_desk.ui.store_opening import StoreController
from plur_desk.ui.team_controller import TeamController
from plur_desk.ui.tensions_controller import TensionsController
from plur_desk.ui.tensions_pane import TensionsPane
from plur_desk.ui.validity_controller import ValidityController
from plur_desk.ui.validity_pane import ValidityPane
from plur_desk.ui.widgets import banner_label, plain_label
from plur_desk.ui.workspace import Workspace
from plur_desk.ui.writers_pane import WritersPane

STATUS = ("path", "counts", "changes", "search", "reviewer", "lock", "busy")


def _on_list(pane: TensionsPane | ValidityPane | ClustersPane, action: QAction) -> None:
    """A pane's verdict key on its list, once the pane's widgets are built (ui/built_later.py)."""
    pane.when_built(lambda: pane.table.addAction(action))


class MainWindow(QMainWindow):
    store_opened = Signal()  # the whole store is parsed and shown
    changes_applied = Signal(object)  # a ChangeSet, after every pane shows it

    def __init__(
        self,
        settings_store: SettingsStore,
        settings: Settings,
        reviewer_name: str,
        clock: Clock | None = None,
        cache_root: Path | None = None,
    ) -> None:
        super().__init__()
        self.setObjectName("mainWindow")
        self.setWindowTitle("plur_desk")
        window_state.restore(self, settings_store.path.parent)
        self.banner = banner_label()
        self.messages = Messages(self.banner, self.statusBar(), self)
        cache_root = cache_root if cache_root is not None else cache_dir()  # read here, once, for every controller
        self.workspace = Workspace(
            settings_store, settings, reviewer_name, clock or SystemClock(), self.messages, cache_root, self
        )
        self._to_build: list[BuiltLater] | None = None  # hidden panes left to build (None: no draft shown yet)
        self._build_timer = QTimer(self, singleShot=True)  # the window's own: it goes with the window
        self._build_timer.timeout.connect(self._build_next_pane)
        self._build_widgets()
        self._build_controllers()
        self.qactions = build_actions(
            self, self._action_parents(), self.action_handlers(), icons.icon, self._queues(), self.jobs
        )
        self.messages.offer_undo(self.qactions["edit.undo"])
        theme.listen(self, partial(recolor_icons, self.qactions, icons.icon))  # light icons on dark, and back
        theme_redraw.follow(self)  # the style sheet's colours and the details on screen, at once
        self._build_menus_and_buttons()
        self._connect()
        self._context_shown: tuple[UiContext, tuple[str, str] | None] | None = None  # the actions' last context
        self._update_context()

    # -- construction --------------------------------------------------------------------------------------

    def _build_widgets(self) -> None:
        ws = self.workspace
        self.search = QLineEdit()
        self.search.setObjectName("search")
        self.search.setPlaceholderText("Search this pane  (Ctrl+F)")
        self.search.setAccessibleName("Search")
        self.search.setClearButtonEnabled(True)
        self.status_labels = {name: plain_label() for name in STATUS}
        self.finder = SearchController(ws, self.search, self.status_labels["search"])
        self.drafts = DraftsPane(self, ws.jobs.window_busy)
        self.tensions = TensionsPane(ws, self.finder.similar_to, self)
        self.validity = ValidityPane(ws, self)
        self.history = HistoryPane(ws, self)
        self.conflicts_pane = ConflictsPane(self)
        self.clusters = ClustersPane(lambda: self.scale.view, self)
        self.writers = WritersPane(lambda: self.scale.view, self)
        self.changes = ChangesPane(lambda: self.changes_review.refresh(), self)
        panes: tuple[QWidget, ...] = (self.drafts, self.tensions, self.validity, self.history, self.conflicts_pane)
        panes += (self.clusters, self.writers, self.changes)
        self.panes: dict[str, QWidget] = dict(zip(PANES, panes, strict=True))  # in the tabs' order
        self.tabs = QTabWidget(self)
        self.tabs.setObjectName("panes")
        self.tabs.setDocumentMode(True)
        for name, pane in self.panes.items():
            self.tabs.addTab(pane, name.title())
        main = QWidget()
        layout = QVBoxLayout(main)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(self.tabs)
        layout.addWidget(self.banner)  # under the panes: a notice (a new key, a refusal) never pushes the queue down
        self.start, self.start_text = start_screen(
            lambda: self.opener.open_demo(), lambda: self.opener.open_store_dialog()
        )
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.start)
        self.stack.addWidget(main)
        self.setCentralWidget(self.stack)
        for name, label in self.status_labels.items():
            label.setObjectName(f"status_{name}")
            label.setAccessibleName(name)
            (self.statusBar().addPermanentWidget if name != "path" else self.statusBar().addWidget)(label)
        self.status_labels["reviewer"].setText(f"reviewer: {ws.reviewer_name}")
        self.status_labels["reviewer"].setToolTip("Every decision is recorded with this name")

    def _build_controllers(self) -> None:
        ws = self.workspace
        back_to_queue = self.drafts.focus_queue
        self.navigation = NavigationController(
            self.tabs,
            self.stack,
            self.panes,
            self.search,
            {"validity": self.validity.show_engram, "history": self.history.show_engram},
            self.messages,
            lambda action_id: self.qactions[action_id].trigger(),
            lambda action_id: self.qactions[action_id].isEnabled(),
        )
        self.unlock_asker = UnlockAsker(self)
        self.identity = IdentityController(ws, self, back_to_queue)
        self.conflicts = ConflictsController(ws, self.finder, self, back_to_queue)
        self.conflicts.attach(self.conflicts_pane)
        self.scale = ScaleController(ws, self.drafts, self.clusters, self.writers, self.navigation)
        self.review = ReviewController(
            ws, self.drafts, self.finder, self.conflicts, self.scale, self.navigation, dialog_parent=self
        )
        self.tension_review = TensionsController(ws, self.tensions, self.navigation.pane_on_screen)
        self.validity_review = ValidityController(ws, self.validity, self.navigation.pane_on_screen)
        self.opener = StoreController(ws, self.drafts, self.status_labels, self, self.unlock_asker)
        self.team = TeamController(ws, self, self.opener.reload)
        self.changes_review = ChangesController(ws, self.changes, self.status_labels, self.navigation, self.opener)

    def action_handlers(self) -> Handlers:
        """What each action in ACTIONS does (checked against the table when the actions are built)."""
        nav, review, scale = self.navigation, self.review, self.scale
        tensions, validity, history = self.tension_review, self.validity_review, self.history
        return {
            "file.open": self.opener.open_store_dialog,
            "file.demo": self.opener.open_demo,
            "file.reload": self.opener.reload,
            "file.identity": self.identity.show_reviewer_identity,
            "file.quit": self.close,
            "edit.undo": review.undo,
            "edit.redo": review.redo,
            "edit.find": nav.focus_search,
            "edit.palette": nav.show_palette,
            "view.drafts": nav.show_drafts,
            "view.tensions": nav.show_tensions,
            "view.validity": nav.show_validity,
            "view.history": nav.show_history,
            "view.conflicts": nav.show_conflicts,
            "view.clusters": nav.show_clusters,
            "view.writers": nav.show_writers,
            **self.changes_review.handlers(),
            "view.theme": partial(theme.cycle, self.workspace, self.refresh_all),
            "review.approve": review.approve_selected,
            "review.approve_level": review.approve_selected_level,
            "review.reject": review.reject_selected,
            "review.edit": review.edit_selected,
            "review.skip": review.skip,
            "review.approve_session": on_session(self.drafts, self.messages, review.approve_selected),
            "review.reject_session": on_session(self.drafts, self.messages, review.reject_selected),
            "review.next": review.select_next,
            "review.previous": review.select_previous,
            "review.risk_order": scale.toggle_risk_order,
            "clusters.settle": scale.settle_cluster,
            "clusters.keep_member": scale.settle_cluster_keeping_member,
            "clusters.split": scale.split_cluster,
            "tension.confirm": tensions.confirm_tension,
            "tension.dismiss": tensions.dismiss_tension,
            "tension.keep_left": tensions.keep_left,
            "tension.keep_right": tensions.keep_right,
            "tension.split": tensions.split_tension,
            "validity.edit": validity.edit_validity,
            "validity.open": nav.open_validity_of_current,
            "validity.expire": validity.expire_now,
            "history.export_csv": history.export_csv,
            "history.export_jsonl": history.export_jsonl,
            "history.timeline": nav.show_timeline,
            "team.disagreements": self.team.show_team,
            "team.sync": self.team.sync_team,
            "help.shortcuts": nav.show_shortcuts,
            "help.about": nav.show_about,
        }

    def _action_parents(self) -> dict[str, QWidget]:
        return dict(self.panes)

    def _queues(self) -> dict[str, Callable[[QAction], object]]:
        """How a pane's verdict keys go on the list whose focus they need (Writers has none: its keys work anywhere
        in it); on a pane built later, once it is built."""
        return {
            "drafts": self.drafts.table.addAction,
            "tensions": partial(_on_list, self.tensions),
            "validity": partial(_on_list, self.validity),
            "history": self.history.table.addAction,
            "clusters": partial(_on_list, self.clusters),
            "changes": self.changes.table.addAction,
        }

    def _build_menus_and_buttons(self) -> None:
        menus = {name: self.menuBar().addMenu(name) for name in MENU_ORDER}
        for spec in ACTIONS:
            menus[spec.menu].addAction(self.qactions[spec.id])
            if spec.id == "file.demo":
                self.recent_menu = menus[spec.menu].addMenu("Recent Stores")
                self.recent_menu.setObjectName("recentStores")
                self.recent_menu.aboutToShow.connect(self._fill_recent)
        toolbar = self.addToolBar("Main")
        toolbar.setObjectName("mainToolbar")
        toolbar.setMovable(False)
        for action_id in ("edit.undo", "edit.redo", "file.reload"):
            toolbar.addAction(self.qactions[action_id])
        spacer = QWidget()
        spacer.setSizePolicy(spacer.sizePolicy().horizontalPolicy().Expanding, spacer.sizePolicy().verticalPolicy())
        toolbar.addWidget(spacer)
        toolbar.addWidget(self.search)
        a = self.qactions
        self.drafts.add_buttons(
            [
                action_button(a["review.approve"], "A", primary=True),
                action_button(a["review.approve_level"], "Shift+A"),
                action_button(a["review.reject"], "R"),
                action_button(a["review.edit"], "E"),
                action_button(a["review.skip"], "S"),
            ]
        )
        self.history.add_buttons(a)  # built with the window: built later, it came out wider than the window allows
        for pane in (self.tensions, self.validity, self.clusters):
            pane.when_built(partial(pane.add_buttons, a))

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        stores = [s for s in self.workspace.settings.recent_stores if "/demo/demo-" not in s]
        for path in stores[:9]:
            action = self.recent_menu.addAction(path)
            action.triggered.connect(lambda _checked=False, p=path: self.opener.open_recent(p))
        if not stores:
            self.recent_menu.addAction("(none yet)").setEnabled(False)

    def _connect(self) -> None:
        ws, nav, review = self.workspace, self.navigation, self.review
        ws.applied.connect(self._applied)
        ws.reload_needed.connect(lambda: self.opener.reload_quiet(explicit=True))
        ws.refresh_needed.connect(self.refresh_all)
        ws.refresh_needed.connect(self.scale.store_changed)
        ws.context_changed.connect(self._update_context)
        self.opener.read_only_changed.connect(self._update_context)
        self._opened_before = False
        self._rest: list[ChangeSet] = []  # changes shown in the lists, the rest of their work due in a tick of its own
        self._rest_timer = QTimer(self, singleShot=True, interval=1, timeout=self._apply_rest)  # type: ignore[call-arg]
        idle = self._idle = idle_collect.install(cast(QApplication, QApplication.instance()))  # keys and clicks
        for signal in (ws.context_changed, nav.pane_changed, self.search.textChanged):
            signal.connect(idle.touch)
        ws.jobs.busy_changed.connect(self._busy)
        nav.pane_changed.connect(self._update_context)
        nav.drafts_search_requested.connect(review.search_changed)
        self.finder.apply_requested.connect(nav.apply_search)
        self.finder.leave_requested.connect(nav.focus_results)
        self.finder.ready.connect(review.show_current)
        self.finder.embedded.connect(self.scale.store_changed)  # clusters by embeddings, once the vectors are in
        self.conflicts.ready.connect(review.show_current)
        self.scale.queue_changed.connect(self.refresh_all)
        self.scale.writer_line_changed.connect(review.show_current)
        for pane in (self.tensions, self.validity, self.changes, self.conflicts_pane):
            pane.selection_changed.connect(self._update_context)
        self.opener.no_store.connect(self._no_store)
        self.opener.opening.connect(self._opening)
        self.opener.refresh_requested.connect(self.scale.store_changed)
        self.opener.refresh_requested.connect(self.refresh_all)
        self.opener.loaded.connect(self._loaded)
        self.opener.history_page_ready.connect(lambda: self.history.refresh(None))
        self.opener.reloaded.connect(self._reloaded)
        self.changes_applied.connect(lambda _c: self.team.refresh())
        self.tab_counts = tab_counts.install(self)

    # -- what the controllers' signals lead to ---------------------------------------------------------------

    def refresh_all(self, change: ChangeSet | None = None) -> None:
        session = self.session
        if session is None:
            return
        self.review.refresh_queue()
        self.navigation.refresh_panes(change)
        counts = session.counts()
        held = f" · {counts['held']} held by an interrupted PLUR sync" if counts.get("held") else ""
        self.status_labels["counts"].setText(
            f"{counts['drafts']} drafts waiting · {counts['open_tensions']} open tensions{held}"
        )
        self.tab_counts.update(counts)  # what waits where, before opening a pane
        self.status_labels["reviewer"].setText(f"reviewer: {self.workspace.reviewer_name}")
        self.opener.poll()
        self._update_context()
        if self._to_build is None:  # the first draft is on screen: the hidden panes' widgets, one per turn
            self._to_build = [p for p in self.panes.values() if isinstance(p, BuiltLater)]
            self._build_timer.start(0)

    def _build_next_pane(self) -> None:
        if self._to_build:
            pane = self._to_build.pop(0)
            self._build_timer.start(0)  # the next one on the next turn: keys and paints come between
            pane.build_now()
        else:
            self.opener.panes_built()

    def apply_search(self) -> None:
        """The search field's query, applied now to the pane on screen (as the field does after typing stops)."""
        self.navigation.apply_search()

    def _applied(self, change: object) -> None:
        assert isinstance(change, ChangeSet)  # (a job's result: `Jobs._on_done` marked the window busy)
        self.scale.store_changed()
        self.messages.status(change.message[:1].upper() + change.message[1:], 5000)
        self.refresh_all(change)
        self._rest.append(change)  # a timer: the lists' repaint and the keys typed meanwhile come first
        self._rest_timer.start()

    def _apply_rest(self) -> None:
        self.jobs.window_busy()  # a timer, not a job's result: the jobs started here wait for this tick's repaint
        rest, self._rest = self._rest, []
        for change in rest:  # in order; the banner (which moves the panes down) then the index and the listeners
            self.messages.show(" · ".join(change.warnings))
            if change.engrams:
                self.finder.after_change(change.engrams, False)
            if change.engrams or change.tensions:
                self.conflicts.after_change(change)
            self.changes_applied.emit(change)

    def _reloaded(self, change: object, explicit: bool) -> None:
        assert isinstance(change, ChangeSet)
        if change.engrams or change.tensions or change.reloaded or change.events:
            self.scale.store_changed()
        self.refresh_all(None if explicit else change)  # an explicit reload shows every pane afresh
        if change.engrams or change.reloaded:
            self.finder.after_change(change.engrams, True)
        if change.engrams or change.tensions:
            self.conflicts.start()
            self.messages.status(
                f"PLUR changed the store: {len(change.engrams)} engrams, {len(change.tensions)} tensions", 4000
            )

    def _no_store(self, problem: str) -> None:
        from plur_desk.ui.widgets import text_html

        self.start_text.setText(
            f"<h2>No PLUR store here</h2><p>{text_html(problem)}</p>"
            "<p>Open the demo store to see plur_desk on realistic data, or pick a store.</p>"
        )
        self.stack.setCurrentWidget(self.start)
        self._update_context()

    def _opening(self, path: object) -> None:
        if self._opened_before:
            self._idle.store_closed()  # the store open before is left: its objects are freed by the next idle pass
        self._opened_before = True
        self.setWindowTitle(f"plur_desk — {path}")
        self.status_labels["path"].setText(str(path))
        self.stack.setCurrentIndex(1)
        self.finder.reset()
        self.scale.store_opening()

    def _loaded(self) -> None:
        self.store_opened.emit()
        self.finder.start()
        self.conflicts.start()

    def _busy(self, busy: bool) -> None:
        text = ("loading…" if self.session is None else "working…") if busy else ""
        self.status_labels["busy"].setText(text)

    def ui_context(self) -> UiContext:
        session, nav = self.session, self.navigation
        pane = nav.current_pane()
        on_screen = nav.pane_on_screen(pane)
        ids = self.drafts.selected_ids() if on_screen and pane is self.drafts else []
        has_selection = bool(ids) if pane is self.drafts else as_pane(pane).has_selection()
        return UiContext(
            pane=nav.current_name() if on_screen else "",
            has_store=session is not None,
            read_only=bool(session and self.opener.read_only),
            has_selection=on_screen and has_selection,
            multi_selection=len(ids) > 1,
            can_undo=bool(session and session.can_undo),
            can_redo=bool(session and session.can_redo),
            editing=self.drafts.editing,
        )

    def _update_context(self) -> None:
        """Enable the actions for the context, and name what undo and redo would do; only when that changed. Each
        is a call into Qt (44 on every selection change) and each call waits for the interpreter lock while a
        worker runs Python; the actions' predicates read the context alone."""
        ctx, session = self.ui_context(), self.session
        shown = self._context_shown
        if shown is None or shown[0] != ctx:
            update_enabled(self.qactions, ctx)
        texts = shown[1] if shown is not None else None  # as the actions say them (a closed store changes none)
        if session is not None:
            undo = f"Undo {session.undo_label()}" if session.can_undo else "Undo"
            redo = f"Redo {session.redo_label()}" if session.can_redo else "Redo"
            if texts != (undo, redo):
                self.qactions["edit.undo"].setText(undo)
                self.qactions["edit.redo"].setText(redo)
                texts = (undo, redo)
        self._context_shown = (ctx, texts)

    # -- what tests and scripts read ---------------------------------------------------------------------------

    @property
    def session(self) -> ReviewSession | None:
        return self.workspace.session

    @property
    def store_path(self) -> Path | None:
        return self.workspace.store_path

    @property
    def jobs(self) -> Jobs:
        return self.workspace.jobs

    @property
    def sticky_note(self) -> str:
        return self.messages.sticky_note

    @sticky_note.setter
    def sticky_note(self, text: str) -> None:
        self.messages.sticky_note = text

    @property
    def error_shown(self) -> SignalInstance:
        return self.messages.error_shown

    def open_path(self, path: Path) -> None:
        self.opener.open_path(path)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.opener.confirm_discard_edit("quit"):
            event.ignore()
            return
        self.jobs.reviewer_left()  # the background threads waited for below no longer step aside for the reviewer
        self.opener.stop()
        window_state.save(self, self.workspace.settings_store.path.parent)
        self.finder.stop()
        self.jobs.wait(10000)
        try:
            self.workspace.settings_store.flush()  # recent stores and reasons saved in the background land first
        except OSError as exc:
            print(f"plur_desk: the settings could not be saved: {exc}", file=sys.stderr)  # noqa: T201
        self.scale.end_session()
        self.identity.end_session()
        super().closeEvent(event)
