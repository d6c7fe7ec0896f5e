"""Team review in the window: the Team Disagreements list (settle each as an audited decision) and Sync with Team."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, Signal
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

from plur_desk.app import team_review
from plur_desk.app.team import TeamDisagreement
from plur_desk.ui.workspace import Workspace

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
        self.list.clear()
        for row in rows:
            item = QListWidgetItem(row.summary)  # plain text: QListWidget never interprets markup
            item.setData(ROW_ROLE, row)
            self.list.addItem(item)
        count = len(rows)
        self.heading.setText(
            f"{count} disagreement(s) between reviewers wait for a decision." if rows else "No team disagreements."
        )
        if rows:
            self.list.setCurrentRow(0)
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


class TeamController(QObject):
    """The Team menu: the disagreements dialog (each settled as an audited decision) and Sync with Team; the work
    runs on the workspace's serial runner."""

    def __init__(self, workspace: Workspace, dialog_parent: QWidget, reload: Callable[[], None]) -> None:
        super().__init__(workspace)
        self.workspace = workspace
        self._parent = dialog_parent
        self._reload = reload
        self.dialog: TeamDialog | None = None

    def show_team(self) -> None:
        if self.workspace.session is None:
            return
        if self.dialog is None:
            self.dialog = TeamDialog(self._parent)
            self.dialog.settle_requested.connect(self._settle)
            self.dialog.sync_requested.connect(self.sync_team)
        self.refresh()
        self.dialog.show()
        self.dialog.activateWindow()

    def refresh(self) -> None:
        """Shown again after every change, and once the whole store is parsed (opened during a load)."""
        session = self.workspace.session
        if self.dialog is not None and session is not None:
            self.dialog.set_rows(team_review.disagreements(session))

    def _settle(self, row: TeamDisagreement, choice: str) -> None:
        session = self.workspace.session
        if session is None:
            return
        if choice in ("approved", "rejected"):
            self.workspace.change(lambda: team_review.settle_decision(session, row.record, choice))
        else:
            self.workspace.change(lambda: team_review.settle_two_winners(session, row.record, choice))

    def sync_team(self) -> None:
        path = self.workspace.store_path
        if path is None:
            return
        self.workspace.messages.status("Syncing with the team…")
        from plur_desk.app.sync import run_sync  # git sync's modules load when asked for, not at launch

        self.workspace.runner.submit(lambda: run_sync(path), self._synced, self.workspace.fail)

    def _synced(self, report: object) -> None:
        from plur_desk.app.sync_report import SyncReport

        assert isinstance(report, SyncReport)
        text = report.to_text()
        last = text.splitlines()[-1] if text else ""
        self.workspace.messages.status(last, 10000)
        if report.error:
            self.workspace.messages.error(f"Sync: {report.error}")
        if self.dialog is not None:
            self.dialog.set_report(text)
        self._reload()
        self.workspace.runner.submit(lambda: None, lambda _r: self.refresh())
