"""Edit Window (W): valid_from / valid_until as dates with an optional UTC time, in a dialog made on first use
(its Qt classes are not made at launch)."""

from __future__ import annotations

from datetime import UTC, datetime

from PySide6.QtCore import QDate, QTime
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QTimeEdit,
    QWidget,
)

from plur_desk.domain.plur_rules.validity import Window, closes_at, opens_at


class WindowDialog(QDialog):
    """valid_from / valid_until as dates with an optional UTC time; either bound may be cleared."""

    def __init__(
        self, engram_id: str, window: Window, parent: QWidget | None = None, today: QDate | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("windowDialog")
        self.setWindowTitle(f"Validity of {engram_id}")
        from plur_desk.ui.validity.date_field import DateField  # on first use: not needed before the first draft

        form = QFormLayout(self)
        self.fields = {}
        for name, value in (("valid_from", window.valid_from), ("valid_until", window.valid_until)):
            enabled = QCheckBox("set")
            enabled.setAccessibleName(f"{name} set")
            moment = (opens_at if name == "valid_from" else closes_at)(value) if value else None
            initial = QDate(moment.year, moment.month, moment.day) if moment else (today or QDate.currentDate())
            date = DateField(initial, name)
            timed = QCheckBox("at a UTC time")
            time = QTimeEdit()
            time.setDisplayFormat("HH:mm")
            time.setAccessibleName(f"{name} time")
            enabled.setChecked(moment is not None)
            if moment is not None and value and len(value) > 10:
                timed.setChecked(True)
                time.setTime(QTime(moment.hour, moment.minute))
            date.changed.connect(lambda checked=enabled: checked.setChecked(True))  # typing a date sets it
            row = QHBoxLayout()
            for widget in (enabled, date, timed, time):
                row.addWidget(widget)
            form.addRow(name, row)
            self.fields[name] = (enabled, date, timed, time)
        self.error = QLabel()
        self.error.setObjectName("windowError")
        self.error.setWordWrap(True)
        form.addRow(self.error)
        note = QLabel("A date alone is the whole UTC day: valid_until 2026-12-31 holds until 23:59:59.999Z.")
        note.setWordWrap(True)
        form.addRow(note)
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        box.accepted.connect(self._accept)
        box.rejected.connect(self.reject)
        box.button(QDialogButtonBox.StandardButton.Save).setDefault(True)  # Enter saves from any field
        form.addRow(box)

    def value(self, name: str) -> str | None:
        enabled, date, timed, time = self.fields[name]
        if not enabled.isChecked() or not date.date().isValid():
            return None
        day = date.date().toString("yyyy-MM-dd")
        return f"{day}T{time.time().toString('HH:mm')}:00Z" if timed.isChecked() else day

    def problem(self) -> str:
        """Why the window cannot be saved as shown, or ''."""
        for name, (enabled, date, _timed, _time) in self.fields.items():
            if enabled.isChecked() and date.error():
                return f"✖ {name}: {date.error()}"
        start, end = self.value("valid_from"), self.value("valid_until")
        if (
            start
            and end
            and (opens_at(start) or datetime.min.replace(tzinfo=UTC))
            > (closes_at(end) or datetime.max.replace(tzinfo=UTC))
        ):
            return "✖ valid_from is after valid_until."
        return ""

    def _accept(self) -> None:
        problem = self.problem()
        self.error.setText(problem)
        if not problem:
            self.accept()
