"""Panes whose widgets are built the first time something needs them, not when the window is made.

The window makes six panes and shows one. Building four of the hidden ones (Tensions, Validity, Clusters, Writers:
their tables, details and splitters, and Qt's layout passes over them) took the warm launch ~30-40 ms of the
window's thread before the first draft could be shown. A pane made with `build_later()` has its signals, its models
and its plain state at once; its widgets (`_build`) and their wiring (`_connect`) come on first use: the first
attribute asked of it that only building makes (its table, its detail, …), or the first time it is shown,
whichever comes first; the window builds the rest once the first draft is on screen (`build_now`). What the window
adds to a pane's widgets (the keys of its actions on its list, its buttons) waits in `when_built`, so a pane
answers its keys the first time it is shown.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QWidget

EXPLICIT = Qt.WidgetAttribute.WA_WState_ExplicitShowHide


class BuiltLater:
    """Mix in before QWidget; the pane defines `_build` and `_connect` and calls `build_later()` in `__init__`."""

    built = True  # a pane that never called build_later() is built in its constructor

    def build_later(self) -> None:
        self.built = False
        self._when_built: list[Callable[[], None]] = []

    def when_built(self, do: Callable[[], None]) -> None:
        """`do()` once the widgets exist (now, if they do)."""
        if self.built:
            do()
        else:
            self._when_built.append(do)

    def build_now(self) -> None:
        if self.built:
            return
        self.built = True
        self._build()  # type: ignore[attr-defined]
        self._connect()  # type: ignore[attr-defined]
        waiting, self._when_built = self._when_built, []
        for do in waiting:
            do()

    def showEvent(self, event: QShowEvent) -> None:
        if not self.built:
            self.build_now()
            # Shown now, not on the next turn of the event loop (what Qt does for widgets put in the layout of a
            # widget already visible): a key pressed at once must find the pane's list visible, or its keys are
            # not live. The same rule as Qt's: a widget hidden on purpose stays hidden.
            for child in self.children():  # type: ignore[attr-defined]
                if isinstance(child, QWidget) and not (child.isHidden() and child.testAttribute(EXPLICIT)):
                    child.setVisible(True)
        super().showEvent(event)  # type: ignore[misc]

    if not TYPE_CHECKING:  # for the type checker a pane has its widgets; they are made on the first ask

        def __getattr__(self, name: str) -> Any:
            """Only for an attribute not found: a widget of a pane not built yet (building makes it)."""
            if self.built or name.startswith("__"):
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            self.build_now()
            return getattr(self, name)
