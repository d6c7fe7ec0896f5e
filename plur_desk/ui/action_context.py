"""Which actions are on, for what the window shows now (`UiContext`), and what undo and redo would take back."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QAction

from plur_desk.ui.actions import UiContext, update_enabled
from plur_desk.ui.navigation import NavigationController, as_pane
from plur_desk.ui.review.drafts_pane import DraftsPane
from plur_desk.ui.workspace import Workspace


class ActionContext:
    def __init__(
        self,
        workspace: Workspace,
        navigation: NavigationController,
        drafts: DraftsPane,
        read_only: Callable[[], bool],
        actions: Callable[[], dict[str, QAction]],
    ) -> None:
        self.workspace, self.navigation, self.drafts = workspace, navigation, drafts
        self._read_only, self._actions = read_only, actions
        self._shown: tuple[UiContext, tuple[str, str] | None] | None = None  # the actions' last context

    def ui_context(self) -> UiContext:
        session, nav = self.workspace.session, self.navigation
        pane = nav.current_pane()
        on_screen = nav.pane_on_screen(pane)
        ids = self.drafts.selected_ids() if on_screen and pane is self.drafts else []
        has_selection = bool(ids) if pane is self.drafts else as_pane(pane).has_selection()
        undo = session.undo_history if session is not None else None
        return UiContext(
            pane=nav.current_name() if on_screen else "",
            has_store=session is not None,
            read_only=bool(session and self._read_only()),
            has_selection=on_screen and has_selection,
            multi_selection=len(ids) > 1,
            can_undo=bool(undo and undo.can_undo),
            can_redo=bool(undo and undo.can_redo),
            editing=self.drafts.editing,
        )

    def update(self) -> None:
        """Enable the actions for the context, and name what undo and redo would do; only when that changed. Each
        is a call into Qt (44 on every selection change) and each call waits for the interpreter lock while a
        worker runs Python; the actions' predicates read the context alone."""
        ctx, session, actions = self.ui_context(), self.workspace.session, self._actions()
        shown = self._shown
        if shown is None or shown[0] != ctx:
            update_enabled(actions, ctx)
        texts = shown[1] if shown is not None else None  # as the actions say them (a closed store changes none)
        if session is not None:
            undo = session.undo_history
            undo_text = f"Undo {undo.undo_label()}" if undo.can_undo else "Undo"
            redo_text = f"Redo {undo.redo_label()}" if undo.can_redo else "Redo"
            if texts != (undo_text, redo_text):
                actions["edit.undo"].setText(undo_text)
                actions["edit.redo"].setText(redo_text)
                texts = (undo_text, redo_text)
        self._shown = (ctx, texts)
