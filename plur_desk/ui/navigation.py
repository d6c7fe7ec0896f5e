"""Moving between panes, the search field's focus, timelines, help: the navigation controller and its handlers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, cast

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QLineEdit, QStackedWidget, QTabWidget, QWidget

from plur_desk import __version__
from plur_desk.app.review.session import ChangeSet
from plur_desk.ui.messages import Messages

PANES = ("drafts", "tensions", "validity", "history", "conflicts", "clusters", "writers", "changes")


class Pane(Protocol):
    """What navigation asks of every pane but Drafts (whose queue the review controller fills)."""

    def refresh(self, change: ChangeSet | None) -> None: ...
    def concerns(self, change: ChangeSet) -> bool: ...
    def apply_search(self, text: str) -> None: ...
    def focus_queue(self) -> None: ...
    def has_selection(self) -> bool: ...
    def current_engram_id(self) -> str | None: ...


def as_pane(widget: QWidget) -> Pane:
    return cast(Pane, widget)


class NavigationController(QObject):
    """The tabs: which pane is on screen, hidden panes refreshed only when shown, and the View/Help handlers."""

    pane_changed = Signal()  # another pane is on screen (enabled actions follow)
    drafts_search_requested = Signal()  # the query applies to the drafts queue, which the review controller fills

    def __init__(
        self,
        tabs: QTabWidget,
        stack: QStackedWidget,
        panes: dict[str, QWidget],
        search_field: QLineEdit,
        show_engram: dict[str, Callable[[str], None]],
        messages: Messages,
        run_action: Callable[[str], None],
        action_enabled: Callable[[str], bool],
    ) -> None:
        super().__init__(tabs)
        self.tabs, self.stack, self.panes = tabs, stack, panes
        self.search_field = search_field
        self._show_engram = show_engram  # "validity" / "history": bring an engram into that pane
        self.messages = messages
        self._run_action, self._action_enabled = run_action, action_enabled
        self.stale: set[QWidget] = set()  # hidden panes whose content is out of date
        tabs.currentChanged.connect(self._pane_changed)

    # -- which pane ----------------------------------------------------------------------------------------

    def current_name(self) -> str:
        return PANES[self.tabs.currentIndex()]

    def current_pane(self) -> QWidget:
        return self.panes[self.current_name()]

    def pane_on_screen(self, pane: QWidget) -> bool:
        """True when `pane` is the pane the person sees (the store page is up and that tab is current)."""
        return self.stack.currentIndex() == 1 and self.tabs.currentWidget() is pane

    def store_on_screen(self) -> bool:
        return self.stack.currentIndex() == 1

    def changed(self, change: ChangeSet) -> None:
        """A change published (app/broadcast.py): the pane on screen shows it; one shown afresh shows everything."""
        self.refresh_panes(None if change.afresh else change)

    def refresh_panes(self, change: ChangeSet | None, panes: list[QWidget] | None = None) -> None:
        """The pane on screen now, when the change concerns it (always for None: a store opened, an explicit
        reload): one it does not concern keeps its rows, its selection and its detail as they are (scrolled where
        the reviewer left it). The hidden ones are shown afresh when next shown, whatever the change (a hidden pane
        costs nothing per key, and what reads by the clock, a tension's age, is read again then)."""
        current = self.tabs.currentWidget()
        for pane in panes if panes is not None else [p for n, p in self.panes.items() if n != "drafts"]:
            if pane is not current:
                self.stale.add(pane)
            elif change is None or as_pane(pane).concerns(change):
                as_pane(pane).refresh(change)

    def _pane_changed(self, index: int) -> None:
        self.search_field.blockSignals(True)
        self.search_field.clear()
        self.search_field.blockSignals(False)
        self.messages.clear_refusal()  # a refusal concerns the pane it happened in
        pane = self.panes[PANES[index]]
        if pane in self.stale:
            self.stale.discard(pane)
            as_pane(pane).refresh(None)
        as_pane(pane).focus_queue()
        self.pane_changed.emit()

    def apply_search(self) -> None:
        """The search field's query, applied to the pane on screen."""
        if self.current_name() == "drafts":
            self.drafts_search_requested.emit()
        else:
            as_pane(self.current_pane()).apply_search(self.search_field.text())

    def focus_results(self) -> None:
        as_pane(self.current_pane()).focus_queue()

    def current_engram_id(self) -> str | None:
        return as_pane(self.current_pane()).current_engram_id()

    # -- handlers ------------------------------------------------------------------------------------------

    def show(self, name: str) -> None:
        self.tabs.setCurrentWidget(self.panes[name])

    def show_drafts(self) -> None:
        self.show("drafts")

    def show_tensions(self) -> None:
        self.show("tensions")

    def show_validity(self) -> None:
        self.show("validity")

    def show_history(self) -> None:
        self.show("history")

    def show_conflicts(self) -> None:
        self.show("conflicts")

    def show_clusters(self) -> None:
        self.show("clusters")

    def show_writers(self) -> None:
        self.show("writers")

    def show_changes(self) -> None:
        self.show("changes")

    def focus_search(self) -> None:
        self.search_field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search_field.selectAll()

    def show_shortcuts(self) -> None:
        from plur_desk.ui.common.dialogs import ShortcutSheet  # dialogs load on first use, after the first draft

        ShortcutSheet(self.tabs.window()).exec()

    def show_palette(self) -> None:
        from plur_desk.ui.common.dialogs import CommandPalette

        CommandPalette(self._run_action, self._action_enabled, self.tabs.window()).exec()

    def open_validity_of_current(self) -> None:
        engram_id = self.current_engram_id()
        if engram_id:
            self._show_engram["validity"](engram_id)
            self.show_validity()

    def show_timeline(self) -> None:
        engram_id = self.current_engram_id()
        if engram_id:
            self._show_engram["history"](engram_id)
            self.show_history()

    def show_about(self) -> None:
        from PySide6.QtWidgets import QMessageBox  # made on first use, not at launch

        QMessageBox.about(
            self.tabs.window(),
            "About plur_desk",
            f"<h3>plur_desk {__version__}</h3><p>A review console for PLUR "
            "memory stores: every human decision applied, audited and undoable.</p>",
        )
