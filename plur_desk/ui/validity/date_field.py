"""A date field that means what it shows: the ISO date typed or pasted, or a message saying why it is not one.

Replaces QDateEdit, whose section-by-section editing turned a typed `2026-06-01` into `2026-12-06` depending on
where the cursor was. The text is the value; the calendar button only writes text.
"""

from __future__ import annotations

import re
from datetime import date

from PySide6.QtCore import QDate, QEvent, QObject, QTimer, Signal
from PySide6.QtWidgets import QCalendarWidget, QHBoxLayout, QLineEdit, QMenu, QToolButton, QWidget, QWidgetAction

_ISO = re.compile(r"\s*(\d{4})-(\d{2})-(\d{2})(?:[T ][0-9:.]*(?:Z|[+-]\d{2}:?\d{2})?)?\s*\Z")


def parse_iso_date(text: str) -> tuple[date | None, str]:
    """(the date, "") for `YYYY-MM-DD` (a pasted instant's time part is ignored), else (None, why not)."""
    match = _ISO.match(text)
    if not text.strip():
        return None, "Type a date as YYYY-MM-DD."
    if match is None:
        return None, f"“{text.strip()}” is not a date: type it as YYYY-MM-DD."
    try:
        return date(int(match[1]), int(match[2]), int(match[3])), ""
    except ValueError:
        return None, f"{match[1]}-{match[2]}-{match[3]} does not exist."


class DateField(QWidget):
    """A line edit for YYYY-MM-DD (all of it selected on focus, so typing or pasting replaces it) and a calendar."""

    changed = Signal()

    def __init__(self, initial: QDate, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.edit = QLineEdit(initial.toString("yyyy-MM-dd"))
        self.edit.setObjectName(name.replace(" ", "_"))
        self.edit.setAccessibleName(name)
        self.edit.setPlaceholderText("YYYY-MM-DD")
        self.edit.installEventFilter(self)
        self.setFocusProxy(self.edit)
        self.calendar = QCalendarWidget()
        self.calendar.clicked.connect(self._picked)
        menu = QMenu(self)
        holder = QWidgetAction(menu)
        holder.setDefaultWidget(self.calendar)
        menu.addAction(holder)
        self._menu = menu
        button = QToolButton()
        button.setText("▾")
        button.setAccessibleName(f"{name}: calendar")
        button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        button.setMenu(menu)
        menu.aboutToShow.connect(self._sync_calendar)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.edit)
        layout.addWidget(button)
        self.edit.textChanged.connect(lambda _t: self.changed.emit())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.edit and event.type() == QEvent.Type.FocusIn:
            # After Qt places the cursor for the click; with the edit as context, dropped if its dialog is gone.
            QTimer.singleShot(0, self.edit, self.edit.selectAll)
        return False

    def _sync_calendar(self) -> None:
        valid = self.date()
        if valid.isValid():
            self.calendar.setSelectedDate(valid)

    def _picked(self, picked: QDate) -> None:
        self.setDate(picked)
        self._menu.hide()

    def date(self) -> QDate:
        """The date shown, or an invalid QDate when the text is not one."""
        value, _why = parse_iso_date(self.edit.text())
        return QDate(value.year, value.month, value.day) if value else QDate()

    def setDate(self, value: QDate) -> None:
        self.edit.setText(value.toString("yyyy-MM-dd"))

    def error(self) -> str:
        return parse_iso_date(self.edit.text())[1]
