"""The Drafts pane's decisions as main-window handlers: approve, reject, edit, skip, and the rubber-stamp guard."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from plur_desk.app.rows import DraftRow
from plur_desk.app.session import ChangeSet
from plur_desk.domain.seen import Seen, seen_engram
from plur_desk.ui.conflicts_support import CONFLICT_NOTE
from plur_desk.ui.detail import engram_html
from plur_desk.ui.dialogs import BulkDialog, LevelDialog, ReasonDialog

if TYPE_CHECKING:
    from plur_desk.ui.main_window import MainWindow

    _Base = MainWindow
else:
    _Base = object

# What a bulk verdict asks about explicitly: drafts PLUR would not inject now, or whose text needs a second look.
BULK_FLAGS = ("expired", "not yet valid", "credential-like string", "instruction-like text", "rejected before")


class DraftActionsMixin(_Base):
    approval_clock = staticmethod(time.monotonic)  # when each approval happened (tests substitute their own)
    # -- draft actions ---------------------------------------------------------------------------------------

    def _draft_selected(self) -> None:
        session, row = self.session, self.drafts.current()
        if session is not None and row is not None:
            engram = session.engram(row.id)
            html = engram_html(
                session,
                row.id,
                rejected_before=row.rejected_before,
                similar=self.similar_to(row.id),
                conflicts=[w.text() for w in self.conflicts_for(row.id)],
            )
            self.drafts.show_detail(html, row, seen_engram(engram) if engram is not None else None)
        elif row is None:
            self.drafts.show_detail("")
        self._update_context()

    def run_change(self, fn: Callable[[], ChangeSet], select_after: str | None = None) -> None:
        self._pending_select = select_after
        if select_after:
            self.drafts.select_id(select_after)  # move on at once; the write finishes in the background
        self.workspace.change(fn)

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

    def _shown_drafts(self) -> list[tuple[DraftRow, Seen]]:
        """The drafts a verdict acts on, each with what was rendered of it; empty unless the Drafts pane is on
        screen with a selection whose detail shows the current row as listed."""
        if self.session is None or self.drafts.editing or not self.pane_on_screen(self.drafts):
            return []
        rows = self.drafts.selected_rows()
        if len(rows) == 1:
            seen = self.drafts.displayed_seen()
            if seen is None or seen.id != rows[0].id:
                self.statusBar().showMessage("The detail does not show this draft yet; nothing was decided.", 4000)
                return []
            return [(rows[0], seen)]
        return [(row, row.seen) for row in rows]  # many: each as its row was rendered in the list

    def _confirm_bulk(
        self, shown: list[tuple[DraftRow, Seen]], verb: str, conflicts: list[str] | None = None
    ) -> tuple[bool, str]:
        if len(shown) <= 1:
            return True, ""
        flagged = [(r.id, ", ".join(f for f in r.flags if f in BULK_FLAGS), r.statement) for r, _ in shown]
        recent = self.settings.recent_notes if verb == "approve" else self.settings.recent_reasons
        extra = f"{CONFLICT_NOTE}\n" + "\n".join(conflicts) if conflicts else ""  # the same one question
        dialog = BulkDialog(verb, len(shown), [f for f in flagged if f[1]], recent, self, extra=extra)
        if dialog.exec() != BulkDialog.DialogCode.Accepted:
            return False, ""
        if dialog.reason:
            remember = self.settings_store.remember_note if verb == "approve" else self.settings_store.remember_reason
            remember(self.settings, dialog.reason)
        return True, dialog.reason

    def approve_selected(
        self, level: str | None = None, note: str = "", shown: list[tuple[DraftRow, Seen]] | None = None
    ) -> None:
        shown = shown or self._shown_drafts()
        if not shown or self.session is None:
            return
        ids = [s.id for _, s in shown]
        conflicts = self.conflict_lines(ids)
        ok, bulk_note = self._confirm_bulk(shown, "approve", conflicts)
        if not ok or (len(ids) == 1 and conflicts and not self.ask_about_conflicts(conflicts)):
            return
        self._note_approval(len(shown))
        session, chosen = self.session, level or self.settings.default_level
        text, seen = note or bulk_note, [s for _, s in shown]
        self.run_change(lambda: session.approve(seen, chosen, text), self.drafts.id_after([s.id for s in seen]))

    def approve_selected_level(self) -> None:
        shown = self._shown_drafts()
        if not shown:
            return
        dialog = LevelDialog(len(shown), self.settings.default_level, self)
        if dialog.exec() == LevelDialog.DialogCode.Accepted:
            self.approve_selected(dialog.level, dialog.note.text().strip(), shown)

    def reject_selected(self) -> None:
        shown = self._shown_drafts()
        if not shown or self.session is None:
            return
        if len(shown) > 1:
            ok, reason = self._confirm_bulk(shown, "reject")
        else:
            ok, reason = self._ask_reason(shown[0][0])
        if not ok or not reason:
            return
        session, seen = self.session, [s for _, s in shown]
        self.run_change(lambda: session.reject(seen, reason), self.drafts.id_after([s.id for s in seen]))

    def _ask_reason(self, row: DraftRow) -> tuple[bool, str]:
        dialog = ReasonDialog(
            f"Reject {row.id}",
            "Why is this wrong? The reason is recorded, and the same statement is flagged "
            "if an agent asserts it again.",
            self.settings.recent_reasons,
            self,
        )
        if row.rejected_before is not None:  # a re-assertion: Enter rejects it again for the same reason
            dialog.combo.setCurrentText(row.rejected_before.reason)
        if dialog.exec() != ReasonDialog.DialogCode.Accepted or not dialog.reason:
            return False, ""
        self.settings_store.remember_reason(self.settings, dialog.reason)
        return True, dialog.reason

    def edit_selected(self) -> None:
        shown = self._shown_drafts()
        if len(shown) == 1:
            row, seen = shown[0]
            self.drafts.start_edit(seen, row.statement)
            self._update_context()

    def _save_edit(self, seen: Seen, text: str) -> None:
        session = self.session
        conflicts = self.conflict_lines([seen.id], text) if session is not None else []
        if session is not None and (not conflicts or self.ask_about_conflicts(conflicts, "Save")):
            self.run_change(lambda: session.edit_statement(seen, text), seen.id)

    def skip(self) -> None:
        self.drafts.step_selection(1)

    def select_next(self) -> None:
        self.drafts.step_selection(1)

    def select_previous(self) -> None:
        self.drafts.step_selection(-1)

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
