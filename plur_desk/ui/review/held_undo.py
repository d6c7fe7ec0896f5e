"""Undo and redo pressed while an approval asked for before them is still in its contradiction check: held until
the check ends, then run behind the approval's write, or refused when nothing was approved. While an approval waits
for its contradiction question (waiting_question.py), undo withdraws it (nothing on disk changes) and redo is
refused: both would otherwise act on what came before it."""

from __future__ import annotations

from plur_desk.app.review.session import ReviewSession
from plur_desk.ui.review.waiting_question import WaitingQuestion
from plur_desk.ui.workspace import Workspace


class UndoBehindCheck:
    def __init__(self, workspace: Workspace, question: WaitingQuestion) -> None:
        self.workspace, self.question = workspace, question
        # the approvals asked for and not yet decided, in order: each with its store, the undo (False) or redo
        # (True) pressed after it and before the next one, and how many other decisions were handed before it
        self._checking: list[tuple[object, ReviewSession, list[bool], int]] = []

    def pressed(self, redo: bool) -> None:
        """Ctrl+Z takes back first an approval still being checked (held until the check ends), then the last one
        waiting for its answer, then what was written; Ctrl+Shift+Z never lands before an approval waiting."""
        if self.hold(redo):
            return
        if redo and self.question.waiting:
            self.workspace.messages.error("An approval is waiting for your answer; nothing was redone")
        elif redo or not self.withdraw():
            self.workspace.replay(redo=redo)

    def withdraw(self) -> bool:
        engram_id = self.question.withdraw_last()
        if engram_id is not None:
            self.workspace.messages.status(f"Withdrew the approval of {engram_id} waiting for your answer", 6000)
        return engram_id is not None

    def checking(self, approval: object, session: ReviewSession) -> None:
        """An approval was asked for; its check runs (or waits for the ones asked before it: approval_checks.py)."""
        self._checking.append((approval, session, [], self.workspace.decisions_handed))

    def hold(self, redo: bool) -> bool:
        """An undo or redo pressed while an approval asked for before it is still being checked (it is not on the
        session's lane yet, so `Workspace.replay` would not wait for it): held until that approval, the last one
        asked for, is decided. An undo run at once took back the approval before that one (a refused A, then Ctrl+Z
        at once, undid the earlier approval whenever the check had not been read in advance)."""
        session = self.workspace.session
        self._checking = [c for c in self._checking if c[1] is session]  # another store's approvals were dropped
        if not self._checking:
            return False
        if self.workspace.decisions_handed != self._checking[-1][3]:
            # another decision (a reject, an edit, a tension's verdict) was made after the approval still checked:
            # held, the key would take back the approval once written (it is then on top), not the decision the
            # reviewer just made; run now, it would take back that decision while the approval is still to come
            verb = "redo" if redo else "undo"
            self.workspace.messages.error(
                f"An approval asked for before is still being checked, and another decision came after it; nothing "
                f"was {verb}ne. Press it again once the approval is written."
            )
            return True
        self._checking[-1][2].append(redo)
        return True

    def ended(self, approval: object, approved: bool, waits: bool = False) -> None:
        """The approval's check is over: what was pressed after it runs now, behind the approval's write, or is
        refused when nothing was approved (as behind an action that failed: it would take back an earlier one).
        An approval now waiting for its answer (`waits`) is withdrawn by the undo pressed meanwhile:
        the draft stays a draft, as an undo behind its write would have left it."""
        found = next((c for c in self._checking if c[0] is approval), None)
        if found is None:
            return
        self._checking.remove(found)
        for redo in found[2]:
            verb = "redo" if redo else "undo"
            if approved:
                self.workspace.replay(redo=redo)
            elif waits and not redo and self.withdraw():
                waits = False  # one undo took back the one approval; a second one waits for its own key
            else:
                self.workspace.messages.error(
                    f"The approval asked for before this {verb} was not made; nothing was {verb}ne"
                )
