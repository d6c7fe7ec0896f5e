"""Contradictions in the window: the finder is built in the background after every change; the draft detail says
"Approving this may contradict …", and approving (or saving an edit) asks once when a candidate is above the
threshold. Until the finder is ready nothing is shown and nothing is asked."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QWidget

from plur_desk.app.review.session import ChangeSet
from plur_desk.infra.jobs import Cancelled, cancelled
from plur_desk.ui.common.jobs import CONFLICTS
from plur_desk.ui.search.search_support import SearchController
from plur_desk.ui.workspace import Workspace

if TYPE_CHECKING:  # the finder's modules (numpy among them) load when it is first built, off the GUI thread
    from plur_desk.app.conflicts.conflict_service import ConflictService, ConflictWarning
    from plur_desk.app.conflicts.finder import ConflictCandidate, ScanResult, Vectors
    from plur_desk.app.review.session import ReviewSession
    from plur_desk.ui.tensions.conflicts_pane import ConflictsPane

CONFLICT_NOTE = "This may contradict what the store already says:"
LOCKED_NOTE = "PLUR keeps an engram in an open tension out of locked (settle the tension first):"


@dataclass(frozen=True)
class Checked:
    """What a check found: per draft id the warning texts, and the finder that answered."""

    service: object
    found: tuple[tuple[str, list[str]], ...]

    def texts(self, engram_id: str) -> list[str] | None:
        return next((texts for i, texts in self.found if i == engram_id), None)


Check = Callable[[list[str], Callable[[int, int], None] | None], Checked]


def lines_of(found: Iterable[tuple[str, list[str]]]) -> list[str]:
    """The question's lines: one per engram a draft may contradict, at most six and how many more."""
    pairs = [(engram_id, text) for engram_id, texts in found for text in texts]
    lines = [f"• {engram_id} may contradict {text}" for engram_id, text in pairs[:6]]
    if len(pairs) > 6:
        lines.append(f"… and {len(pairs) - 6} more")
    return lines


class _ScanProgress(QObject):
    changed = Signal(str)


