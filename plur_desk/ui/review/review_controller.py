"""The review controller: the drafts queue and its detail, the decisions on drafts (approve, reject, edit, skip),
undo and redo, and the rubber-stamp guard."""

from __future__ import annotations

import functools
import itertools
import operator
import time
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from itertools import compress
from typing import NamedTuple

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QWidget

from plur_desk.app.review.rows import DraftRow, aged_only
from plur_desk.app.review.session import ChangeSet, ReviewSession
from plur_desk.domain.seen import Seen, seen_engram
from plur_desk.ui.common.widgets import text_html
from plur_desk.ui.navigation import NavigationController
from plur_desk.ui.review.approval_checks import ApprovalChecks, Asked, answered
from plur_desk.ui.review.detail import (
    CHECKING_HTML,
    SIMILAR_PENDING_HTML,
    TIMELINE_PENDING_HTML,
    conflicts_html,
    engram_html,
    similar_html,
    timeline_html,
)
from plur_desk.ui.review.drafts_pane import DraftsPane
from plur_desk.ui.review.held_undo import UndoBehindCheck
from plur_desk.ui.review.waiting_question import Waiting, WaitingQuestion
from plur_desk.ui.scale.scale_support import OrderState, ScaleController
from plur_desk.ui.search.search_support import SearchController, Similar
from plur_desk.ui.tensions.conflicts_support import Check, Checked, ConflictsController, lines_of
from plur_desk.ui.workspace import Workspace

# How long the selection rests on a draft before its extras (the contradiction check, similar engrams, history) are
# read: longer than a key's auto-repeat interval (about 33 ms), so holding J reads nothing for the drafts it passes
# over and the window's thread has the cores to itself while it moves; a draft the reviewer stops on is read at once
# after that. The detail says "Checking…" meanwhile, and a verdict never rests on the extras.
EXTRAS_AFTER_MS = 50
_ID = operator.attrgetter("id")
AGED_MAX = 64  # rows derived again as time passed that a decision's update repaints in place; more: a new listing
EXTRAS = "detail.extras"  # the read pool's channel for them


class Listing(NamedTuple):
    """What the drafts listed were made from: the session's queue at a generation, the search, the queue's order,
    and the list's version then (any other change of the list, a header sort or a new risk order, moves it on)."""

    session: weakref.ref[ReviewSession]  # held weakly: a listing never keeps a closed store's session alive
    generation: int
    query: str
    order: OrderState
    version: int


