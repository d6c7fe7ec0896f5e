"""The main window: assembles panes, actions, status bar, store watching and background work."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, Qt, QTimer, Signal, SignalInstance
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QApplication,
    QLabel,
    QLineEdit,
    QMainWindow,
    QPushButton,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from plur_desk.app.rows import DraftRow
from plur_desk.app.session import ChangeSet, ReviewSession
from plur_desk.app.settings import Settings, SettingsStore
from plur_desk.infra.clock import Clock, SystemClock
from plur_desk.ui import icons, window_state
from plur_desk.ui.actions import ACTIONS, MENU_ORDER, Handlers, UiContext, build_actions, update_enabled
from plur_desk.ui.conflicts_support import ConflictsMixin
from plur_desk.ui.drafts_pane import DraftsPane, action_button
from plur_desk.ui.history_pane import HistoryPane
from plur_desk.ui.messages import Messages
from plur_desk.ui.navigation import PANES, NavigationMixin
from plur_desk.ui.reviewer_identity import IdentityController, UnlockAsker
from plur_desk.ui.runner import Runner
from plur_desk.ui.scale_support import ScaleMixin  # the drafts pane's decisions come with it
from plur_desk.ui.search_support import SearchMixin
from plur_desk.ui.store_opening import StoreOpeningMixin
from plur_desk.ui.team_dialog import TeamController
from plur_desk.ui.tensions_pane import TensionsPane
from plur_desk.ui.validity_pane import ValidityPane
from plur_desk.ui.widgets import banner_label, plain_label
from plur_desk.ui.workspace import Workspace


class MainWindow(
    StoreOpeningMixin,
    NavigationMixin,
    SearchMixin,
    ConflictsMixin,
    ScaleMixin,
    QMainWindow,
):
    store_opened = Signal()
    changes_applied = Signal(object)

    def __init__(
        self,
        settings_store: SettingsStore,
        settings: Settings,
        reviewer_name: str,
        clock: Clock | None = None,
        open_store: Callable[[Path], ReviewSession] | None = None,
    ) -> None:
        super().__init__()
        self.setObjectName("mainWindow")
        self.banner = banner_label()
        self.messages = Messages(self.banner, self.statusBar(), self)
        self.workspace = Workspace(settings_store, settings, reviewer_name, clock or SystemClock(), self.messages, self)
        self.unlock_asker = UnlockAsker(self)
        self.identity = IdentityController(self.workspace, self, lambda: self.drafts.focus_queue())
        self.team = TeamController(self.workspace, self, self.reload)
        self._init_search()
        self._init_conflicts()
        self._approvals: deque[float] = deque(maxlen=64)
        self._stale: set[QWidget] = set()
        self._build()
        self._connect()
        self._watch_user_input()

    # -- construction --------------------------------------------------------------------------------------

    def _build(self) -> None:
        self.setWindowTitle("plur_desk")
        window_state.restore(self, self.settings_store.path.parent)
        self.drafts = DraftsPane(self)
        self.tensions = TensionsPane(self)
        self.validity = ValidityPane(self)
        self.history = HistoryPane(self)
        self.tabs = QTabWidget(self)
        self.tabs.setObjectName("panes")
        self.tabs.setDocumentMode(True)
        for pane, title in (
            (self.drafts, "Drafts"),
            (self.tensions, "Tensions"),
            (self.validity, "Validity"),
            (self.history, "History"),
        ):
            self.tabs.addTab(pane, title)
        self.banner.setObjectName("banner")
        self.banner.setWordWrap(True)
        self.banner.setAccessibleName("Messages")
        self.banner.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.banner.hide()
        main = QWidget()
        layout = QVBoxLayout(main)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(self.banner)
        layout.addWidget(self.tabs)
        self.start = self._start_screen()
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.start)
        self.stack.addWidget(main)
        self.setCentralWidget(self.stack)

        panes = {"drafts": self.drafts, "tensions": self.tensions, "validity": self.validity, "history": self.history}
        queues = {name: pane.table for name, pane in panes.items()}
        panes |= self._scale_panes()  # Clusters and Writers, after the other tabs
        queues["clusters"] = self.clusters.table  # its verdict key acts only on the focused list of clusters
        self.qactions = build_actions(self, panes, self.action_handlers(), icons.icon, queues)
        self._build_menus()
        toolbar = self.addToolBar("Main")
        toolbar.setObjectName("mainToolbar")
        toolbar.setMovable(False)
        for action_id in ("edit.undo", "edit.redo", "file.reload"):
            toolbar.addAction(self.qactions[action_id])
        spacer = QWidget()
        spacer.setSizePolicy(spacer.sizePolicy().horizontalPolicy().Expanding, spacer.sizePolicy().verticalPolicy())
        toolbar.addWidget(spacer)
        self.search = QLineEdit()
        self.search.setObjectName("search")
        self.search.setPlaceholderText("Search this pane  (Ctrl+F)")
        self.search.setAccessibleName("Search")
        self.search.setClearButtonEnabled(True)
        toolbar.addWidget(self.search)
        self.drafts.add_buttons(
            [
                action_button(self.qactions["review.approve"], "A", primary=True),
                action_button(self.qactions["review.approve_level"], "Shift+A"),
                action_button(self.qactions["review.reject"], "R"),
                action_button(self.qactions["review.edit"], "E"),
                action_button(self.qactions["review.skip"], "S"),
            ]
        )
        self.tensions.add_buttons(self.qactions)
        self.validity.add_buttons(self.qactions)
        self.history.add_buttons(self.qactions)
        self._status_labels = {name: plain_label() for name in ("path", "counts", "search", "reviewer", "lock", "busy")}
        for name, label in self._status_labels.items():
            label.setObjectName(f"status_{name}")
            label.setAccessibleName(name)
            (self.statusBar().addPermanentWidget if name != "path" else self.statusBar().addWidget)(label)
        self._status_labels["reviewer"].setText(f"reviewer: {self.reviewer_name}")
        self._status_labels["reviewer"].setToolTip("Every decision is recorded with this name")
        self._search_timer = QTimer(self, singleShot=True, interval=150)
        self._reload_timer = QTimer(self, singleShot=True, interval=200)
        self._poll_timer = QTimer(self, interval=1000)
        self.watcher = QFileSystemWatcher(self)
        self._update_context()

    def _start_screen(self) -> QWidget:
        page = QWidget()
        page.setObjectName("startScreen")
        layout = QVBoxLayout(page)
        layout.addStretch(1)
        self.start_text = QLabel()
        self.start_text.setWordWrap(True)
        self.start_text.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(self.start_text)
        demo = QPushButton("Open the demo store")
        demo.setObjectName("openDemo")
        demo.clicked.connect(self.open_demo)
        other = QPushButton("Open a store…")
        other.clicked.connect(self.open_store_dialog)
        for button in (demo, other):
            button.setMaximumWidth(260)
            layout.addWidget(button, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addStretch(2)
        return page

    def _build_menus(self) -> None:
        menus = {name: self.menuBar().addMenu(name) for name in MENU_ORDER}
        for spec in ACTIONS:
            menus[spec.menu].addAction(self.qactions[spec.id])
            if spec.id == "file.demo":
                self.recent_menu = menus[spec.menu].addMenu("Recent Stores")
                self.recent_menu.setObjectName("recentStores")
                self.recent_menu.aboutToShow.connect(self._fill_recent)

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        stores = [s for s in self.settings.recent_stores if "/demo/demo-" not in s]
        for path in stores[:9]:
            action = self.recent_menu.addAction(path)
            action.triggered.connect(lambda _checked=False, p=path: self._open_recent(p))
        if not stores:
            self.recent_menu.addAction("(none yet)").setEnabled(False)

    def _open_recent(self, path: str) -> None:
        self.sticky_note = ""
        self.open_path(Path(path))

    def action_handlers(self) -> Handlers:
        """What each action in ACTIONS does (checked against the table when the actions are built)."""
        t, v, h = self.tensions, self.validity, self.history
        return {
            "file.open": self.open_store_dialog,
            "file.demo": self.open_demo,
            "file.reload": self.reload,
            "file.identity": self.identity.show_reviewer_identity,
            "file.quit": self.close,
            "edit.undo": self.undo,
            "edit.redo": self.redo,
            "edit.find": self.focus_search,
            "edit.palette": self.show_palette,
            "view.drafts": self.show_drafts,
            "view.tensions": self.show_tensions,
            "view.validity": self.show_validity,
            "view.history": self.show_history,
            "view.conflicts": self.show_conflicts,
            "view.clusters": self.show_clusters,
            "view.writers": self.show_writers,
            "review.approve": self.approve_selected,
            "review.approve_level": self.approve_selected_level,
            "review.reject": self.reject_selected,
            "review.edit": self.edit_selected,
            "review.skip": self.skip,
            "review.next": self.select_next,
            "review.previous": self.select_previous,
            "review.risk_order": self.toggle_risk_order,
            "clusters.settle": self.settle_cluster,
            "clusters.keep_member": self.settle_cluster_keeping_member,
            "clusters.split": self.split_cluster,
            "tension.confirm": t.confirm_tension,
            "tension.dismiss": t.dismiss_tension,
            "tension.keep_left": t.keep_left,
            "tension.keep_right": t.keep_right,
            "tension.split": t.split_tension,
            "validity.edit": v.edit_validity,
            "validity.open": self.open_validity_of_current,
            "validity.expire": v.expire_now,
            "history.export_csv": h.export_csv,
            "history.export_jsonl": h.export_jsonl,
            "history.timeline": self.show_timeline,
            "team.disagreements": self.team.show_team,
            "team.sync": self.team.sync_team,
            "help.shortcuts": self.show_shortcuts,
            "help.about": self.show_about,
        }

    def _connect(self) -> None:
        self.drafts.selection_changed.connect(self._draft_selected)
        self.drafts.edit_saved.connect(self._save_edit)
        self.drafts.edit_cancelled.connect(self._update_context)
        self.tabs.currentChanged.connect(self._pane_changed)
        self.search.textChanged.connect(lambda _t: self._search_timer.start())
        self._search_timer.timeout.connect(self._apply_search)
        self._connect_search_keys()
        self._reload_timer.timeout.connect(self.reload_quiet)
        self._poll_timer.timeout.connect(self._poll)
        self.watcher.fileChanged.connect(lambda _p: self._reload_timer.start())
        self.watcher.directoryChanged.connect(lambda _p: self._reload_timer.start())
        self.runner.busy_changed.connect(self._busy)
        self.workspace.reload_needed.connect(lambda: self.reload_quiet(explicit=True))
        self.workspace.refresh_needed.connect(self.refresh_all)
        self.workspace.context_changed.connect(self._update_context)
        self.workspace.applied.connect(self._applied)
        self.store_opened.connect(self.team.refresh)
        self.changes_applied.connect(lambda _c: self.team.refresh())
        for pane in (self.tensions, self.validity, self.history, self.clusters, self.writers):
            pane.attach(self)

    def _busy(self, busy: bool) -> None:
        text = ("loading…" if self.session is None else "working…") if busy else ""
        self._status_labels["busy"].setText(text)

    # -- refreshing ----------------------------------------------------------------------------------------

    def refresh_all(self, change: ChangeSet | None = None) -> None:
        session = self.session
        if session is None:
            return
        query = self.search.text()
        self.drafts.set_rows(self._filtered(self.queue_rows(), query), keep=self._next_selection(), query=query)
        self._pending_select = None
        self._draft_selected()
        current = self.tabs.currentWidget()
        for pane in (self.tensions, self.validity, self.history, self.clusters, self.writers):
            if pane is current:
                pane.refresh(change)
            else:
                self._stale.add(pane)  # refreshed when shown: a hidden pane costs nothing per keypress
        counts = session.counts()
        self._status_labels["counts"].setText(
            f"{counts['drafts']} drafts waiting · {counts['open_tensions']} open tensions"
        )
        self._status_labels["reviewer"].setText(f"reviewer: {self.reviewer_name}")
        self._poll()
        self._update_context()

    def _next_selection(self) -> str | None:
        return getattr(self, "_pending_select", None) or self.drafts.current_id()

    def _filtered(self, rows: list[DraftRow], text: str) -> list[DraftRow]:
        """The queue narrowed to every draft the query matches (the query language when the index is ready)."""
        if not text.strip():
            return rows
        ids = self.matching_ids(text)
        if ids is not None:
            return [r for r in rows if r.id in ids]
        words = text.lower().split()
        return [
            r for r in rows if all(w in f"{r.statement} {r.scope} {r.domain} {r.writer} {r.id}".lower() for w in words)
        ]

    def _apply_search(self) -> None:
        pane = PANES[self.tabs.currentIndex()]
        if pane == "drafts":
            self.refresh_all()
        else:
            getattr(self, pane).apply_search(self.search.text())

    def reload(self) -> None:
        self.reload_quiet(explicit=True)

    def reload_quiet(self, explicit: bool = False) -> None:
        session = self.session
        if session is None:
            return
        if self.runner.pending and not explicit:
            self._reload_timer.start()
            return
        self.runner.submit(session.reload_if_changed, lambda c: self._reloaded(c, explicit), self._failed)

    def _reloaded(self, change: object, explicit: bool) -> None:
        assert isinstance(change, ChangeSet)
        self._watch()
        if change.engrams or change.tensions or change.events or explicit:
            self.refresh_all(change)
            if change.engrams or change.reloaded:
                self.search_after_change(change.engrams, True)
            if change.engrams or change.tensions:
                self.start_conflicts()
            if change.engrams or change.tensions:
                self.statusBar().showMessage(
                    f"PLUR changed the store: {len(change.engrams)} engrams, {len(change.tensions)} tensions", 4000
                )

    def _poll(self) -> None:
        session = self.session
        if session is None:
            return
        holder = session.store.lock_holder()
        self._status_labels["lock"].setText(
            "locked by " + holder.split(":")[1] if holder and ":" in holder else "store idle"
        )
        if session.store.engrams_changed_on_disk() or session.store.tensions_changed_on_disk():
            self._reload_timer.start()

    # -- context and messages ------------------------------------------------------------------------------

    def pane_on_screen(self, pane: QWidget) -> bool:
        """True when `pane` is the pane the person sees (the store page is up and that tab is current)."""
        return self.stack.currentIndex() == 1 and self.tabs.currentWidget() is pane

    def ui_context(self) -> UiContext:
        session = self.session
        name = PANES[self.tabs.currentIndex()]
        pane = getattr(self, name)
        on_screen = self.pane_on_screen(pane)
        ids = self.drafts.selected_ids() if on_screen and pane is self.drafts else []
        has_selection = bool(ids) if pane is self.drafts else bool(getattr(pane, "has_selection", lambda: False)())
        return UiContext(
            pane=name if on_screen else "",
            has_store=session is not None,
            read_only=bool(session and session.read_only_reasons),
            has_selection=on_screen and has_selection,
            multi_selection=len(ids) > 1,
            can_undo=bool(session and session.can_undo),
            can_redo=bool(session and session.can_redo),
            editing=self.drafts.editing,
        )

    def _update_context(self) -> None:
        update_enabled(self.qactions, self.ui_context())
        session = self.session
        if session is not None:
            self.qactions["edit.undo"].setText(f"Undo {session.undo_label()}" if session.can_undo else "Undo")
            self.qactions["edit.redo"].setText(f"Redo {session.redo_label()}" if session.can_redo else "Redo")

    # -- the workspace, as tests and scripts read it -----------------------------------------------------------

    @property
    def session(self) -> ReviewSession | None:
        return self.workspace.session

    @session.setter
    def session(self, session: ReviewSession | None) -> None:
        self.workspace.session = session

    @property
    def store_path(self) -> Path | None:
        return self.workspace.store_path

    @store_path.setter
    def store_path(self, path: Path | None) -> None:
        self.workspace.store_path = path

    @property
    def runner(self) -> Runner:
        return self.workspace.runner

    @property
    def settings(self) -> Settings:
        return self.workspace.settings

    @property
    def settings_store(self) -> SettingsStore:
        return self.workspace.settings_store

    @property
    def reviewer_name(self) -> str:
        return self.workspace.reviewer_name

    @property
    def clock(self) -> Clock:
        return self.workspace.clock

    @property
    def sticky_note(self) -> str:
        return self.messages.sticky_note

    @sticky_note.setter
    def sticky_note(self, text: str) -> None:
        self.messages.sticky_note = text

    @property
    def error_shown(self) -> SignalInstance:
        return self.messages.error_shown

    def show_message(self, text: str) -> None:
        self.messages.show(text)

    def clear_refusal(self) -> None:
        self.messages.clear_refusal()

    def show_error(self, text: str) -> None:
        self.messages.error(text)

    def _failed(self, error: Exception) -> None:
        self.workspace.fail(error)

    # -- undo ------------------------------------------------------------------------------------------------

    def _store_on_screen(self) -> bool:
        return self.session is not None and self.stack.currentIndex() == 1

    def undo(self) -> None:
        if self._store_on_screen() and self.session is not None and self.session.can_undo:
            self.workspace.change(self.session.undo)

    def redo(self) -> None:
        if self._store_on_screen() and self.session is not None and self.session.can_redo:
            self.workspace.change(self.session.redo)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.confirm_discard_edit("quit"):
            event.ignore()
            return
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self)
        window_state.save(self, self.settings_store.path.parent)
        self._poll_timer.stop()
        self.stop_search()
        self.runner.wait(10000)
        self.search_runner.wait(10000)
        self.conflict_runner.wait(10000)
        self.end_session()
        self.identity.end_session()
        super().closeEvent(event)
