"""The Drafts pane's decisions as main-window handlers: approve, reject, edit, skip, and the rubber-stamp guard."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from plur_desk.app.session import ChangeSet
from plur_desk.ui.conflicts_support import CONFLICT_NOTE
from plur_desk.ui.detail import engram_html
from plur_desk.ui.dialogs import LevelDialog, ReasonDialog

if TYPE_CHECKING:
    from plur_desk.ui.main_window import MainWindow

    _Base = MainWindow
else:
    _Base = object


class DraftActionsMixin(_Base):
    approval_clock = staticmethod(time.monotonic)  # when each approval happened (tests substitute their own)
    # -- draft actions ---------------------------------------------------------------------------------------

    def _draft_selected(self) -> None:
        session, row = self.session, self.drafts.current()
        if session is not None and row is not None:
            self.drafts.show_detail(
                engram_html(
                    session,
                    row.id,
                    rejected_before=row.rejected_before,
                    similar=self.similar_to(row.id),
                    conflicts=[w.text() for w in self.conflicts_for(row.id)],
                )
            )
        elif row is None:
            self.drafts.show_detail("")
        self._update_context()

    def run_change(self, fn: Callable[[], ChangeSet], select_after: str | None = None) -> None:
        self._pending_select = select_after
        if select_after:
            self.drafts.select_id(select_after)  # move on at once; the write finishes in the background
        self.runner.submit(fn, self._applied, self._failed)

    def _applied(self, change: object) -> None:
        assert isinstance(change, ChangeSet)
        self.show_message(" · ".join(change.warnings))
        self.statusBar().showMessage(change.message[:1].upper() + change.message[1:], 5000)
        self.refresh_all(change)
        if change.engrams:
            self.search_after_change(change.engrams, False)
        if change.engrams or change.tensions:
            self.start_conflicts()
        self.changes_applied.emit(change)

    def _selection(self) -> list[str]:
        if self.session is None or self.drafts.editing:
            return []
        return self.drafts.selected_ids()

    def _confirm_bulk(self, ids: list[str], verb: str, conflicts: list[str] | None = None) -> tuple[bool, str]:
        if len(ids) <= 1:
            return True, ""
        prompt = f"{verb.capitalize()} all {len(ids)} selected drafts? Give a reason; it is recorded on each of them."
        dialog = ReasonDialog(
            f"{verb.capitalize()} {len(ids)} drafts",
            prompt,
            self.settings.recent_reasons,
            self,
            ok_text=f"{verb.capitalize()} {len(ids)}",
        )
        if conflicts:  # the one question also says what the selection may contradict (as plain text)
            label = dialog.findChild(QLabel)
            label.setTextFormat(Qt.TextFormat.PlainText)
            label.setText(f"{prompt}\n\n{CONFLICT_NOTE}\n" + "\n".join(conflicts))
        if dialog.exec() != ReasonDialog.DialogCode.Accepted:
            return False, ""
        return True, dialog.reason

    def approve_selected(self, level: str | None = None, note: str = "") -> None:
        ids = self._selection()
        if not ids or self.session is None:
            return
        conflicts = self.conflict_lines(ids)
        ok, bulk_note = self._confirm_bulk(ids, "approve", conflicts)
        if not ok or (len(ids) == 1 and conflicts and not self.ask_about_conflicts(conflicts)):
            return
        self._note_approval(len(ids))
        session, chosen = self.session, level or self.settings.default_level
        text = note or bulk_note
        self.run_change(lambda: session.approve(ids, chosen, text), self.drafts.id_after(ids))

    def approve_selected_level(self) -> None:
        ids = self._selection()
        if not ids:
            return
        dialog = LevelDialog(len(ids), self.settings.default_level, self)
        if dialog.exec() == LevelDialog.DialogCode.Accepted:
            self.approve_selected(dialog.level, dialog.note.text().strip())

    def reject_selected(self) -> None:
        ids = self._selection()
        if not ids or self.session is None:
            return
        title = f"Reject {len(ids)} drafts" if len(ids) > 1 else f"Reject {ids[0]}"
        dialog = ReasonDialog(
            title,
            "Why is this wrong? The reason is recorded, and the same statement is flagged "
            "if an agent asserts it again.",
            self.settings.recent_reasons,
            self,
        )
        earlier = self.drafts.current().rejected_before if len(ids) == 1 and self.drafts.current() else None
        if earlier is not None:  # a re-assertion: Enter rejects it again for the same reason
            dialog.combo.setCurrentText(earlier.reason)
        if dialog.exec() != ReasonDialog.DialogCode.Accepted or not dialog.reason:
            return
        reason, session = dialog.reason, self.session
        self.settings_store.remember_reason(self.settings, reason)
        self.run_change(lambda: session.reject(ids, reason), self.drafts.id_after(ids))

    def edit_selected(self) -> None:
        row = self.drafts.current()
        if row is not None and self.session is not None:
            self.drafts.start_edit(row.id, row.statement)
            self._update_context()

    def _save_edit(self, engram_id: str, text: str) -> None:
        session = self.session
        conflicts = self.conflict_lines([engram_id], text) if session is not None else []
        if session is not None and (not conflicts or self.ask_about_conflicts(conflicts, "Save")):
            self.run_change(lambda: session.edit_statement(engram_id, text), engram_id)

    def skip(self) -> None:
        self.drafts.move(1)

    def select_next(self) -> None:
        self.drafts.move(1)

    def select_previous(self) -> None:
        self.drafts.move(-1)

    def _note_approval(self, count: int) -> None:
        """A long run of approvals, each a second or less after the last, gets a gentle warning."""
        now = self.approval_clock()
        self._approvals.append(now)
        run, limit = self.settings.rubber_stamp_run, self.settings.rubber_stamp_seconds
        recent = list(self._approvals)[-run:]
        if count == 1 and len(recent) == run and all(b - a <= limit for a, b in itertools.pairwise(recent)):
            self.drafts.show_banner(
                f"You approved {run} drafts in {recent[-1] - recent[0]:.0f} s. Review must not "
                "become a reflex: each approval puts the statement into your agents' context."
            )
            self._approvals.clear()
        elif count == 1 and len(recent) >= 2 and recent[-1] - recent[-2] > 3 * limit:
            self.drafts.show_banner("")
