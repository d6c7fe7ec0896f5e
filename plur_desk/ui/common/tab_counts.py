"""Counts on the panes' tabs: what waits where, before opening a pane (issue 40).

Drafts: the queue. Tensions: the open ones. Validity: windows that need a look (expired or expiring within 14 days).
Conflicts: the pairs of the last scan still unanswered (no count before the pane first scanned). Clusters: the
clusters of near-duplicate drafts. Changes: the agent changes listed. History and Writers are records, not work
waiting: no count. Each count comes from what is already computed (the session's own counts, the scans, the
ledger and the changes found on their threads); the Validity count is kept on the serial runner (where the session
changes), by id, so a decision costs it the engrams it changed, never a pass over the store on the window's thread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QTabWidget, QWidget

from plur_desk.app.review.session import ChangeSet, ReviewSession
from plur_desk.domain.plur_rules.validity import Window
from plur_desk.ui.changes.changes_pane import ChangesPane
from plur_desk.ui.scale.scale_support import ScaleController
from plur_desk.ui.store_opening import StoreController
from plur_desk.ui.tensions.conflicts_pane import ConflictsPane
from plur_desk.ui.window_chrome import StatusBar
from plur_desk.ui.workspace import Workspace

ATTENTION = ("expired", "expiring_soon")


class _Counted(Protocol):
    def count(self) -> int | None: ...


class WindowsToLook:
    """The engrams' validity windows, by id; only ever touched by jobs on the serial runner."""

    def __init__(self) -> None:
        self.session: ReviewSession | None = None
        self.windows: dict[str, Window] = {}

    def count(self, session: ReviewSession, changed: Iterable[str] | None) -> int:
        """Windows needing a look as of the session's now; `changed` None (or another session): read them all."""
        if changed is None or session is not self.session:
            self.session = session
            self.windows = {}
            changed = session.engrams_by_id().keys()
        for engram_id in changed:
            engram = session.engram(engram_id)
            window = Window.of(engram) if engram is not None else None
            if window is not None and window.present:
                self.windows[engram_id] = window
            else:
                self.windows.pop(engram_id, None)
        now = session.now()
        return sum(1 for w in self.windows.values() if w.state(now) in ATTENTION)


class TabCounts(QObject):
    def __init__(
        self,
        workspace: Workspace,
        tabs: QTabWidget,
        panes: dict[str, QWidget],
        sources: dict[str, Callable[[], int | None]],
    ) -> None:
        super().__init__(tabs)
        self.workspace, self.tabs, self.panes = workspace, tabs, panes
        self.sources = sources  # per pane name, a count read from what is computed (None: nothing to count yet)
        self.known: dict[str, int | None] = {}  # the counts given by `update` (the session's), kept between
        self._windows = WindowsToLook()
        self._validity: tuple[ReviewSession, int] | None = None

    def update(self, counts: dict[str, int] | None = None) -> None:
        """Every tab's text from the counts known now; `counts`: the session's (drafts, open tensions), when read."""
        session = self.workspace.session
        if counts is not None:
            self.known = {"drafts": counts["drafts"], "tensions": counts["open_tensions"]}
        validity = self._validity
        for index, (name, pane) in enumerate(self.panes.items()):
            if session is None:
                n = None
            elif name in self.known:
                n = self.known[name]
            elif name == "validity":
                n = validity[1] if validity is not None and validity[0] is session else None
            else:
                source = self.sources.get(name)
                n = source() if source is not None else None
            text = name.title() if n is None else f"{name.title()} ({n})"
            if self.tabs.tabText(index) != text and self.tabs.widget(index) is pane:
                self.tabs.setTabText(index, text)

    # -- the Validity count, on the serial runner ---------------------------------------------------------------

    def recount_windows(self, change: ChangeSet | None = None) -> None:
        """After a load or an explicit reload (None: every window read again), or a change: its engrams only (a
        decision's, or what a reload found differing, which names every engram added, changed or removed)."""
        session = self.workspace.session
        if session is None or not session.fully_loaded:
            return
        if change is not None and not change.engrams:
            return
        changed = None if change is None else list(change.engrams)
        windows = self._windows
        self.workspace.jobs.submit(
            lambda: (session, windows.count(session, changed)), self._windows_counted, self.workspace.fail
        )

    def _windows_counted(self, result: object) -> None:
        assert isinstance(result, tuple)
        self._validity = result
        self.update()

    def reloaded(self, change: object, explicit: bool) -> None:
        self.recount_windows(None if explicit or not isinstance(change, ChangeSet) else change)

    def applied(self, change: object) -> None:
        if isinstance(change, ChangeSet):
            self.recount_windows(change)


def counting(pane: object) -> Callable[[], int | None]:
    """A pane's own count (`count()`), for `TabCounts`' sources."""

    def count() -> int | None:
        counted: _Counted = pane  # type: ignore[assignment]
        return counted.count()

    return count


class _Window(Protocol):
    workspace: Workspace
    tabs: QTabWidget
    panes: dict[str, QWidget]
    conflicts_pane: ConflictsPane
    changes: ChangesPane
    scale: ScaleController
    opener: StoreController
    status_bar: StatusBar


def install(window: _Window) -> TabCounts:
    """The window's tab counts, told of what changes them; the status bar hands on the session's after every change."""

    def clusters() -> int | None:
        view = window.scale.view
        return None if view is None else len(view.clusters())

    sources = {"conflicts": counting(window.conflicts_pane), "clusters": clusters, "changes": counting(window.changes)}
    counts = TabCounts(window.workspace, window.tabs, window.panes, sources)
    window.conflicts_pane.count_changed.connect(counts.update)  # a scan, an answer
    window.opener.opening.connect(window.conflicts_pane.forget)  # (the opener is known here, not to the pane)
    window.scale.order_shown.connect(lambda _v: counts.update())  # a new ledger and its clusters
    window.workspace.context_changed.connect(counts.update)  # (the agent changes found show with it)
    window.workspace.applied.connect(counts.applied)
    window.opener.reloaded.connect(counts.reloaded)
    window.opener.loaded.connect(counts.recount_windows)
    window.status_bar.on_counts = counts.update  # the session's counts, after every change
    return counts
