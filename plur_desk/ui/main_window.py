"""The main window: lays out the panes and widgets, assembles the controllers around them, and maps every action to
its handler. It holds no review logic of its own, and fans out no change: each change is published once on the
workspace's broadcast (app/broadcast.py) and every view subscribed decides what it shows again. Its menus and status
bar are in ui/window_chrome.py; see docs/architecture.md (the window and its controllers)."""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path
from typing import cast

from PySide6.QtCore import QTimer, Signal, SignalInstance
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QApplication, QLineEdit, QMainWindow, QStackedWidget, QTabWidget, QVBoxLayout, QWidget

from plur_desk.app.review.session import ChangeSet, ReviewSession
from plur_desk.app.settings import Settings, SettingsStore
from plur_desk.infra.clock import Clock, SystemClock
from plur_desk.infra.paths import cache_dir
from plur_desk.ui import window_state
from plur_desk.ui.action_context import ActionContext
from plur_desk.ui.action_map import action_map
from plur_desk.ui.actions import Handlers, UiContext, build_actions, recolor_icons
from plur_desk.ui.built_later import BuiltLater
from plur_desk.ui.changes.changes_controller import ChangesController, ChangesPane
from plur_desk.ui.common import icons, idle_collect, tab_counts, theme, theme_redraw
from plur_desk.ui.common.jobs import Jobs
from plur_desk.ui.common.widgets import banner_label
from plur_desk.ui.history.history_pane import HistoryPane
from plur_desk.ui.messages import Messages
from plur_desk.ui.navigation import PANES, NavigationController
from plur_desk.ui.review.drafts_pane import DraftsPane
from plur_desk.ui.review.review_controller import ReviewController
from plur_desk.ui.scale.clusters_pane import ClustersPane
from plur_desk.ui.scale.scale_support import ScaleController
from plur_desk.ui.scale.writers_pane import WritersPane
from plur_desk.ui.search.search_support import SearchController
from plur_desk.ui.start_screen import no_store_text, start_screen
from plur_desk.ui.store_opening import StoreController
from plur_desk.ui.team.team_controller import TeamController
from plur_desk.ui.tensions.conflicts_pane import ConflictsPane
from plur_desk.ui.tensions.conflicts_support import ConflictsController
from plur_desk.ui.tensions.tensions_controller import TensionsController
from plur_desk.ui.tensions.tensions_pane import TensionsPane
from plur_desk.ui.trust.reviewer_identity import IdentityController, UnlockAsker
from plur_desk.ui.validity.validity_controller import ValidityController
from plur_desk.ui.validity.validity_pane import ValidityPane
from plur_desk.ui.window_chrome import StatusBar, build_menus_and_buttons, fill_recent, verdict_queues
from plur_desk.ui.workspace import Workspace


