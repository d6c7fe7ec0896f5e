"""Opening a store in the window: loading in the background (drafts first), watching it, and leaving it.

A store is either fully on screen (title, status bar, panes, undo) or not at all: a folder that is not a store
leaves the current one exactly as it was, with a message. Loading never takes the keyboard focus: the first store's
queue gets it when its page goes up, before the person can have pressed anything, and nothing moves it afterwards.
(An application-wide Python event filter that watched for the first key or click cost the launch 50-90 ms: the first
event it was handed made PySide build a hundred enum types.)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal
from PySide6.QtWidgets import QLabel, QWidget

from plur_desk.app.review import loading
from plur_desk.app.review.session import ChangeSet, ReviewSession
from plur_desk.domain.changes import Kind
from plur_desk.ui.common.jobs import INDEX, POLL, SESSION
from plur_desk.ui.review.drafts_pane import DraftsPane
from plur_desk.ui.trust.journal_notice import JournalNotice
from plur_desk.ui.trust.reviewer_identity import UnlockAsker
from plur_desk.ui.workspace import Workspace

REST_AT_LATEST_MS = 1000  # the rest of a first store starts by then even if the hidden panes are not built


class StoreController(QObject):
    """Puts a store's session into the workspace and keeps it current with what PLUR writes meanwhile."""

    no_store = Signal(str)  # the folder is not a store and none is open: why not
    opening = Signal(object)  # a Path: the store page is up for it, the session still loading
    refresh_requested = Signal()  # the session (or what it holds) changed: show it
    loaded = Signal()  # the whole store is parsed
    history_page_ready = Signal()  # the newest page of the history can be shown
    reloaded = Signal(object, bool)  # a ChangeSet read from disk, and whether the reviewer asked for it
    read_only_changed = Signal()  # the store became read-only, or writable again (enabled actions follow)

    def __init__(
        self,
        workspace: Workspace,
        drafts: DraftsPane,
        labels: dict[str, QLabel],
        dialog_parent: QWidget,
        unlock_asker: UnlockAsker,
    ) -> None:
        super().__init__(workspace)
        self.workspace = workspace
        self._drafts = drafts
        self._labels = labels
        self._parent = dialog_parent
        self._unlock_asker = unlock_asker
        self._opened = 0  # stores opened so far
        # The rest of the first store waits until the window has built its hidden panes (a few tens of ms): built
        # beside the rest's unpacking, each of their calls into Qt waited for a chunk to be unpacked to take the
        # interpreter back (a warm 50,000-engram launch: a 150-380 ms stall right after the first draft).
        self._panes_built = False
        self._rest_waiting: Callable[[], None] | None = None
        self._rest_at_latest = QTimer(self, singleShot=True, interval=REST_AT_LATEST_MS)
        self._rest_at_latest.timeout.connect(self.panes_built)
        self.reload_timer = QTimer(self, singleShot=True, interval=200)
        self.poll_timer = QTimer(self, interval=1000)
        self.read_only: list[str] = []  # why the open store is read-only, as last looked at (writes check again)
        self.watcher = QFileSystemWatcher(self)
        self.reload_timer.timeout.connect(self.reload_quiet)
        self.poll_timer.timeout.connect(self.poll)
        self.watcher.fileChanged.connect(lambda _p: self.reload_timer.start())
        self.watcher.directoryChanged.connect(lambda _p: self.reload_timer.start())
        self.journal_notice = JournalNotice(workspace)  # under the banner: journal records nobody can verify
        self.refresh_requested.connect(self.journal_notice.refresh)
        self.refresh_requested.connect(lambda: workspace.publish(ChangeSet(kind="refreshed")))
        workspace.changes.subscribe(lambda _change: self.poll())  # who holds the lock, after every change shown

    def stop(self) -> None:
        """The window closes: no more polling."""
        self.poll_timer.stop()
        self.workspace.jobs.wait(5000, lane=POLL)

    # -- opening -------------------------------------------------------------------------------------------

    def open_path(self, path: Path) -> None:
        from plur_desk.app.review.bootstrap import store_problem

        ws = self.workspace
        problem = store_problem(path)
        if problem:
            if ws.session is not None or ws.store_path is not None:
                ws.messages.error(f"Not opened: {problem}. Still showing {ws.store_path}.")
            else:
                self.no_store.emit(problem)
            return
        if not self.confirm_discard_edit("open another store"):
            return
        self._drafts.cancel_edit()
        self._opened += 1
        ws.store_path = path
        if ws.session is not None:
            ws.jobs.submit(ws.session.end)  # the previous session's closing checkpoint, in order
        ws.jobs.new_store()  # what is still under way for the previous store is never shown
        ws.session = None  # the previous store's session, its undo stack and its index are dropped here
        self.read_only = []
        watched = self.watcher.files() + self.watcher.directories()
        if watched:
            self.watcher.removePaths(watched)
        self.opening.emit(path)
        if self._opened == 1:  # the launch: the store page is up and nothing can have been pressed yet
            self._drafts.focus_queue()
        ws.messages.show(f"Opening {path}…")
        ws.context_changed.emit()
        reviewer, clock, asker = ws.reviewer_name, ws.clock, self._unlock_asker

        def load() -> tuple[ReviewSession, list[str], str]:
            from plur_desk.app.review.bootstrap import open_session

            # Drafts only: the rest is parsed in worker processes once the queue is on screen. For review: finishes
            # interrupted actions from the journal (sets recovery_note).
            session = open_session(
                path, reviewer, clock=clock, ask_unlock=asker, drafts_first=True, load_history=False, for_review=True
            )
            loading.before_first_draft(session)
            return session, session.read_only_reasons, session.trust_notice()

        ws.jobs.submit(
            load, lambda found: self._drafts_loaded(found), ws.fail, same_store=True
        )  # (late-bound: probes wrap it)

    def _drafts_loaded(self, found: object) -> None:
        """The drafts are parsed: the queue is shown and can be acted on at once (a write re-reads inside the
        lock and finds any entry by id, so a decision now is as safe as after the full load)."""
        assert isinstance(found, tuple)
        session, reasons, notice = found
        assert isinstance(session, ReviewSession)
        ws = self.workspace
        ws.session = session
        self._set_read_only(reasons)
        if notice:  # a key planted under the reviewer's name: said before the first decision can be made
            ws.messages.show(notice)
        self.refresh_requested.emit()  # every pane usable now (the queue's rows built once); the full load refreshes
        self._labels["busy"].setText("loading the rest…")

        def parsed(rest: object) -> None:  # then completed in the writes' queue, unless another store was opened
            ws.jobs.submit(
                lambda: (loading.finish_load(session, rest), session.read_only_reasons),  # the whole file read
                self._rest_loaded,
                ws.fail,
                same_store=True,
            )

        def rest() -> None:  # on a lane of its own: parsing the rest of a store waits on worker processes
            ws.jobs.submit(lambda: loading.parse_rest(session), parsed, ws.fail, lane=INDEX, same_store=True)

        self._rest_waiting = rest
        if self._panes_built:
            self.panes_built()
        else:
            self._rest_at_latest.start()  # whatever happens to the panes' building, the store loads whole

    def panes_built(self) -> None:
        """The window's hidden panes are built: the rest of the store loads now."""
        self._panes_built = True
        self._rest_at_latest.stop()
        start, self._rest_waiting = self._rest_waiting, None
        if start is not None:
            start()

    def _rest_loaded(self, found: object) -> None:
        assert isinstance(found, tuple)
        self._loaded(*found)

    def _loaded(self, session: ReviewSession, reasons: list[str]) -> None:
        ws = self.workspace
        ws.session = session
        self._set_read_only(reasons)
        self.refresh_requested.emit()
        self._watch()
        self.poll_timer.start()
        invalid = session.snapshot.invalid_entries()
        notes = [session.recovery_note] if session.recovery_note else []
        notice = session.trust_notice()
        if notice:
            notes.append(notice)
        if reasons:
            notes.append("Read-only: " + "; ".join(reasons))
        if invalid:
            shown = "; ".join(f"{where}: {why}" for where, _line, why in invalid[:3])
            notes.append(
                f"{len(invalid)} entr{'y' if len(invalid) == 1 else 'ies'} PLUR quarantines (kept, never "
                f"rewritten): {shown}" + (" …" if len(invalid) > 3 else "")
            )
        notes += held_notes(session)
        ws.messages.show("\n".join(notes))
        ws.jobs.submit(session.history.load_newest, lambda _r: self.history_page_ready.emit(), same_store=True)
        ws.jobs.submit(lambda: loading.load_history(session), self._history_loaded, same_store=True)
        ws.jobs.submit(loading.warm_up_signing)
        if ws.store_path is not None:  # remembered once open: saving settings never delays the first draft
            ws.settings_store.remember_store(ws.settings, str(ws.store_path))
        self.loaded.emit()

    def _history_loaded(self, missing: object) -> None:
        assert isinstance(missing, list)
        self.refresh_requested.emit()
        if missing:
            self.workspace.messages.show(
                f"{len(missing)} reviewed engram(s) have no history event ({', '.join(missing[:3])}"
                f"{' …' if len(missing) > 3 else ''}): a write was interrupted before its event was "
                "appended. Their review record (who, when) is on the engram."
            )

    def open_store_dialog(self) -> None:
        from PySide6.QtWidgets import QFileDialog  # made on first use, not at launch

        start = str(self.workspace.store_path or Path.home())
        path = QFileDialog.getExistingDirectory(self._parent, "Open a PLUR store", start)
        if path:
            self.workspace.messages.sticky_note = ""
            self.open_path(Path(path))

    def open_recent(self, path: str) -> None:
        self.workspace.messages.sticky_note = ""
        self.open_path(Path(path))

    def open_demo(self) -> None:
        from plur_desk.app.demo import DEMO_NOTE, copy_demo_store

        self.workspace.messages.sticky_note = DEMO_NOTE
        self.open_path(copy_demo_store())

    def confirm_discard_edit(self, doing: str) -> bool:
        """True when there is no unsaved statement edit, or the person chose to discard it."""
        if not self._drafts.has_unsaved_edit():
            return True
        from PySide6.QtWidgets import QMessageBox  # made on first use, not at launch (a launch passes above)

        answer = QMessageBox.question(
            self._parent,
            "Unsaved edit",
            f"Your edit of the statement is not saved. Discard it and {doing}?",
            QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        return answer == QMessageBox.StandardButton.Discard

    # -- watching ------------------------------------------------------------------------------------------

    def reload(self) -> None:
        self.reload_quiet(explicit=True)

    def reload_after_sync(self) -> None:
        self.reload_quiet(explicit=True, kind="synced")

    def reload_quiet(self, explicit: bool = False, kind: Kind = "reread") -> None:
        """Read again what changed on disk; `explicit`: asked for (as `kind`), every pane is shown afresh."""
        ws = self.workspace
        session = ws.session
        if session is None:
            return
        if ws.jobs.pending(SESSION) and not explicit:
            self.reload_timer.start()
            return

        def reload() -> tuple[ChangeSet, list[str]]:
            return session.reload_if_changed(), session.read_only_reasons  # a file read again may be unreadable now

        ws.jobs.submit(reload, lambda found: self._reloaded(session, found, explicit, kind), ws.fail)

    def _reloaded(self, session: ReviewSession, found: object, explicit: bool, kind: Kind) -> None:
        assert isinstance(found, tuple)
        change, reasons = found
        assert isinstance(change, ChangeSet)
        if self.workspace.session is session:
            self._set_read_only(reasons)
        self._watch()
        if change.engrams or change.tensions or change.events or explicit:
            self.workspace.publish(change.as_kind(kind) if explicit else change)
            self.reloaded.emit(change, explicit)

    def poll(self) -> None:
        """Once a second: who holds PLUR's lock, whether a store file changed, whether the store is read-only."""
        session = self.workspace.session
        if session is None or self.workspace.jobs.pending(POLL):
            return

        def look() -> tuple[str | None, bool, list[str]]:
            changed = session.changed_on_disk() or session.history.changed_on_disk()
            return session.lock_holder(), changed, session.read_only_reasons

        # the poll's stats and reads run off the GUI thread: each system call gives up the interpreter lock, and
        # taking it back behind a busy thread costs the window up to a switch interval (5 ms) per call
        self.workspace.jobs.submit(look, self._polled, self.workspace.fail, lane=POLL, same_store=True)

    def _polled(self, found: object) -> None:
        assert isinstance(found, tuple)
        holder, changed, reasons = found
        self._labels["lock"].setText("locked by " + holder.split(":")[1] if holder and ":" in holder else "store idle")
        self._set_read_only(reasons)
        if changed:
            self.reload_timer.start()

    def _set_read_only(self, reasons: list[str]) -> None:
        """Why the open store is read-only, as last looked at off the GUI thread (a write checks again)."""
        if reasons != self.read_only:
            self.read_only = reasons
            self.read_only_changed.emit()

    def _watch(self) -> None:
        root = self.workspace.store_path
        assert root is not None
        paths = [str(root), str(root / "engrams.yaml"), str(root / "tensions.yaml")]
        history = root / "history"
        if history.is_dir():
            paths.append(str(history))
        existing = [p for p in paths if Path(p).exists() and p not in self.watcher.files() + self.watcher.directories()]
        if existing:
            self.watcher.addPaths(existing)


def held_notes(session: ReviewSession) -> list[str]:
    """The engrams .git/plur-held.json holds (read-only: PLUR puts them back on its next write), listed."""
    held, problem = session.held_engrams()
    notes = [problem] if problem else []
    if held:
        listed = "; ".join(f"{e.get('id')}: {str(e.get('statement', ''))[:80]}" for e in held[:3])
        notes.append(
            f"{len(held)} engram{'' if len(held) == 1 else 's'} held by an interrupted PLUR sync (.git/plur-held.json; "
            f"shown read-only, PLUR puts them back on its next write): {listed}" + (" …" if len(held) > 3 else "")
        )
    return notes
