"""Small widget factories shared by the panes, and the rules for showing stored text safely.

Text from the store is written by agents: it is data, never markup. Rich-text widgets get it only through
`text_html` (escaped, hidden characters revealed, whitespace kept); labels that show it are plain-text labels;
detail panes are `SafeBrowser`s, which load no resource and follow no link whatever their HTML says.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QAbstractItemModel, Qt, QUrl
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHeaderView,
    QLabel,
    QLayout,
    QSizePolicy,
    QSplitter,
    QTableView,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from plur_desk.domain.lint import reveal

# Keys and clicks that reach a question within this long of its appearing on its own (not opened by the key just
# pressed) were meant for what was there before it: longer than a person takes to notice something new and act.
GRACE_S = 0.5

Part = QWidget | QLayout | tuple[QWidget, int]  # a widget, a layout, or a widget with its stretch
Margins = tuple[int, int, int, int]
_LONG_WORD = re.compile(r"\S{201,}")


def dialog_open() -> bool:
    """Whether a modal dialog is open: then a key is the dialog's, whatever widget of the window it matches.

    Qt matches a widget's shortcut against the application's focus widget alone, and a dialog takes the focus only
    once the window system's activation of it is handled (a window manager slow to activate it; offscreen, after the
    timers due when it opened). A key typed into the dialog before that still matches the shortcuts of the list
    behind it (tests/ui/test_focus.py)."""
    return QApplication.activeModalWidget() is not None


def window_shortcut(
    keys: str,
    widget: QWidget,
    slot: Callable[[], object],
    context: Qt.ShortcutContext = Qt.ShortcutContext.WidgetShortcut,
) -> QShortcut:
    """A key of a widget in the window (commit a preview, save an edit, answer the waiting question) that does
    nothing while a modal dialog is open, as the window's actions do (ui/actions.py): it was meant for the dialog."""
    shortcut = QShortcut(QKeySequence(keys), widget)
    shortcut.setContext(context)  # (the constructor's context argument is not applied)
    shortcut.activated.connect(lambda: None if dialog_open() else slot())
    return shortcut


def escape(text: str) -> str:
    """`html.escape(text, quote=True)`, without importing `html`: that imports its table of 2,231 entities, a
    millisecond of every launch, and nothing here needs them."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace('"', "&quot;").replace("'", "&#x27;")


def text_html(value: object) -> str:
    """Stored text for a rich-text widget: escaped, hidden characters shown as ⟨U+…⟩ markers."""
    return escape(reveal(str(value)))


def tooltip_text(value: str) -> str:
    """A tooltip that is always shown as plain text (Qt renders a tooltip as rich text when it looks like HTML)."""
    return f"<p style='white-space:pre-wrap'>{text_html(value)}</p>" if value else ""


def shorten_long_words(text: str, limit: int = 200) -> str:
    """Words longer than `limit` cut with an ellipsis, so a label can wrap (a 10,000-character word cannot)."""
    return _LONG_WORD.sub(lambda m: m.group()[: limit - 1] + "…", text) if len(text) > limit else text


def plain_label(text: str = "", parent: QWidget | None = None) -> QLabel:
    """A label that never interprets its text as HTML."""
    label = QLabel(parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setText(text)
    return label


def banner_label() -> QLabel:
    """A plain-text message banner that wraps and never makes the window wider, whatever text it is given."""
    label = plain_label()
    label.setWordWrap(True)
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Minimum)
    return label


class SafeBrowser(QTextBrowser):
    """A read-only HTML view that loads nothing (images, style sheets) and navigates nowhere.

    Everything it shows is built by us with escaped text, so nothing should ever ask; `blocked` records any
    request that does arrive (the hostile-corpus test asserts it stays empty).

    Its vertical scroll bar is always there. Shown only when needed, every new text hid it (the document emptied)
    and showed it again (laid out): the view narrowed, the whole text was laid out a second time at the new width
    and the pane repainted, on each detail a selection or a late result brings. One update of a detail that
    scrolls took 8.1 ms (median, max 18 ms) against 4.1 ms (max 6.3) with the bar kept, offscreen, idle.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.blocked: list[str] = []
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)

    def loadResource(self, kind: int, name: QUrl | str) -> Any:
        self.blocked.append(name.toString() if isinstance(name, QUrl) else name)
        return None


def make_table(
    model: QAbstractItemModel,
    name: str,
    accessible: str,
    *,
    multi: bool,
    widths: Sequence[int] = (),
    parent: QWidget | None = None,
) -> QTableView:
    """A row-selecting table over `model`: no vertical header, alternating rows, interactive column widths."""
    table = QTableView(parent)
    table.setObjectName(name)
    table.setAccessibleName(accessible)
    table.setModel(model)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(
        QAbstractItemView.SelectionMode.ExtendedSelection if multi else QAbstractItemView.SelectionMode.SingleSelection
    )
    table.verticalHeader().hide()
    table.setAlternatingRowColors(True)
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    header.setStretchLastSection(True)
    for column, width in enumerate(widths):
        table.setColumnWidth(column, width)
    return table


def pane_side(*parts: Part, margins: Margins = (0, 0, 0, 0)) -> QWidget:
    """A widget holding `parts` top to bottom: a side of a pane's splitter."""
    widget = QWidget()
    _stack(QVBoxLayout(widget), parts, margins)
    return widget


def list_and_detail(
    pane: QWidget,
    top: QWidget,
    bottom: QWidget,
    *,
    stretch: tuple[int, int] | None = None,
    above: Sequence[Part] = (),
    below: Sequence[Part] = (),
) -> QSplitter:
    """The one pane style: the list (`top`) over its detail (`bottom`) in a vertical splitter whose line the
    reviewer drags, with what goes above and below it, inside the pane's 8-pixel margins. `stretch`: how the two
    share the height a taller window adds."""
    splitter = QSplitter(Qt.Orientation.Vertical, pane)
    splitter.addWidget(top)
    splitter.addWidget(bottom)
    for index, factor in enumerate(stretch or ()):
        splitter.setStretchFactor(index, factor)
    _stack(QVBoxLayout(pane), [*above, splitter, *below], (8, 8, 8, 8))
    return splitter


def _stack(layout: QVBoxLayout, parts: Sequence[Part], margins: Margins) -> None:
    layout.setContentsMargins(*margins)
    for part in parts:
        if isinstance(part, QLayout):
            layout.addLayout(part)
        elif isinstance(part, tuple):
            layout.addWidget(*part)
        else:
            layout.addWidget(part)
