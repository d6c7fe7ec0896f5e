"""The team controller: the Team menu's disagreements dialog (each settled as an audited decision) and Sync with
Team, the work on the session's lane."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QWidget

from plur_desk.app.team import team_review
from plur_desk.app.team.disagreements import TeamDisagreement
from plur_desk.infra.errors import Outcome, told
from plur_desk.ui.workspace import Workspace

if TYPE_CHECKING:
    from plur_desk.ui.team.team_dialog import TeamDialog


class TeamController(QObject):
    """The Team menu: the disagreements dialog (each settled as an audited decision) and Sync with Team; the work
    runs on the session's lane."""

    def __init__(self, workspace: Workspace, dialog_parent: QWidget, reload: Callable[[], None]) -> None:
        super().__init__(workspace)
        self.workspace = workspace
        self._parent = dialog_parent
        self._reload = reload
        self.dialog: TeamDialog | None = None
        workspace.changes.subscribe(lambda change: self.refresh() if change.by_reviewer else None, deferred=True)

    def show_team(self) -> None:
        if self.workspace.session is None:
            return
        if self.dialog is None:
            from plur_desk.ui.team.team_dialog import TeamDialog  # on first use: not needed before the first draft

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
        seen = row.seen  # the record as the list showed it: settled only while it still reads so
        if seen is None:
            self.workspace.messages.error(told(f"{row.record} is not in the store as listed", Outcome.NOTHING_WRITTEN))
            return
        if choice in ("approved", "rejected"):
            self.workspace.change(lambda: team_review.settle_decision(session, row.record, choice, seen=seen))
        else:
            self.workspace.change(lambda: team_review.settle_two_winners(session, row.record, choice, seen))

    def sync_team(self) -> None:
        path = self.workspace.store_path
        if path is None:
            return
        self.workspace.messages.status("Syncing with the team…")
        from plur_desk.app.team.sync import run_sync  # git sync's modules load when asked for, not at launch

        self.workspace.jobs.submit(lambda: run_sync(path), self._synced, self.workspace.fail)

    def _synced(self, report: object) -> None:
        from plur_desk.app.team.sync_report import SyncReport

        assert isinstance(report, SyncReport)
        text = report.to_text()
        last = text.splitlines()[-1] if text else ""
        self.workspace.messages.status(last, 10000)
        if report.error:
            self.workspace.messages.error(f"Sync: {report.error}")
        if self.dialog is not None:
            self.dialog.set_report(text)
        self._reload()
        self.workspace.jobs.submit(lambda: None, lambda _r: self.refresh())
