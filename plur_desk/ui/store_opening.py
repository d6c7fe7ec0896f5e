"""Opening a store in the window: loading in the background (drafts first), watching it, and leaving it.

A store is either fully on screen (title, status bar, panes, undo) or not at all: a folder that is not a store
leaves the current one exactly as it was, with a message. Loading never takes the keyboard focus once the person
has pressed a key or clicked: only the very first queue is focused, and only if nothing was touched yet.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox

from plur_desk.app import loading
from plur_desk.app.rows import DraftRow
from plur_desk.app.session import ReviewSession
from plur_desk.domain.review import Reviewer
from plur_desk.ui.reviewer_identity import make_session
from plur_desk.ui.widgets import text_html

if TYPE_CHECKING:
    from plur_desk.ui.main_window import MainWindow

    _Base = MainWindow
else:
    _Base = object

_USER_INPUT = (QEvent.Type.KeyPress, QEvent.Type.MouseButtonPress, QEvent.Type.Wheel, QEvent.Type.InputMethod)


class StoreOpeningMixin(_Base):
    session: ReviewSession | None
    store_path: Path | None
    _generation = 0  # which open_path a background load belongs to; results of an older one are dropped
    user_touched = False  # set by the first key press or click anywhere in the application

    def _watch_user_input(self) -> None:
        app = QApplication.instance()
        if app is not None:
            app.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if not self.user_touched and event.type() in _USER_INPUT:
            self.user_touched = True
        return False

    def _focus_first_queue(self) -> None:
        """The only focus move the app makes on its own: before the person has touched anything."""
        if not self.user_touched:
            self.drafts.focus_queue()

    # -- opening -------------------------------------------------------------------------------------------

    def open_path(self, path: Path) -> None:
        from plur_desk.app.bootstrap import store_problem

        problem = store_problem(path)
        if problem:
            if self.session is not None or self.store_path is not None:
                self.show_error(f"Not opened: {problem}. Still showing {self.store_path}.")
                return
            self.start_text.setText(
                f"<h2>No PLUR store here</h2><p>{text_html(problem)}</p>"
                "<p>Open the demo store to see plur_desk on realistic data, or pick a store.</p>"
            )
            self.stack.setCurrentWidget(self.start)
            self._update_context()
            return
        if not self.confirm_discard_edit("open another store"):
            return
        self.drafts.cancel_edit()
        self._generation += 1
        generation = self._generation
        self.store_path = path
        self.setWindowTitle(f"plur_desk — {path}")
        self._status_labels["path"].setText(str(path))
        self.stack.setCurrentIndex(1)
        if self.session is not None:
            self.runner.submit(self.session.end)  # the previous session's closing checkpoint, in order
        self.session = None  # the previous store's session, its undo stack and its index are dropped here
        self.search_service, self.search_ready = None, False
        watched = self.watcher.files() + self.watcher.directories()
        if watched:
            self.watcher.removePaths(watched)
        self.show_message(f"Opening {path}…")
        self._update_context()
        reviewer = Reviewer(self.reviewer_name)
        clock = self.clock
        asker = self.unlock_asker

        def load() -> ReviewSession:
            from plur_desk.app.bootstrap import open_store

            store = open_store(path)
            store.load_drafts()  # the rest is parsed in worker processes once the queue is on screen
            session = make_session(store, reviewer, clock, asker)
            session.recover_on_open()  # finishes interrupted actions from the journal; sets recovery_note
            return session

        self.runner.submit(
            load,
            lambda s: self._drafts_loaded(s) if generation == self._generation else None,
            lambda e: self._failed(e) if generation == self._generation else None,
        )
        self.settings_store.remember_store(self.settings, str(path))

    def _drafts_loaded(self, session: object) -> None:
        """The drafts are parsed: the queue is shown and can be acted on at once (a write re-reads inside the
        lock and finds any entry by id, so a decision now is as safe as after the full load)."""
        assert isinstance(session, ReviewSession)
        self._early_drafts(session.drafts())
        self.session = session
        self.refresh_all()  # every pane usable now; the full load refreshes them again
        self._status_labels["busy"].setText("loading the rest…")

        def parsed(rest: object) -> None:  # then completed in the writes' queue, unless another store was opened
            if self.session is session:
                self.runner.submit(lambda: loading.finish_load(session, rest), self._loaded_if_current, self._failed)

        self.search_runner.submit(lambda: loading.parse_rest(session), parsed, self._failed)

    def _loaded_if_current(self, session: object) -> None:
        return self._loaded(session) if self.session is session else None

    def _early_drafts(self, rows: list[DraftRow]) -> None:
        if self.session is None:
            self.drafts.set_rows(rows)
            self._focus_first_queue()
            self._status_labels["counts"].setText(f"{len(rows)} drafts waiting · loading the rest…")

    def _loaded(self, session: object) -> None:
        assert isinstance(session, ReviewSession)
        self.session = session
        self.refresh_all()
        self._focus_first_queue()
        self._watch()
        self._poll_timer.start()
        reasons = session.read_only_reasons
        invalid = session.invalid_entries()
        notes = [session.recovery_note] if session.recovery_note else []
        if reasons:
            notes.append("Read-only: " + "; ".join(reasons))
        if invalid:
            shown = "; ".join(f"{where}: {why}" for where, _line, why in invalid[:3])
            notes.append(
                f"{len(invalid)} entr{'y' if len(invalid) == 1 else 'ies'} PLUR quarantines (kept, never "
                f"rewritten): {shown}" + (" …" if len(invalid) > 3 else "")
            )
        self.show_message("\n".join(notes))
        self.store_opened.emit()
        self.runner.submit(
            session.load_history_first_page, lambda _r: self.history.refresh(None) if self.session is session else None
        )
        self.runner.submit(
            lambda: (session.load_history(), session.store.save_cache()),
            lambda _r: self._history_loaded() if self.session is session else None,
        )
        self.start_search()
        self.start_conflicts()

    def _history_loaded(self) -> None:
        self.refresh_all()
        session = self.session
        missing: list[str] = session.unlogged_reviews() if session is not None else []
        if missing:
            self.show_message(
                f"{len(missing)} reviewed engram(s) have no history event ({', '.join(missing[:3])}"
                f"{' …' if len(missing) > 3 else ''}): a write was interrupted before its event was "
                "appended. Their review record (who, when) is on the engram."
            )

    def _watch(self) -> None:
        assert self.store_path is not None
        paths = [str(self.store_path), str(self.store_path / "engrams.yaml"), str(self.store_path / "tensions.yaml")]
        history = self.store_path / "history"
        if history.is_dir():
            paths.append(str(history))
        existing = [p for p in paths if Path(p).exists() and p not in self.watcher.files() + self.watcher.directories()]
        if existing:
            self.watcher.addPaths(existing)

    def open_store_dialog(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a PLUR store", str(self.store_path or Path.home()))
        if path:
            self.sticky_note = ""
            self.open_path(Path(path))

    def open_demo(self) -> None:
        from plur_desk.app.demo import copy_demo_store

        self.open_path(copy_demo_store())

    # -- leaving -------------------------------------------------------------------------------------------

    def confirm_discard_edit(self, doing: str) -> bool:
        """True when there is no unsaved statement edit, or the person chose to discard it."""
        if not self.drafts.has_unsaved_edit():
            return True
        answer = QMessageBox.question(
            self,
            "Unsaved edit",
            f"Your edit of the statement is not saved. Discard it and {doing}?",
            QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        return answer == QMessageBox.StandardButton.Discard
