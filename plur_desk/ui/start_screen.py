"""The page shown while no store is open: a line of text and the two ways to open one."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget


def start_screen(open_demo: Callable[[], object], open_store: Callable[[], object]) -> tuple[QWidget, QLabel]:
    """The page and its text label (the window says there why no store is open)."""
    page = QWidget()
    page.setObjectName("startScreen")
    layout = QVBoxLayout(page)
    layout.addStretch(1)
    text = QLabel()
    text.setWordWrap(True)
    text.setAlignment(Qt.AlignmentFlag.AlignCenter)
    layout.addWidget(text)
    demo = QPushButton("Open the demo store")
    demo.setObjectName("openDemo")
    demo.clicked.connect(lambda: open_demo())
    other = QPushButton("Open a store…")
    other.clicked.connect(lambda: open_store())
    for button in (demo, other):
        button.setMaximumWidth(260)
        layout.addWidget(button, 0, Qt.AlignmentFlag.AlignHCenter)
    layout.addStretch(2)
    return page, text


def no_store_text(problem: str) -> str:
    """The start page's text when a store could not be opened: why (agent text is data: escaped)."""
    from plur_desk.ui.common.widgets import text_html

    return (
        f"<h2>No PLUR store here</h2><p>{text_html(problem)}</p>"
        "<p>Open the demo store to see plur_desk on realistic data, or pick a store.</p>"
    )
