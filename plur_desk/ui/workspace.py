"""The open store as every controller sees it: the session, its folder, its background `Jobs`, the broadcast every
change is published on once (app/broadcast.py), and what a failure leads to. Controllers take it in their constructor
and subscribe to its changes; it knows none of them."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from plur_desk.app.broadcast import ChangeBroadcast
from plur_desk.app.review.session import COUNTED, ChangeSet, ReviewSession
from plur_desk.app.settings import Settings, SettingsStore
from plur_desk.infra.clock import Clock
from plur_desk.infra.errors import ChangedSinceError, PartialWrite, PlurDeskError
from plur_desk.ui.common.jobs import SESSION, Jobs
from plur_desk.ui.messages import Messages

# The reads' channel of the contradiction check that runs before an approval is submitted as a change.
DECISION_CHECKS = "conflicts.approve"

# Handles a failure it recognises (True), e.g. the reviewer-key conflict that offers a replacement.
FailureHandler = Callable[[Exception], bool]


class Workspace(QObject):
    applied = Signal(object)  # a ChangeSet the reviewer asked for, once published and the lists show it
    reload_needed = Signal()  # a change was refused because the store changed: read it again
    context_changed = Signal()  # which actions are enabled may have changed

    def __init__(
        self,
        settings_store: SettingsStore,
        settings: Settings,
        reviewer_name: str,
        clock: Clock,
        messages: Messages,
        cache_root: Path,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.settings_store, self.settings = settings_store, settings
        self.cache_root = cache_root  # derived data (search index, vectors, clusters), per store below it
        # decisions handed to the session's lane other than approvals (which may wait for a contradiction check):
        # an undo held behind an approval still checked refuses once one of these came after it (held_undo.py)
        self.decisions_handed = 0
        self.reviewer_name = reviewer_name
        self.clock = clock
        self.messages = messages
        self._session: ReviewSession | None = None
        self.store_path: Path | None = None
        self.jobs = Jobs(self)  # loads, writes and reloads in order; reads for the screen; the analytics' lanes
        self._failure_handlers: list[weakref.WeakMethod[FailureHandler]] = []
        self.failures_told = 0  # failures of the session's changes shown so far (`ReviewSession.undo_intent`)
        # the deferred wave of a change: a timer, so the lists' repaint and the keys typed meanwhile come first
        self._deferred = QTimer(self, singleShot=True, interval=1)
        self._deferred.timeout.connect(self._run_deferred)
        self._deferred_run: Callable[[], None] | None = None
        self.changes = ChangeBroadcast(self._defer)
        self.changes.subscribe(self._tell)
        self.changes.subscribe(self._warn, deferred=True)

    def publish(self, change: ChangeSet) -> None:
        """Every view of the open store shows `change` (none while no store is open: nothing is shown)."""
        if self._session is not None:
            self.changes.publish(change)

    def reshow(self) -> None:
        """The same store shown again differently (the queue's order or filter, the theme)."""
        self.publish(ChangeSet(kind="reshown"))

    def _defer(self, run: Callable[[], None]) -> None:
        self._deferred_run = run
        self._deferred.start()

    def _run_deferred(self) -> None:
        if any(c.by_reviewer or c.read_again for c in self.changes.waiting()):
            self.jobs.window_busy()  # a timer, not a job's result: the jobs started here wait for this tick's repaint
        run, self._deferred_run = self._deferred_run, None
        if run is not None:
            run()

    def _tell(self, change: ChangeSet) -> None:
        if change.by_reviewer:
            self.messages.status(change.message[:1].upper() + change.message[1:], 5000)
        elif change.read_again and (change.engrams or change.tensions):
            self.messages.status(
                f"PLUR changed the store: {len(change.engrams)} engrams, {len(change.tensions)} tensions", 4000
            )

    def _warn(self, change: ChangeSet) -> None:
        if change.by_reviewer:  # the banner (which moves the panes down), after the lists' repaint
            self.messages.show(" · ".join(change.warnings))

    @property
    def session(self) -> ReviewSession | None:
        return self._session

    @session.setter
    def session(self, session: ReviewSession | None) -> None:
        if session is not self._session:
            self.failures_told = 0  # a new session counts from nothing
        self._session = session

    def add_failure_handler(self, handler: FailureHandler) -> None:
        """A controller's method that claims the failures it recognises. Held weakly: the workspace keeps no
        controller alive (no reference cycle for the collector to find once the window is gone)."""
        self._failure_handlers.append(weakref.WeakMethod(handler))

    def change(
        self,
        fn: Callable[[], ChangeSet],
        after: Callable[[], None] | None = None,
        *,
        about: str = "",
        failed: Callable[[], None] | None = None,
        approval: bool = False,
        many: bool = False,
    ) -> None:
        """Run a session change on the session's lane; `applied` (then `after()`, when given) or a message follows.
        `about` names what failed in that message (the reviewer may be on another draft by then); `failed()` runs
        after it. `approval`: an approval's write, asked for at its key press and written once its check answered.
        `many`: a decision on many drafts, whose write starts after the window's burst (ui/common/jobs.py)."""
        if not approval:
            self.decisions_handed += 1

        def done(change: object) -> None:
            assert isinstance(change, ChangeSet)  # (a job's result: `Jobs` marked the window busy)
            self.publish(change)
            self.applied.emit(change)
            if after is not None:
                after()

        session = self.session

        def refused(error: Exception) -> None:
            if getattr(error, COUNTED, False) and self.session is session:
                self.failures_told += 1
            self.fail(error, about)
            if failed is not None:
                failed()

        self.jobs.submit(fn, done, refused, decision=True, many=many)

    def replay(self, *, redo: bool) -> None:
        """Undo (or redo) on the session's lane the action on top as it is at this key press, or, behind actions
        still being written, the one on top once they are, provided none failed (app/review/undo.py `UndoIntent`)."""
        session = self.session
        if session is None or not (session.undo_history.can_redo if redo else session.undo_history.can_undo):
            return
        if self.jobs.awaited(DECISION_CHECKS):
            # an approval asked for before this key is still being checked and not yet queued: an undo now would
            # take back the action before it, which the reviewer did not mean
            verb = "redo" if redo else "undo"
            self.messages.error(
                f"an approval asked for before this {verb} is still being checked for contradictions; nothing was "
                f"{verb}ne. Press it again once the approval is written."
            )
            return
        intent = session.undo_intent(redo=redo, exact=self.jobs.pending(SESSION) == 0, failures_told=self.failures_told)
        self.change(lambda: session.redo(intent) if redo else session.undo(intent))

    def fail(self, error: Exception, about: str = "") -> None:
        handlers = [h for ref in self._failure_handlers if (h := ref()) is not None]
        said = f"{about} was not written: " if about else ""
        if any(handler(error) for handler in handlers):
            pass
        elif isinstance(error, ChangedSinceError):
            self.messages.error(f"{said}{error} (refreshed)")
            self.reload_needed.emit()
        elif isinstance(error, PlurDeskError):
            self.messages.error(f"{said}{error}")
            if isinstance(error, PartialWrite):
                self.publish(ChangeSet(kind="refreshed"))  # a file did change: show what is on disk
        else:
            self.messages.error(
                f"{said}Unexpected error: {error!r}. `plur-desk check` shows whether an action was left unfinished; "
                "reopening the store finishes it from the write-ahead journal. Details: "
                f"{getattr(error, '__traceback_text__', '')[-600:]}"
            )
        self.context_changed.emit()