class ConflictsController(QObject):
    """The contradiction finder of the open store, the one question before a change that may contradict it, and
    the Conflicts pane (Ctrl+5) whose answers are audited changes."""

    ready = Signal()  # a new finder answers: the draft detail may now warn

    def __init__(
        self,
        workspace: Workspace,
        search: SearchController,
        dialog_parent: QWidget,
        back_to_queue: Callable[[], None],
    ) -> None:
        super().__init__(workspace)
        self.workspace = workspace
        self._search = search
        self._parent = dialog_parent
        self._back_to_queue = back_to_queue
        self.service: ConflictService | None = None
        self.pane: ConflictsPane | None = None
        self._scan_progress = _ScanProgress(self)
        self._scan_progress.changed.connect(self._scan_status)
        workspace.changes.subscribe(self._changed, deferred=True)  # after the lists' repaint

    def _changed(self, change: ChangeSet) -> None:
        if change.by_reviewer and (change.engrams or change.tensions):
            self.after_change(change)
        elif change.read_again and (change.engrams or change.tensions):
            self.start()  # PLUR changed the store: a finder over it as it is now

    def start(self) -> None:
        """(Re)build the finder over the session as it is now; the old one answers until the new one is ready."""
        session = self.workspace.session
        if session is None:
            return
        search = self._search

        def vectors() -> Vectors | None:
            from plur_desk.app.conflicts.finder import Vectors

            service = search.service
            if service is None or not service.vectors.vectors:
                return None
            embedder = service.embedder()
            return Vectors(service.vectors.vectors, embedder.embed if embedder is not None else None)

        def build() -> ConflictService:
            from plur_desk.app.conflicts.conflict_service import ConflictService

            return ConflictService(session, vectors).rebuild()

        # on a lane of its own: never queues behind a write, never delays one
        self.workspace.jobs.submit(build, self._built, self._failed, lane=CONFLICTS, same_store=True)

    def after_change(self, change: ChangeSet) -> None:
        """A decision that changed nothing the finder reads (approve, reject) keeps it: no rebuild, and no second
        rendering of the draft on screen when a new finder would have answered the same."""
        service = self.service
        if change.tensions or service is None or not service.answers_after(change.engrams):
            self.start()

    def _built(self, service: object) -> None:
        from plur_desk.app.conflicts.conflict_service import ConflictService

        assert isinstance(service, ConflictService)  # (for the open store: `same_store`)
        self.service = service
        self.ready.emit()

    def _failed(self, error: Exception) -> None:
        self.service = None
        self.workspace.messages.status(f"Contradiction check unavailable: {error}", 8000)

    def conflicts_for(self, engram_id: str, statement: str | None = None) -> list[ConflictWarning]:
        service = self.service
        if service is None or service.session is not self.workspace.session:
            return []
        return service.warnings_for(engram_id, statement)

    def conflict_lines(self, ids: list[str], statement: str | None = None) -> list[str]:
        """One line per engram the drafts (or `statement` as the text of the one draft) may contradict."""
        return lines_of([(i, [w.text() for w in self.conflicts_for(i, statement)]) for i in ids])

    def checker(self) -> Check | None:
        """The check of drafts against the finder as it is now, to run off the GUI thread: it reads only that
        finder (built over an immutable snapshot) and returns, per draft id, the warning texts as they will be
        shown. None until a finder for the open session is ready (then nothing is shown and nothing is asked)."""
        service = self.service
        if service is None or service.session is not self.workspace.session:
            return None

        def check(ids: list[str], progress: Callable[[int, int], None] | None = None) -> Checked:
            out = []
            for n, engram_id in enumerate(ids, 1):
                if cancelled():  # the approval was dropped (cancelled, asked again): nobody waits for the rest
                    raise Cancelled
                out.append((engram_id, [w.text() for w in service.warnings_for(engram_id)]))
                if progress is not None and (n % 10 == 0 or n == len(ids)):
                    progress(n, len(ids))
            return Checked(service, tuple(out))

        return check

    def ask_before_locking(
        self, session: ReviewSession, level: str, ids: list[str], select: Callable[[str], bool]
    ) -> bool | None:
        """Approving to locked while a tension on a draft is open is asked first, with that draft on screen: None
        to stop, True when asked and answered yes, False when there was nothing to ask."""
        lines = session.open_tensions_on(ids) if level == "locked" else []
        if not lines:
            return False
        if len(ids) == 1 and not select(ids[0]):
            self.workspace.messages.status(f"{ids[0]} is no longer listed; nothing was approved", 6000)
            return None
        return True if self.ask_about_conflicts(lines, "Lock", LOCKED_NOTE, "lockedWithTensionConfirm") else None

    def ask_about_conflicts(
        self, lines: list[str], verb: str = "Approve", note: str = CONFLICT_NOTE, name: str = "conflictConfirm"
    ) -> bool:
        """The one question before a change that may contradict the store; True to go ahead."""
        from PySide6.QtWidgets import QMessageBox  # made on first use, not at launch

        box = QMessageBox(self._parent)
        box.setObjectName(name)
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("Possible contradiction")
        box.setTextFormat(Qt.TextFormat.PlainText)  # agent-written statements are data, never markup
        box.setText(f"{verb} anyway? {note}\n\n" + "\n".join(lines))
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.setDefaultButton(QMessageBox.StandardButton.No)
        go = box.button(QMessageBox.StandardButton.Yes)
        go.setText(f"{verb} anyway (Ctrl+Return)")
        # Yes is a click or Ctrl+Return, never Return, Space, Tab or an arrow: keys typed on after the key that
        # asked (Left then Return, meant for the next widget) answered yes
        go.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        go.setProperty("autoDefault", False)
        QShortcut(QKeySequence("Ctrl+Return"), box, go.click).setContext(Qt.ShortcutContext.WindowShortcut)
        box.exec()
        self._parent.activateWindow()  # keys go back to the queue, whichever way the question was answered
        self._back_to_queue()
        return box.clickedButton() is go

    # -- the Conflicts pane ----------------------------------------------------------------------------------

    def attach(self, pane: ConflictsPane) -> None:
        """The pane whose answers this controller writes, and whose scans it runs."""
        self.pane = pane
        pane.record_requested.connect(self._record_candidate)
        pane.dismiss_requested.connect(self._dismiss_candidate)
        pane.replace_requested.connect(self._replace_candidate)
        pane.rescan_requested.connect(self.scan_conflicts)

    def scan_conflicts(self) -> None:
        session, progress = self.workspace.session, self._scan_progress
        if session is None:
            return
        from plur_desk.app.conflicts.conflict_service import ConflictService

        service = self.service  # the finder of this session, or a new one (not the store's left before)
        service = service if service is not None and service.session is session else ConflictService(session)
        progress.changed.emit("Scanning the store…")

        def scan() -> ScanResult:
            return service.scan(lambda n, total: progress.changed.emit(f"Judging pairs {n:,} / {total:,}…"))

        self.workspace.jobs.submit(
            scan, lambda result: self._scanned(session, result), self._failed, lane=CONFLICTS, same_store=True
        )

    @Slot(str)
    def _scan_status(self, text: str) -> None:
        if self.pane is not None:
            self.pane.set_progress(text)

    def _scanned(self, session: ReviewSession, result: object) -> None:
        from plur_desk.app.conflicts.finder import ScanResult

        assert isinstance(result, ScanResult)
        if self.pane is not None and self.workspace.session is session:  # not a scan of a store left since
            self.pane.set_candidates(
                result.candidates,
                f"{len(result.candidates)} likely contradiction{'' if len(result.candidates) == 1 else 's'}; {result.pairs_judged:,} pairs passed PLUR's "
                f"pre-filter of {result.pairs_keyed:,} looked at. Each answer is recorded as your decision.",
            )

    def _answer(self, fn: Callable[[], ChangeSet], key: str) -> None:
        def answered() -> None:  # the pair leaves the list once its answer is written
            if self.pane is not None:
                self.pane.drop(key)

        self.workspace.change(fn, answered)

    # Each answer carries both engrams as the scan judged them, which is what the pane shows: the write refuses
    # ("changed since you looked") when either reads differently now, never answers for text nobody saw.

    def _record_candidate(self, c: ConflictCandidate) -> None:
        from plur_desk.app.conflicts.conflict_actions import record_tension

        session = self.workspace.session
        if session is not None:
            self._answer(
                lambda: record_tension(session, c.engram_a, c.engram_b, c.score, c.reason(), seen=c.seen), c.key
            )

    def _dismiss_candidate(self, c: ConflictCandidate) -> None:
        from plur_desk.app.conflicts.conflict_actions import not_a_conflict

        session = self.workspace.session
        if session is not None:
            self._answer(lambda: not_a_conflict(session, c.engram_a, c.engram_b, seen=c.seen), c.key)

    def _replace_candidate(self, c: ConflictCandidate, a_is_newer: bool) -> None:
        from plur_desk.app.conflicts.conflict_actions import supersede

        session = self.workspace.session
        newer, older = (c.engram_a, c.engram_b) if a_is_newer else (c.engram_b, c.engram_a)
        if session is not None:
            self._answer(lambda: supersede(session, newer, older, c.seen), c.key)
