"""Split in Time (T): the date from which the later of two engrams holds, in a dialog made on first use (its Qt
classes are not made at launch)."""

from __future__ import annotations

from PySide6.QtCore import QDate
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from plur_desk.ui.common.widgets import text_html as E  # stored text: escaped, hidden characters revealed


class SplitDialog(QDialog):
    def __init__(self, earlier: str, later: str, parent: QWidget | None = None, today: QDate | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("splitDialog")
        self.setWindowTitle("Split in time")
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Both were true, at different times. From which date does the later one hold?"))
        from plur_desk.ui.validity.date_field import DateField  # on first use: not needed before the first draft

        self.date = DateField(today or QDate.currentDate(), "Split date")
        layout.addWidget(self.date)
        self.preview = QLabel()
        self.preview.setWordWrap(True)
        layout.addWidget(self.preview)
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.ok = box.button(QDialogButtonBox.StandardButton.Ok)
        self.ok.setText("Split")
        self.ok.setDefault(True)
        box.accepted.connect(self._accept)
        box.rejected.connect(self.reject)
        layout.addWidget(box)
        self._earlier, self._later = earlier, later
        self.date.changed.connect(self._update)
        self._update()

    @property
    def iso(self) -> str:
        return self.date.date().toString("yyyy-MM-dd")

    def _accept(self) -> None:
        if self.date.date().isValid():
            self.accept()

    def _update(self) -> None:
        problem = self.date.error()
        self.ok.setEnabled(not problem)
        if problem:
            self.preview.setText(f"<p>✖ {E(problem)}</p>")
            return
        before = self.date.date().addDays(-1).toString("yyyy-MM-dd")
        self.preview.setText(
            f"<p><b>{E(self._earlier)}</b>: valid until {before}<br><b>{E(self._later)}</b>: valid "
            f"from {self.iso}<br>The tension is dismissed; nothing is retired.</p>"
        )
