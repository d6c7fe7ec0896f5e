"""The open store as every controller sees it: the session, its folder, the serial runner for session work, and
what a change or a failure leads to. Controllers take it in their constructor; it knows none of them."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from plur_desk.app.session import ChangeSet, ReviewSession
from plur_desk.app.settings import Settings, SettingsStore
from plur_desk.infra.clock import Clock
from plur_desk.infra.errors import ChangedSinceError, PartialWrite, PlurDeskError
from plur_desk.ui.messages import Messages
from plur_desk.ui.runner import ReadPool, Runner

# Handles a failure it recognises (True), e.g. the reviewer-key conflict that offers a replacement.
FailureHandler = Callable[[Exception], bool]


class Workspace(QObject):
    applied = Signal(object)  # a ChangeSet, once a change went through
    reload_needed = Signal()  # a change was refused because the store changed: read it again
    refresh_needed = Signal()  # a write half done: show what is on disk
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
        self.reviewer_name = reviewer_name
        self.clock = clock
        self.messages = messages
        self.session: ReviewSession | None = None
        self.store_path: Path | None = None
        self.runner = Runner(self)  # loads, writes and reloads, in order, never overlapping
        self.reads = ReadPool(self)  # reads for the screen (a history filter…), stale results dropped
        self._failure_handlers: list[weakref.WeakMethod[FailureHandler]] = []

    def add_failure_handler(self, handler: FailureHandler) -> None:
        """A controller's method that claims the failures it recognises. Held weakly: the workspace keeps no
        controller alive (no reference cycle for the collector to find once the window is gone)."""
        self._failure_handlers.append(weakref.WeakMethod(handler))

    def change(self, fn: Callable[[], ChangeSet], after: Callable[[], None] | None = None) -> None:
        """Run a session change on the serial runner; `applied` (then `after()`, when given) or a message follows."""
        if after is None:
            self.runner.submit(fn, self.applied.emit, self.fail)
            return

        def done(change: object) -> None:
            self.applied.emit(change)
            after()

        self.runner.submit(fn, done, self.fail)

    def replay(self, *, redo: bool) -> None:
        """Undo (or redo) on the serial runner the action on top as it is at this key press, or, behind actions
        still being written, the one on top once they are, provided none failed (app/undo.py `UndoIntent`)."""
        session = self.session
        if session is None or not (session.can_redo if redo else session.can_undo):
            return
        intent = session.undo_intent(redo=redo, exact=self.runner.pending == 0)
        self.change(lambda: session.redo(intent) if redo else session.undo(intent))

    def fail(self, error: Exception) -> None:
        handlers = [h for ref in self._failure_handlers if (h := ref()) is not None]
        if any(handler(error) for handler in handlers):
            pass
        elif isinstance(error, ChangedSinceError):
            self.messages.error(f"{error} (refreshed)")
            self.reload_needed.emit()
        elif isinstance(error, PlurDeskError):
            self.messages.error(str(error))
            if isinstance(error, PartialWrite):
                self.refresh_needed.emit()  # a file did change: show what is on disk
        else:
            self.messages.error(
                f"Unexpected error: {error!r}. `plur-desk check` shows whether an action was left unfinished; "
                "reopening the store finishes it from the write-ahead journal. Details: "
                f"{getattr(error, '__traceback_text__', '')[-600:]}"
            )
        self.context_changed.emit()