class ReviewController(QObject):
    approval_clock = staticmethod(time.monotonic)  # when each approval happened (tests substitute their own)

    def __init__(
        self,
        workspace: Workspace,
        drafts: DraftsPane,
        search: SearchController,
        conflicts: ConflictsController,
        scale: ScaleController,
        navigation: NavigationController,
        dialog_parent: QWidget,
    ) -> None:
        super().__init__(workspace)
        self.workspace = workspace
        self.drafts = drafts
        self._search, self._conflicts, self._scale, self._navigation = search, conflicts, scale, navigation
        self._parent = dialog_parent
        self.pending_select: str | None = None  # the draft to select once the change under way is shown
        self._approvals: deque[float] = deque(maxlen=64)
        self._checked: Checked | None = None  # the last contradiction check of one draft
        self._extras_due: tuple[DraftRow, Check | None, Similar | None] | None = None
        self._extras_timer = QTimer(self)
        self._extras_timer.setSingleShot(True)
        self._extras_timer.setInterval(EXTRAS_AFTER_MS)
        self._extras_timer.timeout.connect(self._read_due_extras)
        self._listed: Listing | None = None
        self._left_out = 0  # flagged drafts the last bulk verdict left in the queue
        self.question = WaitingQuestion(drafts.focus_queue, drafts)  # approvals that may contradict, waiting
        drafts.add_under_queue(self.question)
        self._held = UndoBehindCheck(workspace, self.question)  # undo/redo while an approval is checked or waits
        self._checks = ApprovalChecks(workspace, self._held, dialog_parent)  # each approval's own check, in order
        self._decided = 0  # changes handed to the runner (whether a checked approval was asked for)
        scale.order_shown.connect(self._order_shown)
        workspace.changes.subscribe(lambda _change: self.refresh_queue())  # whatever changed: the queue may move
        drafts.selection_changed.connect(self.show_current)
        drafts.edit_saved.connect(self._save_edit)
        drafts.edit_cancelled.connect(workspace.context_changed.emit)

    # -- the queue and the detail ----------------------------------------------------------------------------

    def refresh_queue(self) -> None:
        """The queue in its order, narrowed by the search field, keeping (or moving to) the selected draft."""
        query = self._search.text()
        keep = self.pending_select or self.drafts.current_id()
        self.question.keep_only(self.workspace.session)  # a question about another store's draft is dropped
        if not self._drop_gone(keep, query):
            generation, rows = self._scale.queue_rows(lambda rows: self._filtered(rows, query))
            self.drafts.search_hint = self._search.hint_for(query)
            self.drafts.set_rows(rows, keep=keep, query=query)
            self._listed = self._listing(generation, query)
        self.pending_select = None
        self.show_current(again=False)  # the next draft was rendered when the decision moved to it

    def search_changed(self) -> None:
        """The search field's query applies to the queue. Its answer is read on the read pool; until it is in, the
        list stays as it is (`SearchController.matching_ids`), so nothing is listed for the asking: the answer's
        arrival applies the query again, and the queue is listed then, narrowed to it (listing the whole queue
        again to show the same rows took the window 20-28 ms per pause in typing at 9,587 drafts)."""
        query = self._search.text()
        if query.strip():
            self._search.matching_ids(query)  # asked now, unless its answer is in
            if self._search.searching():
                return
        self.refresh_queue()

    def _listing(self, generation: int, query: str) -> Listing | None:
        session = self.workspace.session
        if session is None:
            return None
        return Listing(weakref.ref(session), generation, query, self._scale.order_state(), self.drafts.model.version)

    def _order_shown(self, version: int) -> None:
        """The scale view put the rows listed in its current order: the listing holds for that order now."""
        listed = self._listed
        if listed is not None and listed.version == version:
            self._listed = listed._replace(order=self._scale.order_state(), version=self.drafts.model.version)

    def _drop_gone(self, keep: str | None, query: str) -> bool:
        """When the rows listed are the queue's of a generation, and since then rows only left the queue (the
        usual decision), take those out of the list and nothing else: the other rows are the same objects in the
        same order a new listing would give (each row's place in the queue's order, the risk order and the
        reviewer's sort is its own). Costs the rows that left, not the queue (a pass over 10,000 rows, the risk
        order and the reviewer's sort took most of the window's work after each decision). A search narrowing
        the list asks the index again instead: its answer may have moved with the change."""
        listed, session = self._listed, self.workspace.session
        if (
            listed is None
            or session is None
            or listed.session() is not session
            or query.strip()
            or listed.query.strip()
            or listed.version != self.drafts.model.version
            or not self._scale.order_state().holds(listed.order)
        ):
            return False
        changes = session.queue.changed_since(listed.generation)
        aged = self._aged(session, changes.derived) if changes is not None else None
        if changes is None or aged is None:
            return False
        self._scale.keep_up()
        self.drafts.drop_rows(changes.gone, keep=keep, query=query)
        if aged and not self.drafts.model.replace_listed(aged):
            return False  # (never expected: each was listed, and only rows that left were taken out)
        self._listed = self._listing(changes.generation, query)
        return True

    def _aged(self, session: ReviewSession, derived: frozenset[str]) -> list[DraftRow] | None:
        """The new rows of `derived` when each is a listed row derived again only as time passed (its age now
        reads differently: with thousands of drafts created at any hour, some row does so every few seconds);
        None when a new listing must place them."""
        if len(derived) > AGED_MAX:
            return None
        if not derived:
            return []
        rows = self.drafts.model.rows
        listed = {r.id: r for r in compress(rows, map(derived.__contains__, map(_ID, rows)))}  # one pass in C
        now = session.queue.rows_of(derived)
        if len(now) != len(derived) or len(listed) != len(derived):
            return None
        if not all(aged_only(listed[i], row) for i, row in now.items()):
            return None
        return list(now.values())

    def _filtered(self, rows: list[DraftRow], text: str) -> list[DraftRow]:
        """The queue narrowed to every draft the query matches (the query language when the index is ready)."""
        if not text.strip():
            return rows
        ids = self._search.matching_ids(text)
        if ids is not None:
            return [r for r in rows if r.id in ids]
        if self._search.searching():
            return rows  # the first answer is on its way: the list stays whole until it comes
        words = text.lower().split()
        return [
            r for r in rows if all(w in f"{r.statement} {r.scope} {r.domain} {r.writer} {r.id}".lower() for w in words)
        ]

    def show_current(self, again: bool = True) -> None:
        """Render the current draft's detail: what a verdict on it will rest on. With `again` False, a detail that
        already shows this row exactly as listed (the same row object) is left as it is. The contradiction check
        runs on the read pool: the detail says "Checking…" until its result replaces that line."""
        session, row = self.workspace.session, self.drafts.current()
        if not again and row is not None and self.drafts.shows(row):
            self.workspace.context_changed.emit()
            return
        if session is not None and row is not None:
            engram = session.engram(row.id)
            check = self._conflicts.checker()
            known = self._known_conflicts(row.id)
            check = check if known is None else None
            similar = self._search.similar_reader()
            html = engram_html(
                session,
                row.id,
                rejected_before=row.rejected_before,
                conflicts=known,
                checking=check is not None,
                similar_pending=similar is not None,
                timeline_pending=True,
            )
            line = self._scale.writer_line(row)
            html += f"<p><b>Writer:</b> {text_html(line)}</p>" if line else ""
            self.drafts.show_detail(html, row, seen_engram(engram) if engram is not None else None)
            self.workspace.jobs.cancel(EXTRAS)  # what is read for the draft shown before is stale now
            self._extras_due = (row, check, similar)
            self._extras_timer.start()  # restarted by every move: read once the selection rests
        elif row is None:
            self.workspace.jobs.cancel(EXTRAS)
            self._extras_due = None
            self.drafts.show_detail("")
        self.workspace.context_changed.emit()

    def _known_conflicts(self, engram_id: str) -> list[str] | None:
        """The warning texts of the last check of this draft, if the finder that answered is still the one."""
        checked = self._checked
        if checked is None or checked.service is not self._conflicts.service:
            return None
        return checked.texts(engram_id)

    def _read_due_extras(self) -> None:
        due, self._extras_due = self._extras_due, None
        if due is not None and self.workspace.session is not None and self.drafts.shows(due[0]):
            self._read_extras(*due)

    def _read_extras(self, row: DraftRow, check: Check | None, similar: Similar | None) -> None:
        """The detail's parts that search the whole store (the contradiction check, similar engrams) or read files
        (the engram's history events, from the month files) are read on the read pool, in one read whose result
        fills the placeholders in one rendering. A newer selection makes the read stale: holding J never waits for
        the drafts it passes over."""
        session = self.workspace.session
        assert session is not None

        def read() -> tuple[Checked | None, list[tuple[str, str, float]], str]:
            checked = check([row.id], None) if check is not None else None
            return (checked, similar(row.id) if similar else [], timeline_html(session, row.id))

        self.workspace.jobs.read(EXTRAS, read, lambda result: self._extras_read(row, result), one_at_a_time=True)

    def _extras_read(self, row: DraftRow, result: object) -> None:
        assert isinstance(result, tuple)
        checked: Checked | None = result[0]
        similar: list[tuple[str, str, float]] = result[1]
        timeline: str = result[2]
        if isinstance(checked, Checked):
            self._checked = checked
        engram = self.workspace.session.view(row.id) if self.workspace.session is not None else None
        if not self.drafts.shows(row) or engram is None:
            return
        found = conflicts_html(engram, checked.texts(row.id) or []) if isinstance(checked, Checked) else ""
        self.drafts.replace_in_detail(
            CHECKING_HTML,
            found,
            (SIMILAR_PENDING_HTML, similar_html(similar)),
            (TIMELINE_PENDING_HTML, timeline or TIMELINE_PENDING_HTML),
        )

    def run_change(
        self,
        fn: Callable[[], ChangeSet],
        select_after: str | None = None,
        decided: Sequence[str] = (),
        verb: str = "",
        queued: bool = False,
    ) -> None:
        """Move on at once while the write finishes; a verdict on `decided` not written is said and brought back.
        `queued`: an approval asked for at its key press, written now that its check answered (held_undo.py)."""
        self.pending_select = select_after
        self._decided += 1
        if select_after:
            self.drafts.select_id(select_after)  # move on at once; the write finishes in the background
        left, self._left_out = self._left_out, 0
        note = f"{left} flagged draft{'s' if left != 1 else ''} left in the queue for a look one by one."
        bar = self.workspace.messages.status_bar
        done = (lambda: bar.showMessage(f"{bar.currentMessage()} — {note}", 8000)) if left else None
        about = f"{verb} {', '.join(decided[:3])}{' …' if len(decided) > 3 else ''}" if decided else ""
        many = len(decided) > 1  # a bulk's write starts after the window's burst (ui/common/jobs.py)
        failed = functools.partial(self._not_written, decided)
        self.workspace.change(fn, done, about=about, failed=failed, approval=queued, many=many)

    def _not_written(self, decided: Sequence[str]) -> None:
        """A verdict's write failed after the queue moved on: its drafts are still listed (rows leave once written);
        the first is selected again, and kept when writes behind it are shown (not over an edit or another pane)."""
        on_screen = not self.drafts.editing and self._navigation.pane_on_screen(self.drafts)
        if on_screen and self.workspace.session is not None:
            self.pending_select = self.drafts.select_first_of(decided) or self.pending_select

    def _shown_drafts(self) -> list[tuple[DraftRow, Seen]]:
        """The drafts a verdict acts on, each with what was rendered of it; empty unless the Drafts pane is on
        screen with a selection whose detail shows the current row as listed."""
        if self.workspace.session is None or self.drafts.editing or not self._navigation.pane_on_screen(self.drafts):
            return []
        rows = self.drafts.selected_rows()
        if len(rows) == 1:
            seen = self.drafts.displayed_seen()
            if seen is None or seen.id != rows[0].id:
                self.workspace.messages.status("The detail does not show this draft yet; nothing was decided.", 4000)
                return []
            return [(rows[0], seen)]
        return [(row, row.seen) for row in rows]  # many: each as its row was rendered in the list

    def _confirm_bulk(
        self, shown: list[tuple[DraftRow, Seen]], verb: str, conflicts: list[str] | None = None, late: bool = False
    ) -> tuple[bool, str, list[tuple[DraftRow, Seen]]]:
        from plur_desk.ui.review.bulk_confirm import confirm_bulk  # dialogs load on first use, after the first draft

        ok, reason, kept, self._left_out = confirm_bulk(self.workspace, self._parent, shown, verb, conflicts, late=late)
        return ok, reason, kept

    def approve_selected(
        self, level: str | None = None, note: str = "", shown: list[tuple[DraftRow, Seen]] | None = None
    ) -> None:
        """Approve what is shown. The contradiction check of the drafts runs on the read pool (a bulk approval
        shows its progress and can be cancelled); the question, asked once it is done, names exactly the drafts
        and the warnings the approval is for. One draft's question waits under the queue (waiting_question.py)."""
        shown = shown or self._shown_drafts()
        session = self.workspace.session
        if not shown or session is None:
            return
        ids = [s.id for _, s in shown]
        check = self._conflicts.checker()
        known = self._known_conflicts(ids[0]) if len(ids) == 1 else None
        if check is None or known is not None:
            if not self._checks.pending():
                lines = lines_of([(ids[0], known)]) if known else []
                self._approve_checked(shown, lines, level, note)
                return
            # behind approvals still checked: decided after them, so the writes (and an undo) keep the keys' order
            answer = Checked(self._conflicts.service, ((ids[0], known),)) if known is not None else Checked(None, ())
            check = answered(answer)
        current = self.drafts.current_id()
        ahead = self.drafts.id_after(ids) if len(ids) == 1 else None
        if ahead:  # the queue moves on at once, as after any verdict (back to the draft if a question is asked)
            self.drafts.select_id(ahead)
            current = ahead

        def decide(result: Checked) -> tuple[bool, bool]:
            """Approve as checked; whether a change was handed to the runner, and whether a question now waits."""
            decided = self._decided
            if len(ids) == 1 and result.service is not None:
                self._checked = result
            moved_on = self.drafts.current_id() != current  # then the selection stays where the reviewer is
            # queued: its write was asked for at its key press (an undo held behind it may run behind the write)
            self._approve_checked(shown, lines_of(result.found), level, note, moved_on, queued=True)
            return self._decided != decided, len(ids) == 1 and self.question.holds(ids[0])

        self._checks.ask(Asked(tuple(ids), session, check, decide))  # checked after the approvals asked before it

    def _approve_checked(
        self,
        shown: list[tuple[DraftRow, Seen]],
        conflicts: list[str],
        level: str | None,
        note: str,
        moved_on: bool = False,
        *,
        queued: bool = False,
    ) -> None:
        # queued: asked once the check answered, not at the key press (a Return typed meanwhile must not answer it)
        ok, bulk_note, shown = self._confirm_bulk(shown, "approve", conflicts, late=queued)
        ids = [s.id for _, s in shown]
        if not ok or (session := self.workspace.session) is None:
            return
        if len(ids) == 1 and conflicts:  # asked without interrupting: the approval waits for its answer
            answer = functools.partial(self._approve, shown, level, note, True)
            self.question.add(Waiting(session, shown[0][0], shown[0][1], tuple(conflicts), answer))
            if not moved_on and self.drafts.current_id() == ids[0] and (ahead := self.drafts.id_after(ids)):
                self.drafts.select_id(ahead)  # the queue moves on, as after any verdict
            return
        self._approve(shown, level, note or bulk_note, moved_on, queued=queued)

    def _approve(
        self, shown: list[tuple[DraftRow, Seen]], level: str | None, text: str, moved_on: bool, *, queued: bool = False
    ) -> None:
        ids, session = [s.id for _, s in shown], self.workspace.session
        if session is None:
            return
        chosen = level or self.workspace.settings.default_level
        if (asked := self._conflicts.ask_before_locking(session, chosen, ids, self.drafts.select_id)) is None:
            return
        self._note_approval(len(shown))
        seen = [s for _, s in shown]
        after = None if moved_on and not asked else self.drafts.id_after(ids)
        from plur_desk.domain.commands import ApproveDrafts  # loaded with the first decision, not at launch

        self.run_change(
            lambda: session.execute(ApproveDrafts(tuple(seen), chosen, text, asked)), after, ids, "Approving", queued
        )

    def approve_selected_level(self) -> None:
        shown = self._shown_drafts()
        if not shown:
            return
        from plur_desk.ui.common.dialogs import LevelDialog

        dialog = LevelDialog(len(shown), self.workspace.settings.default_level, self._parent)
        if dialog.exec() == LevelDialog.DialogCode.Accepted:
            self.approve_selected(dialog.level, dialog.note.text().strip(), shown)

    def reject_selected(self) -> None:
        shown = self._shown_drafts()
        if not shown or self.workspace.session is None:
            return
        if len(shown) > 1:
            ok, reason, shown = self._confirm_bulk(shown, "reject")
        else:
            ok, reason = self._ask_reason(shown[0][0])
        if not ok or not reason:
            return
        session, seen = self.workspace.session, [s for _, s in shown]
        from plur_desk.domain.commands import RejectDrafts

        ids = [s.id for s in seen]
        self.run_change(
            lambda: session.execute(RejectDrafts(tuple(seen), reason)), self.drafts.id_after(ids), ids, "Rejecting"
        )

    def _ask_reason(self, row: DraftRow) -> tuple[bool, str]:
        from plur_desk.ui.common.dialogs import ReasonDialog

        dialog = ReasonDialog(
            f"Reject {row.id}",
            "Why is this wrong? The reason is recorded, and the same statement is flagged "
            "if an agent asserts it again.",
            self.workspace.settings.recent_reasons,
            self._parent,
        )
        if row.rejected_before is not None:  # a re-assertion: Enter rejects it again for the same reason
            dialog.combo.setCurrentText(row.rejected_before.reason)
        if dialog.exec() != ReasonDialog.DialogCode.Accepted or not dialog.reason:
            return False, ""
        self.workspace.settings_store.remember_reason(self.workspace.settings, dialog.reason)
        return True, dialog.reason

    def edit_selected(self) -> None:
        shown = self._shown_drafts()
        if len(shown) == 1:
            row, seen = shown[0]
            self.drafts.start_edit(seen, row.statement)
            self.workspace.context_changed.emit()

    def _save_edit(self, seen: Seen, text: str) -> None:
        session = self.workspace.session
        conflicts = self._conflicts.conflict_lines([seen.id], text) if session is not None else []
        if session is not None and (not conflicts or self._conflicts.ask_about_conflicts(conflicts, "Save")):
            from plur_desk.ui.review.edit_saving import save_edit

            self.pending_select = seen.id
            save_edit(self.workspace, self.drafts, session, seen, text)
        else:  # the edit is over, unsaved: the actions held off while editing (E, A, R) are on again
            self.workspace.context_changed.emit()

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
        run, limit = self.workspace.settings.rubber_stamp_run, self.workspace.settings.rubber_stamp_seconds
        recent = list(self._approvals)[-run:]
        if count == 1 and len(recent) == run and all(b - a <= limit for a, b in itertools.pairwise(recent)):
            self.drafts.show_banner(
                f"You approved {run} drafts in {recent[-1] - recent[0]:.0f} s. Review must not "
                "become a reflex: each approval puts the statement into your agents' context."
            )
            self._approvals.clear()
        elif count == 1 and len(recent) >= 2 and recent[-1] - recent[-2] > 3 * limit:
            self.drafts.show_banner("")

    # -- undo ------------------------------------------------------------------------------------------------

    def undo(self) -> None:
        if self._navigation.store_on_screen():
            self._held.pressed(redo=False)

    def redo(self) -> None:
        if self._navigation.store_on_screen():
            self._held.pressed(redo=True)
