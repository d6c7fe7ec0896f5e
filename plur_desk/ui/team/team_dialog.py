"""The Team Disagreements dialog: the list (agent text as plain text) and the ways to settle one, as intent signals."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from plur_desk.app.team.disagreements import TeamDisagreement

DECISION_KINDS = ("approve-vs-reject", "approve-vs-unapprove", "two-edits", "deleted-vs-edited")
ROW_ROLE = Qt.ItemDataRole.UserRole


class TeamDialog(QDialog):
    """Lists disagreements as plain text (agent-written statements are never markup) with the ways to settle one."""

    settle_requested = Signal(object, str)  # the TeamDisagreement, and "approved" / "rejected" / a winner id
    sync_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("teamDialog")
        self.setWindowTitle("Team Disagreements")
        self.resize(900, 520)
        self._build()
        self._connect()

    def _build(self) -> None:
        self.heading = QLabel()
        self.heading.setTextFormat(Qt.TextFormat.PlainText)
        self.list = QListWidget()
        self.list.setObjectName("teamDisagreements")
        self.list.setAccessibleName("Team disagreements")
        self.list.setWordWrap(True)
        self.keep_approval = QPushButton("Keep &Approval")
        self.keep_rejection = QPushButton("Keep &Rejection")
        self.winner_a = QPushButton()
        self.winner_b = QPushButton()
        self.sync = QPushButton("&Sync with Team")
        for button, name in (
            (self.keep_approval, "Keep the approval: the engram becomes active again"),
            (self.keep_rejection, "Keep the rejection: the engram stays retired"),
            (self.winner_a, "Keep this engram as the tension's winner"),
            (self.winner_b, "Keep this engram as the tension's winner"),
            (self.sync, "Fetch, merge and push the store"),
        ):
            button.setAccessibleName(name)
            button.setToolTip(name)
        self.report = QPlainTextEdit()
        self.report.setObjectName("syncReport")
        self.report.setReadOnly(True)
        self.report.setAccessibleName("Last sync report")
        self.report.setMaximumHeight(150)
        buttons = QHBoxLayout()
        for button in (self.keep_approval, self.keep_rejection, self.winner_a, self.winner_b):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.sync)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.report)
        layout.addWidget(close)

    def _connect(self) -> None:
        self.list.currentItemChanged.connect(lambda *_: self._update_buttons())
        self.keep_approval.clicked.connect(lambda: self._settle("approved"))
        self.keep_rejection.clicked.connect(lambda: self._settle("rejected"))
        self.winner_a.clicked.connect(lambda: self._settle(self.winner_a.property("engram")))
        self.winner_b.clicked.connect(lambda: self._settle(self.winner_b.property("engram")))
        self.sync.clicked.connect(self.sync_requested.emit)

    def set_rows(self, rows: list[TeamDisagreement]) -> None:
        """Each with the statements it is about (a settlement is about that text); the selection stays on the
        same record when it is still listed."""
        from plur_desk.app.team.team_review import shown_texts

        was = self.current()
        self.list.clear()
        for row in rows:
            lines = [row.summary, *(f"    {ident}: {text}" for ident, text in shown_texts(row.seen))]
            item = QListWidgetItem("\n".join(lines))  # plain text: QListWidget never interprets markup
            item.setData(ROW_ROLE, row)
            self.list.addItem(item)
        count = len(rows)
        self.heading.setText(
            f"{count} disagreement(s) between reviewers wait for a decision." if rows else "No team disagreements."
        )
        if rows:
            keep = [k for k, row in enumerate(rows) if was is not None and row.record == was.record]
            self.list.setCurrentRow(keep[0] if keep else 0)
        self._update_buttons()

    def set_report(self, text: str) -> None:
        self.report.setPlainText(text)

    def current(self) -> TeamDisagreement | None:
        item = self.list.currentItem()
        row = item.data(ROW_ROLE) if item is not None else None
        return row if isinstance(row, TeamDisagreement) else None

    def _update_buttons(self) -> None:
        row = self.current()
        decision = row is not None and row.kind in DECISION_KINDS
        tension = row is not None and not decision and len(row.engrams) == 2
        self.keep_approval.setEnabled(decision)
        self.keep_rejection.setEnabled(decision)
        for button, index in ((self.winner_a, 0), (self.winner_b, 1)):
            button.setVisible(tension)
            if tension and row is not None:
                button.setText(f"Winner: {row.engrams[index]}")
                button.setProperty("engram", row.engrams[index])

    def _settle(self, choice: object) -> None:
        row = self.current()
        if row is not None and isinstance(choice, str):
            self.settle_requested.emit(row, choice)
