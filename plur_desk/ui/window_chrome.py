"""The main window's chrome: its menus and toolbar, the verdict buttons under the panes, the Recent Stores menu, and
the status bar, which follows every change published (app/broadcast.py) with the counts of what waits where."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QLineEdit, QMainWindow, QMenu, QTabWidget, QWidget

from plur_desk.app.settings import Settings
from plur_desk.domain.changes import ChangeSet
from plur_desk.ui.actions import ACTIONS, MENU_ORDER
from plur_desk.ui.changes.changes_pane import ChangesPane
from plur_desk.ui.common.widgets import plain_label
from plur_desk.ui.history.history_pane import HistoryPane
from plur_desk.ui.review.drafts_pane import DraftsPane, action_button
from plur_desk.ui.scale.clusters_pane import ClustersPane
from plur_desk.ui.tensions.tensions_pane import TensionsPane
from plur_desk.ui.validity.validity_pane import ValidityPane
from plur_desk.ui.workspace import Workspace

STATUS = ("path", "counts", "changes", "search", "reviewer", "lock", "busy")
LaterPane = TensionsPane | ValidityPane | ClustersPane  # built after the first draft is shown (ui/built_later.py)


def on_list(pane: LaterPane | ChangesPane, action: QAction) -> None:
    """A pane's verdict key on its list, once the pane's widgets are built (ui/built_later.py)."""
    pane.when_built(lambda: pane.table.addAction(action))


def verdict_queues(
    drafts: DraftsPane,
    history: HistoryPane,
    changes: ChangesPane,
    later: tuple[TensionsPane, ValidityPane, ClustersPane],
) -> dict[str, Callable[[QAction], object]]:
    """How a pane's verdict keys go on the list whose focus they need (Writers has none: its keys work anywhere
    in it); on a pane built later, once it is built."""
    tensions, validity, clusters = later
    return {
        "drafts": drafts.table.addAction,
        "tensions": partial(on_list, tensions),
        "validity": partial(on_list, validity),
        "history": history.table.addAction,
        "clusters": partial(on_list, clusters),
        "changes": partial(on_list, changes),
    }


def build_menus_and_buttons(
    window: QMainWindow,
    actions: dict[str, QAction],
    search: QLineEdit,
    panes: tuple[DraftsPane, HistoryPane, tuple[LaterPane, ...]],
    fill_recent: Callable[[QMenu], None],
) -> QMenu:
    """The menus (in MENU_ORDER, each action under its own), the toolbar, and each pane's verdict buttons. Returns
    the Recent Stores menu (filled by `fill_recent` each time it opens)."""
    menus = {name: window.menuBar().addMenu(name) for name in MENU_ORDER}
    recent = QMenu()
    for spec in ACTIONS:
        menus[spec.menu].addAction(actions[spec.id])
        if spec.id == "file.demo":
            recent = menus[spec.menu].addMenu("Recent Stores")
            recent.setObjectName("recentStores")
            recent.aboutToShow.connect(partial(fill_recent, recent))
    toolbar = window.addToolBar("Main")
    toolbar.setObjectName("mainToolbar")
    toolbar.setMovable(False)
    for action_id in ("edit.undo", "edit.redo", "file.reload"):
        toolbar.addAction(actions[action_id])
    spacer = QWidget()
    spacer.setSizePolicy(spacer.sizePolicy().horizontalPolicy().Expanding, spacer.sizePolicy().verticalPolicy())
    toolbar.addWidget(spacer)
    toolbar.addWidget(search)
    a = actions
    drafts, history, later = panes
    drafts.add_buttons(
        [
            action_button(a["review.approve"], "A", primary=True),
            action_button(a["review.approve_level"], "Shift+A"),
            action_button(a["review.reject"], "R"),
            action_button(a["review.edit"], "E"),
            action_button(a["review.skip"], "S"),
        ]
    )
    history.add_buttons(a)  # built with the window: built later, it came out wider than the window allows
    for pane in later:
        pane.when_built(partial(pane.add_buttons, a))
    return recent


def fill_recent(menu: QMenu, settings: Settings, open_recent: Callable[[str], None]) -> None:
    menu.clear()
    stores = [s for s in settings.recent_stores if "/demo/demo-" not in s]
    for path in stores[:9]:
        action = menu.addAction(path)
        action.triggered.connect(lambda _checked=False, p=path: open_recent(p))
    if not stores:
        menu.addAction("(none yet)").setEnabled(False)


class StatusBar:
    """The window's status labels (by name, in STATUS's order). After every change: what waits where, in the
    counts label and on the tabs, before a pane is opened."""

    def __init__(self, window: QMainWindow, workspace: Workspace) -> None:
        self.workspace = workspace
        self.labels = {name: plain_label() for name in STATUS}
        self.tabs: QTabWidget | None = None  # the panes' tabs, once built
        bar = window.statusBar()
        for name, label in self.labels.items():
            label.setObjectName(f"status_{name}")
            label.setAccessibleName(name)
            (bar.addPermanentWidget if name != "path" else bar.addWidget)(label)
        self.labels["reviewer"].setText(f"reviewer: {workspace.reviewer_name}")
        self.labels["reviewer"].setToolTip("Every decision is recorded with this name")
        self.on_counts: Callable[[dict[str, int]], None] | None = None  # the tabs' counts (ui/common/tab_counts.py)
        workspace.jobs.busy_changed.connect(self._busy)

    def follow(self, tabs: QTabWidget) -> None:
        """The counts follow every change from now on (subscribed after the queue: they count what it holds)."""
        self.tabs = tabs
        self.workspace.changes.subscribe(self._changed)

    def _changed(self, _change: ChangeSet) -> None:
        session = self.workspace.session
        if session is None:
            return
        counts = session.counts()
        held = f" · {counts['held']} held by an interrupted PLUR sync" if counts.get("held") else ""
        self.labels["counts"].setText(
            f"{counts['drafts']} drafts waiting · {counts['open_tensions']} open tensions{held}"
        )
        if self.on_counts is not None:
            self.on_counts(counts)  # what waits where, on the tabs, before opening a pane
        self.labels["reviewer"].setText(f"reviewer: {self.workspace.reviewer_name}")

    def _busy(self, busy: bool) -> None:
        text = ("loading…" if self.workspace.session is None else "working…") if busy else ""
        self.labels["busy"].setText(text)
