"""What a change of palette redraws at once (View > Switch Theme, or the desktop's scheme when followed).

Qt repaints every widget with the new palette, but two things keep the old scheme until something else redraws
them: the style sheet's `palette(…)` colours (resolved when a widget is polished: the notices' background and
border), and the details' HTML, whose label and flag colours are written in when it is rendered. Both are redone
here, for the details on screen; a hidden pane is drawn afresh when it is next shown (it is marked stale)."""

from __future__ import annotations

import weakref
from typing import Protocol

from PySide6.QtWidgets import QApplication

from plur_desk.app.session import ReviewSession
from plur_desk.ui import theme


class _Review(Protocol):
    def show_current(self, again: bool = True) -> None: ...


class _Navigation(Protocol):
    def refresh_panes(self, change: None) -> None: ...


class _Window(Protocol):
    @property
    def session(self) -> ReviewSession | None: ...
    @property
    def review(self) -> _Review: ...
    @property
    def navigation(self) -> _Navigation: ...


def redraw(window: _Window) -> None:
    app = QApplication.instance()
    if isinstance(app, QApplication) and app.styleSheet():
        app.setStyleSheet(app.styleSheet())  # polished again: palette(…) in the sheet reads the new palette
    if window.session is None:
        return
    window.review.show_current()  # the draft's detail, rendered again with the scheme's colours
    window.navigation.refresh_panes(None)  # the pane on screen afresh; the hidden ones when next shown


def follow(window: _Window) -> None:
    """Redraw `window` after every change of palette while it lives (held weakly: the listener keeps no window)."""
    ref = weakref.ref(window)

    def listener() -> None:
        alive = ref()
        if alive is not None:
            redraw(alive)

    theme.listen(window, listener)
