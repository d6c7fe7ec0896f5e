"""What a change of palette redraws at once (View > Switch Theme, or the desktop's scheme when followed).

Qt repaints every widget with the new palette, but two things keep the old scheme until something else redraws
them: the style sheet's `palette(…)` colours (resolved when a widget is polished: the notices' background, the
buttons' and headers' borders), and the details' HTML, whose label and flag colours are written in when it is
rendered. The details on screen are rendered again (a hidden pane is drawn afresh when next shown: it is marked
stale), and the widgets are polished again: the window's own and the pane on screen at once, each hidden pane in a
turn of its own. Setting the application's style sheet again would polish every widget too, in one go: 500-800 ms
of the window's thread on the demo store (380 widgets); widget by widget it is 1-18 ms a pane."""

from __future__ import annotations

import weakref
from typing import Protocol

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QTabWidget, QWidget

from plur_desk.app.review.session import ReviewSession
from plur_desk.ui.common import theme


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
    @property
    def tabs(self) -> QTabWidget: ...
    @property
    def panes(self) -> dict[str, QWidget]: ...


def repolish(widgets: list[QWidget]) -> None:
    """Each widget polished again, so the style sheet's palette(…) colours are read from the palette now."""
    for widget in widgets:
        style = widget.style()
        style.unpolish(widget)
        style.polish(widget)
        widget.update()


def _subtree(widget: QWidget) -> list[QWidget]:
    return [widget, *widget.findChildren(QWidget)]


def redraw(window: _Window) -> None:
    tabs, panes = window.tabs, list(window.panes.values())
    shown = tabs.currentWidget()
    top = tabs.window()
    in_panes = {id(w) for pane in panes for w in _subtree(pane)}
    repolish([w for w in _subtree(top) if id(w) not in in_panes])  # the menus, toolbar, banner, tabs, status bar
    hidden = [pane for pane in panes if pane is not shown]
    if shown is not None:
        repolish(_subtree(shown))
    later = [weakref.ref(pane) for pane in hidden]

    def next_pane() -> None:
        while later:
            pane = later.pop(0)()
            if pane is not None:
                repolish(_subtree(pane))
                break
        if later:
            QTimer.singleShot(0, tabs, next_pane)  # keys and paints come between

    QTimer.singleShot(0, tabs, next_pane)
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
