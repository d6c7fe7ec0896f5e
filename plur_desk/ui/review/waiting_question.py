"""The contradiction question of an approval, asked without interrupting: an approval that may contradict the store
waits under the queue ("waiting for you") with the exact statement it approves and what it may contradict, until
the reviewer answers it. It never pops up over other work and never takes the keyboard focus, so no key typed for
another widget (in the search field, on the next draft, in the editor) can reach it; a modal question opened when a
background check ended took the next keys, and Left then Return typed into the search field approved.

Approving anyway takes a deliberate act in the question itself: a click on "Approve anyway", or Ctrl+Return with
the keyboard focus inside the question (reached by a click or Alt+Q). Return, Space and Escape there leave the draft
a draft; the approve button never takes the focus, so no Tab, Space or Return reaches it. A click that lands within
GRACE_S of the question appearing (meant for what was under the pointer before it) is ignored."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QFrame, QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from plur_desk.app.review.rows import DraftRow
from plur_desk.domain.seen import Seen
from plur_desk.ui.common.widgets import GRACE_S, banner_label, window_shortcut


@dataclass(frozen=True)
class Waiting:
    """One approval waiting for its answer: the draft as shown when A was pressed, and what it may contradict."""

    session: object  # the store's session it was asked for in
    row: DraftRow
    seen: Seen
    lines: tuple[str, ...]
    approve: Callable[[], None]  # runs the approval as asked for (the write refuses if the draft moved since)

    def text(self) -> str:
        statement = dict(self.seen.fingerprint).get("statement")
        return (
            f"Waiting for you: approve {self.seen.id} anyway? It may contradict what the store already says.\n"
            f"You approve: “{statement}”\n" + "\n".join(self.lines)
        )


class WaitingQuestion(QFrame):
    """The approvals waiting for an answer, oldest first; the first is shown, the others are counted."""

    clock = staticmethod(time.monotonic)  # when the question appeared (tests substitute their own)

    def __init__(self, back: Callable[[], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._back = back  # where the keys go once the question the focus was in is answered
        self.setObjectName("conflictQuestion")
        self.setAccessibleName("Approval waiting for your answer")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.waiting: list[Waiting] = []
        self._shown: tuple[Waiting, float] | None = None  # the approval shown, and since when
        self.label = banner_label()  # plain text: agent-written statements are data, never markup
        self.label.setObjectName("conflictQuestionText")
        self.approve_button = QPushButton("Approve anyway (Ctrl+Return)")
        self.approve_button.setObjectName("conflictApproveAnyway")
        self.approve_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # no Tab, Space or Return ever reaches it
        self.approve_button.setAutoDefault(False)
        self.leave_button = QPushButton("Leave as draft (Esc)")
        self.leave_button.setObjectName("conflictLeaveDraft")
        self.leave_button.setAutoDefault(False)
        buttons = QHBoxLayout()
        buttons.addWidget(self.approve_button)
        buttons.addWidget(self.leave_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.label)
        layout.addLayout(buttons)
        self.approve_button.clicked.connect(self._clicked_approve)
        self.leave_button.clicked.connect(self.leave)
        for keys, slot, context in (
            ("Ctrl+Return", self.approve, Qt.ShortcutContext.WidgetWithChildrenShortcut),
            ("Ctrl+Enter", self.approve, Qt.ShortcutContext.WidgetWithChildrenShortcut),
            ("Escape", self.leave, Qt.ShortcutContext.WidgetWithChildrenShortcut),
            ("Return", self.leave, Qt.ShortcutContext.WidgetWithChildrenShortcut),
            ("Alt+Q", self.take_focus, Qt.ShortcutContext.WindowShortcut),  # only moves the focus here
        ):
            window_shortcut(keys, self, slot, context)  # a key typed into an open dialog never answers it
        self.hide()

    def add(self, waiting: Waiting) -> None:
        self.waiting = [w for w in self.waiting if w.seen.id != waiting.seen.id] + [waiting]
        self._show_first()

    def holds(self, engram_id: str) -> bool:
        return any(w.seen.id == engram_id for w in self.waiting)

    def keep_only(self, session: object) -> None:
        """Another store was opened: what waited for an answer in the one before is dropped."""
        if any(w.session is not session for w in self.waiting):
            self.waiting = [w for w in self.waiting if w.session is session]
            self._show_first()

    def first(self) -> Waiting | None:
        return self.waiting[0] if self.waiting else None

    def _show_first(self) -> None:
        first = self.first()
        if first is None:
            focus = QApplication.focusWidget()
            had_focus = focus is not None and self.isAncestorOf(focus)
            self._shown = None
            self.hide()
            if had_focus:
                self._back()
            return
        more = len(self.waiting) - 1
        self.label.setText(
            first.text() + (f"\n({more} more approval{'s' if more > 1 else ''} waiting)" if more else "")
        )
        if self._shown is None or self._shown[0] is not first:
            self._shown = (first, self.clock())
        self.show()

    def take_focus(self) -> None:
        if self.waiting:
            self.leave_button.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def _clicked_approve(self) -> None:
        if (
            self._shown is not None and self.clock() - self._shown[1] >= GRACE_S
        ):  # a click meant for what was there before it appeared
            self.approve()

    def approve(self) -> None:
        """Approve anyway: the first approval waiting, exactly as shown (in the store it was asked for in: one
        waiting in a store closed since was dropped when the new one was listed)."""
        if self.waiting:
            first = self.waiting.pop(0)
            self._show_first()
            first.approve()

    def leave(self) -> None:
        if self.waiting:
            self.waiting.pop(0)
            self._show_first()

    def withdraw_last(self) -> str | None:
        """Ctrl+Z while approvals wait: the last one asked for is withdrawn (nothing else is undone); its id."""
        if not self.waiting:
            return None
        last = self.waiting.pop()
        self._show_first()
        return last.seen.id

    def clear(self) -> None:
        self.waiting = []
        self._show_first()
