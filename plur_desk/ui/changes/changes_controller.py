"""The Changes pane's controller: agent changes found on the session's lane after every load, reload and decision
(never on the window's thread), Ratify and Revert of the selected change, and starting to watch a store."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QLabel

from plur_desk.app.review.session import ChangeSet, ReviewSession
from plur_desk.domain.seen import Seen
from plur_desk.infra.errors import PlurDeskError
from plur_desk.ui.changes.changes_pane import ChangesPane
from plur_desk.ui.navigation import NavigationController
from plur_desk.ui.store_opening import StoreController
from plur_desk.ui.workspace import Workspace

if TYPE_CHECKING:  # the detection's modules load with the first decision or the pane's first list, not at launch
    from plur_desk.domain.agents.agent_changes import AgentChange

__all__ = ["ChangesController", "ChangesPane"]  # the window takes both from here

Found = tuple[str, "list[AgentChange]", dict[tuple[str, str], Seen]]


def change_behind(event: dict[str, object], changes: list[AgentChange]) -> AgentChange | None:
    """The listed change this history event is one of the events of (the same event, as detection read it)."""
    return next((c for c in changes if event in c.events), None)


def _find(session: ReviewSession) -> Found:
    """On the session's lane: the changes, what the pane says above them, and each record as it is now (what a decision on
    it rests on: the write refuses when it moved on since)."""
    from plur_desk.app.changes import change_decisions  # noqa: F401  (imported here: not on the first A or R's key)

    read = session.watch.read()
    baseline = read.baseline
    changes = session.watch.changes()
    seen: dict[tuple[str, str], Seen] = {}
    for change in changes:
        try:
            if change.target == "tension":
                seen[("tension", change.id)] = session.writes.seen_tension(change.id)
            elif change.after is not None:
                seen[("engram", change.id)] = session.writes.seen([change.id])[0]
        except PlurDeskError:
            continue  # read-only, or not a record the session can act on: listed, not decidable
    if not baseline.watched:
        note = (
            "This store is not watched yet. Start Watching (W) records its current state, signed with your key; "
            "what agents change after that, around the draft gate, is listed here."
        )
    else:
        note = f"Watching since {baseline.started} (started by {baseline.started_by}): {len(changes)} agent changes."
    if read.problems:
        note += f" {len(read.problems)} baseline line(s) do not verify and claim nothing (plur-desk check lists them)."
    return note, changes, seen


class ChangesController(QObject):
    def __init__(
        self,
        ws: Workspace,
        pane: ChangesPane,
        labels: dict[str, QLabel],
        nav: NavigationController,
        opener: StoreController,
    ) -> None:
        super().__init__(pane)
        self.ws, self.pane, self.status, self.nav = ws, pane, labels["changes"], nav  # the status bar's own label
        self._seen: dict[tuple[str, str], Seen] = {}
        self.ready = False  # the whole store and its history are read: detection is meaningful
        self._queued = False  # a detection waits on the session's lane, not started yet
        opener.opening.connect(self.opening)
        opener.loaded.connect(self.loaded)
        # the status bar's count follows every decision and reload, even while the pane is hidden
        ws.changes.subscribe(lambda change: self.refresh() if change.by_reviewer or change.read_again else None)

    def handlers(self) -> dict[str, Callable[[], object]]:
        """This pane's actions, for the window's map of every action (ui/actions.py)."""
        return {
            "view.changes": self.nav.show_changes,
            "changes.ratify": self.ratify,
            "changes.revert": self.revert,
            "changes.start": self.start_watching,
            "history.revert_change": self.revert_from_history,
        }

    def opening(self, *_path: object) -> None:
        self.ready, self._queued = False, False
        self.status.setText("")
        self.pane.show_changes([], "")

    def loaded(self) -> None:
        """Detection once the whole store and its history are read. A store not watched yet is not started here:
        starting signs with the reviewer's key, which at opening would ask for a locked keyring and raise a key
        conflict before any decision (the pane says how to start: W)."""
        self.ready = True
        self.refresh()

    def refresh(self, *_change: object) -> None:
        """Detection asked again. One decision asks twice (the pane on screen refreshes, and the count follows every
        decision): a detection queued and not yet started answers both, instead of a second run on the lane (0.25 s
        of CPU, sharing the interpreter lock with the window) and a second update of the list."""
        session = self.ws.session
        if session is None or not self.ready or not session.fully_loaded or self._queued:
            return
        self._queued = True

        def find() -> Found:
            self._queued = False  # a request from now on sees the store after what this one reads
            return _find(session)

        self.ws.jobs.submit(find, self._show, self.ws.fail, same_store=True, behind=True)  # decisions go first

    def _show(self, result: object) -> None:
        note, changes, seen = cast(Found, result)
        self._seen = seen
        self.pane.show_changes(changes, note)
        self.status.setText(f"{len(changes)} agent changes" if changes else "")
        self.ws.context_changed.emit()

    def _selected(self) -> tuple[ReviewSession, AgentChange, Seen | None] | None:
        session, change = self.ws.session, self.pane.selected_change()
        if session is None or change is None or not self.nav.pane_on_screen(self.pane):
            return None
        return session, change, self._seen.get((change.target, change.id))

    def ratify(self) -> None:
        if self._decide_group(ratify=True):
            return
        picked = self._selected()
        if picked is None:
            return
        self._decide(*picked, ratify=True)

    def revert(self) -> None:
        if self._decide_group(ratify=False):
            return
        picked = self._selected()
        if picked is not None:
            self._decide(*picked, ratify=False)

    def _decide(self, session: ReviewSession, change: AgentChange, seen: Seen | None, *, ratify: bool) -> None:
        if seen is None:
            self.ws.messages.error(f"{change.id} cannot be decided here (it is not in the store as listed)")
            return
        try:
            command = session.watch.command_for(change, seen, ratify=ratify)
        except PlurDeskError as exc:
            self.ws.messages.error(str(exc))
            return
        self.ws.change(lambda: session.execute(command))  # type: ignore[arg-type]

    def _decide_group(self, *, ratify: bool) -> bool:
        """A group row (one session and writer) selected: every change under it, asked once (app/changes/change_decisions.py:
        one that moved on since it was listed is refused and named, and the others still go through)."""
        from PySide6.QtWidgets import QMessageBox  # made on first use, not at launch

        session, group = self.ws.session, self.pane.selected_group()
        if session is None or not group or not self.nav.pane_on_screen(self.pane):
            return bool(group)
        verb = "Ratify" if ratify else "Revert"
        kinds = ", ".join(sorted({c.kind for c in group}))
        asked = QMessageBox.question(
            self.pane, f"{verb} {len(group)} agent changes", f"{verb} all {len(group)} changes of this group ({kinds})?"
        )
        if asked != QMessageBox.StandardButton.Yes:
            return True
        seen = dict(self._seen)
        from plur_desk.app.changes.change_decisions import (
            decide_group,  # the commands: after the first draft is reviewable
        )

        self.ws.change(lambda: decide_group(session, group, seen, ratify=ratify))
        return True

    def revert_from_history(self) -> None:
        """The History pane's selected event, when it is behind a change the queue lists (an agent's resolve, a
        promotion logged as an update): that change reverted with the same command as from the queue, asked first."""
        from PySide6.QtWidgets import QMessageBox  # made on first use, not at launch

        session, history = self.ws.session, self.nav.panes.get("history")
        if session is None or history is None or not self.nav.pane_on_screen(history):
            return
        event = history.current_event()  # type: ignore[attr-defined]
        if event is None:
            return
        change = change_behind(event, self.pane.changes())
        if change is None:
            self.ws.messages.error(
                "No agent change the Changes queue lists stands on this event: it was ratified or reverted already, "
                "made before watching began, or it is a reviewer's decision"
            )
            return
        asked = QMessageBox.question(
            history,
            "Revert this agent change",
            f"Revert {change.kind.replace('_', ' ')} of {change.id} by {change.writer}? The watched baseline's "
            "values are put back (undoable).",
        )
        if asked == QMessageBox.StandardButton.Yes:
            self._decide(session, change, self._seen.get((change.target, change.id)), ratify=False)

    def start_watching(self) -> None:
        session = self.ws.session
        if session is None or not self.ready:
            return

        def start() -> ChangeSet:
            started = session.watch.start()
            said = "watching from here: agent changes after now are listed in Changes"
            return ChangeSet().saying(said if started else "this store is watched already")

        self.ws.change(start)
