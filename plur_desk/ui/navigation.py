"""Moving between panes, search focus, timelines, help: main-window handlers from the action table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from plur_desk import __version__
from plur_desk.ui.dialogs import CommandPalette, ShortcutSheet

if TYPE_CHECKING:
    from plur_desk.ui.main_window import MainWindow

    _Base = MainWindow
else:
    _Base = object

PANES = ("drafts", "tensions", "validity", "history", "clusters", "writers")


class NavigationMixin(_Base):
    # -- navigation, help ----------------------------------------------------------------------------------

    def _pane_changed(self, index: int) -> None:
        self.search.blockSignals(True)
        self.search.clear()
        self.search.blockSignals(False)
        self.clear_refusal()  # a refusal concerns the pane it happened in
        pane = getattr(self, PANES[index])
        if pane in self._stale:
            self._stale.discard(pane)
            pane.refresh(None)
        pane.focus_queue()
        self._update_context()

    def show_drafts(self) -> None:
        self.tabs.setCurrentWidget(self.drafts)

    def show_tensions(self) -> None:
        self.tabs.setCurrentWidget(self.tensions)

    def show_validity(self) -> None:
        self.tabs.setCurrentWidget(self.validity)

    def show_history(self) -> None:
        self.tabs.setCurrentWidget(self.history)

    def focus_search(self) -> None:
        self.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search.selectAll()

    def show_shortcuts(self) -> None:
        ShortcutSheet(self).exec()

    def show_palette(self) -> None:
        CommandPalette(
            lambda action_id: self.qactions[action_id].trigger(),
            lambda action_id: self.qactions[action_id].isEnabled(),
            self,
        ).exec()

    def open_validity_of_current(self) -> None:
        engram_id = self.current_engram_id()
        if engram_id:
            self.validity.show_engram(engram_id)
            self.show_validity()

    def show_timeline(self) -> None:
        engram_id = self.current_engram_id()
        if engram_id:
            self.history.show_engram(engram_id)
            self.show_history()

    def current_engram_id(self) -> str | None:
        pane = PANES[self.tabs.currentIndex()]
        if pane == "drafts":
            return self.drafts.current_id()
        return getattr(self, pane).current_engram_id()

    def show_about(self) -> None:
        QMessageBox.about(
            self,
            "About plur_desk",
            f"<h3>plur_desk {__version__}</h3><p>A review console for PLUR "
            "memory stores: every human decision applied, audited and undoable.</p>",
        )