class MainWindow(QMainWindow):
    store_opened = Signal()  # the whole store is parsed and shown
    changes_applied = Signal(object)  # a ChangeSet by the reviewer, after every view subscribed shows it

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
        later = (self.tensions, self.validity, self.clusters)
        queues = verdict_queues(self.drafts, self.history, self.changes, later)
        self.qactions = build_actions(self, dict(self.panes), self.action_handlers(), icons.icon, queues, self.jobs)
        self.messages.offer_undo(self.qactions["edit.undo"])
        theme.listen(self, partial(recolor_icons, self.qactions, icons.icon))  # light icons on dark, and back
        theme_redraw.follow(self)  # the style sheet's colours and the details on screen, at once
        recent = partial(
            fill_recent, settings=self.workspace.settings, open_recent=lambda p: self.opener.open_recent(p)
        )
        parts = (self.drafts, self.history, later)
        self.recent_menu = build_menus_and_buttons(self, self.qactions, self.search, parts, recent)
        self._connect()
        self._update_context()

    # -- construction --------------------------------------------------------------------------------------

    def _build_widgets(self) -> None:
        ws = self.workspace
        self.search = QLineEdit()
        self.search.setObjectName("search")
        self.search.setPlaceholderText("Search this pane  (Ctrl+F)")
        self.search.setAccessibleName("Search")
        self.search.setClearButtonEnabled(True)
        self.status_bar = StatusBar(self, ws)
        self.status_labels = self.status_bar.labels
        self.finder = SearchController(ws, self.search, self.status_labels["search"])
        self.drafts = DraftsPane(self, ws.jobs.window_busy)
        self.tensions = TensionsPane(ws, self.finder.similar_to, self)
        self.validity = ValidityPane(ws, self)
        self.history = HistoryPane(ws, self)
        self.conflicts_pane = ConflictsPane(self)
        self.clusters = ClustersPane(lambda: self.scale.view, self)
        self.writers = WritersPane(lambda: self.scale.view, self)
        self.changes = ChangesPane(lambda: self.changes_review.refresh(), self)
        for model in (self.drafts.model, self.tensions.model, self.history.model, self.conflicts_pane.model):
            model.painting = ws.jobs.repaints.mark  # work in the background gives way to their repaints
        ws.jobs.repaints.watch(self)  # and every repaint of the window (ui/common/repaint_marks.py)
        panes: tuple[QWidget, ...] = (self.drafts, self.tensions, self.validity, self.history, self.conflicts_pane)
        panes += (self.clusters, self.writers, self.changes)
        self.panes: dict[str, QWidget] = dict(zip(PANES, panes, strict=True))  # in the tabs' order
        # Each widget is put where it stays before what it holds is added: with the app's style sheet, a widget
        # moved to another parent has its whole subtree polished again (the panes were polished three times over).
        self.stack = QStackedWidget(self)
        self.setCentralWidget(self.stack)
        self.start, self.start_text = start_screen(
            lambda: self.opener.open_demo(), lambda: self.opener.open_store_dialog()
        )
        self.stack.addWidget(self.start)
        main = QWidget(self.stack)
        self.stack.addWidget(main)
        layout = QVBoxLayout(main)
        layout.setContentsMargins(0, 4, 0, 0)
        self.tabs = QTabWidget(main)
        self.tabs.setObjectName("panes")
        self.tabs.setDocumentMode(True)
        layout.addWidget(self.tabs)
        layout.addWidget(self.banner)  # under the panes: a notice (a new key, a refusal) never pushes the queue down
        for name, pane in self.panes.items():
            self.tabs.addTab(pane, name.title())

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
        self.team = TeamController(ws, self, self.opener.reload_after_sync)
        self.changes_review = ChangesController(ws, self.changes, self.status_labels, self.navigation, self.opener)
        self.action_context = ActionContext(
            ws, self.navigation, self.drafts, lambda: bool(self.opener.read_only), lambda: self.qactions
        )

    def action_handlers(self) -> Handlers:
        """What each action in ACTIONS does (checked against the table when the actions are built)."""
        return action_map(self)

    def _connect(self) -> None:
        ws, nav, review = self.workspace, self.navigation, self.review
        ws.reload_needed.connect(lambda: self.opener.reload_quiet(explicit=True))
        ws.context_changed.connect(self._update_context)
        self.opener.read_only_changed.connect(self._update_context)
        self._opened_before = False
        idle = self._idle = idle_collect.install(cast(QApplication, QApplication.instance()))  # keys and clicks
        for signal in (ws.context_changed, nav.pane_changed, self.search.textChanged):
            signal.connect(idle.touch)
        nav.pane_changed.connect(self._update_context)
        nav.drafts_search_requested.connect(review.search_changed)
        self.finder.apply_requested.connect(nav.apply_search)
        self.finder.leave_requested.connect(nav.focus_results)
        self.finder.ready.connect(review.show_current)
        self.finder.embedded.connect(self.scale.store_changed)  # clusters by embeddings, once the vectors are in
        self.conflicts.ready.connect(review.show_current)
        self.scale.queue_changed.connect(ws.reshow)
        self.scale.writer_line_changed.connect(review.show_current)
        for pane in (self.tensions, self.validity, self.changes, self.conflicts_pane):
            pane.selection_changed.connect(self._update_context)
        self.opener.no_store.connect(self._no_store)
        self.opener.opening.connect(self._opening)
        self.opener.loaded.connect(self._loaded)
        self.opener.history_page_ready.connect(lambda: self.history.refresh(None))
        # each change, once (app/broadcast.py); the controllers subscribed themselves when built, the views on
        # screen at once and the rest (index, contradiction check, banner, team) a turn later
        ws.changes.subscribe(nav.changed)  # the pane on screen, after the queue
        self.status_bar.follow(self.tabs)
        self.tab_counts = tab_counts.install(self)
        ws.changes.subscribe(self._shown)
        ws.changes.subscribe(lambda c: self.changes_applied.emit(c) if c.by_reviewer else None, deferred=True)

    def refresh_all(self, change: ChangeSet | None = None) -> None:
        """Every view shows `change` (None: the whole store, shown afresh)."""
        self.workspace.publish(change if change is not None else ChangeSet(kind="reshown"))

    def _shown(self, _change: ChangeSet) -> None:
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

    def _no_store(self, problem: str) -> None:
        self.start_text.setText(no_store_text(problem))
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

    def ui_context(self) -> UiContext:
        return self.action_context.ui_context()

    def _update_context(self) -> None:
        self.action_context.update()

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
