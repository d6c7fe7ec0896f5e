"""Small dialogs: reject reason, approval level, reviewer name, bulk verdicts, shortcut sheet, command palette."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from plur_desk.app.review.reviewer import lookalike_problem, reviewer_problem, trusted_reviewers
from plur_desk.domain.plur_rules.engram_rules import LADDER
from plur_desk.ui.actions import ACTIONS
from plur_desk.ui.common import icons
from plur_desk.ui.common.widgets import GRACE_S

_NEGATIVE = ("reject", "dismiss", "retire", "expire")


# Keys that belong to one widget or one moment rather than to an action; listed on the shortcut sheet (F1).
CONTEXT_KEYS: tuple[tuple[str, str, str], ...] = (
    ("Ctrl+A", "Select every draft in the queue (then A or R acts on all, with a reason)", "Drafts"),
    ("Ctrl+Return", "Save the edited statement", "Drafts, while editing"),
    ("Esc", "Cancel the edit", "Drafts, while editing"),
    ("Enter", "Commit the previewed Keep Left / Keep Right", "Tensions, while a preview shows"),
    ("Esc", "Cancel the previewed resolution", "Tensions, while a preview shows"),
    ("Enter or Down", "Go from the search field to the results", "Search field"),
    ("Esc", "Go from the search field back to the queue", "Search field"),
    ("Alt+Q", "Go to the approval waiting: Ctrl+Return approves the text shown, Esc leaves a draft", "Drafts"),
    ("Ctrl+Z", "Withdraw the last approval waiting for its question (nothing written is undone)", "Drafts"),
)


def _line_edit(combo: QComboBox) -> QLineEdit:
    """The line edit of an editable combo box (Qt types it as optional: it exists once setEditable(True))."""
    edit = combo.lineEdit()
    assert edit is not None
    return edit


def _buttons(dialog: QDialog, ok_text: str) -> QDialogButtonBox:
    """OK/Cancel with OK named for what it does, and an icon that says so (never a check mark on a rejection)."""
    box = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
    ok = box.button(QDialogButtonBox.StandardButton.Ok)
    ok.setText(ok_text)
    ok.setDefault(True)
    icon_name = "reject" if ok_text.lower().startswith(_NEGATIVE) else "approve"
    ok.setIcon(icons.icon(icon_name))
    ok.setProperty("iconName", icon_name)
    box.accepted.connect(dialog.accept)
    box.rejected.connect(dialog.reject)
    return box


class ReasonDialog(QDialog):
    """Asks why (reject, dismiss, bulk). Enter confirms, Esc cancels; recent reasons are offered."""

    def __init__(
        self,
        title: str,
        prompt: str,
        recent: list[str],
        parent: QWidget | None = None,
        ok_text: str = "Reject",
        required: bool = True,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("reasonDialog")
        self.setWindowTitle(title)
        self.required = required
        layout = QVBoxLayout(self)
        label = QLabel(prompt)
        label.setWordWrap(True)
        layout.addWidget(label)
        self.combo = QComboBox()
        self.combo.setObjectName("reasonField")
        self.combo.setEditable(True)
        self.combo.addItems(recent)
        self.combo.setCurrentText("")
        self.combo.setAccessibleName("Reason")
        _line_edit(self.combo).setPlaceholderText("Why? (recent reasons in the list)")
        layout.addWidget(self.combo)
        self.buttons = _buttons(self, ok_text)
        layout.addWidget(self.buttons)
        _line_edit(self.combo).textChanged.connect(self._update)
        self._update()
        self.resize(460, self.sizeHint().height())

    def _update(self) -> None:
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setEnabled(bool(self.reason) or not self.required)

    @property
    def reason(self) -> str:
        return self.combo.currentText().strip()


class LevelDialog(QDialog):
    def __init__(self, count: int, default: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("levelDialog")
        self.setWindowTitle("Approve as…")
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(f"Commitment level for {count} draft{'s' if count != 1 else ''}:"))
        self.list = QListWidget()
        self.list.setAccessibleName("Commitment level")
        hints = {
            "exploring": "a hypothesis, injected with low weight",
            "leaning": "likely true (PLUR's default)",
            "decided": "settled; injected with high weight",
            "locked": "a rule; also records who locked it",
        }
        for level in LADDER:
            item = QListWidgetItem(f"{level}  —  {hints[level]}")
            item.setData(Qt.ItemDataRole.UserRole, level)
            self.list.addItem(item)
        self.list.setCurrentRow(LADDER.index(default) if default in LADDER else 2)
        self.list.itemActivated.connect(lambda _item: self.accept())
        # wide and tall enough for every level and its description: nothing cut off, no scroll bar
        frame = 2 * self.list.frameWidth()
        self.list.setMinimumWidth(self.list.sizeHintForColumn(0) + frame + 8)
        self.list.setMinimumHeight(sum(self.list.sizeHintForRow(i) for i in range(self.list.count())) + frame + 4)
        layout.addWidget(self.list)
        self.note = QLineEdit()
        self.note.setPlaceholderText("Note (optional; the reason for a lock)")
        self.note.setAccessibleName("Note")
        layout.addWidget(self.note)
        layout.addWidget(_buttons(self, "Approve"))

    @property
    def level(self) -> str:
        item = self.list.currentItem()
        return str(item.data(Qt.ItemDataRole.UserRole)) if item else "decided"


class ReviewerDialog(QDialog):
    """Who is reviewing. OK stays disabled while the name does not name a person (the app layer's rule)."""

    def __init__(
        self, suggested: str, parent: QWidget | None = None, *, remember: bool = True, problem: str = ""
    ) -> None:
        super().__init__(parent)
        self._known: set[str] | None = None  # the reviewers this user trusts: a look-alike name is refused
        self.setObjectName("reviewerDialog")
        self.setWindowTitle("Who is reviewing?")
        layout = QVBoxLayout(self)
        text = QLabel("Every decision you make is recorded in the store's history with your name as a human reviewer.")
        text.setWordWrap(True)
        layout.addWidget(text)
        self.name = QLineEdit(suggested)
        self.name.setObjectName("reviewerName")
        self.name.setAccessibleName("Your name")
        layout.addWidget(self.name)
        self.problem = QLabel(problem)
        self.problem.setObjectName("reviewerProblem")
        self.problem.setTextFormat(Qt.TextFormat.PlainText)
        self.problem.setWordWrap(True)
        layout.addWidget(self.problem)
        self.remember = QCheckBox("Use this name for later runs too")
        self.remember.setObjectName("rememberReviewer")
        self.remember.setChecked(remember)
        layout.addWidget(self.remember)
        self.buttons = _buttons(self, "Start reviewing")
        layout.addWidget(self.buttons)
        self.name.textChanged.connect(self._check)
        self._check(self.name.text(), initial=bool(problem))

    def _check(self, text: str, initial: bool = False) -> None:
        if self._known is None:
            self._known = trusted_reviewers()  # read once, when the first name is checked
        problem = reviewer_problem(text) or lookalike_problem(text, self._known)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(problem is None)
        if not initial:
            self.problem.setText(problem or "")

    @property
    def reviewer(self) -> str:
        return self.name.text().strip()


class BulkDialog(QDialog):
    """One question for a verdict on many drafts: how many, which of them are flagged, and a note or a reason that
    fits the verdict. The verdict decides the clean drafts and leaves the flagged ones in the queue, unless the
    reviewer ticks the box that names them; the button says how many it decides and why it is off when it is.

    A `late` question appears on its own (when the approval's contradiction check answered), not in answer to the
    key just pressed: for GRACE_S after it shows, its button is off and no Return or click accepts it, so a Return
    typed for the list as it appears cannot approve drafts the reviewer never saw named."""

    def __init__(
        self,
        verb: str,
        count: int,
        flagged: list[tuple[str, str, str]],
        recent: list[str],
        parent: QWidget | None = None,
        extra: str = "",
        *,
        late: bool = False,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("bulkDialog")
        self._late = late
        self._armed = not late  # a late question takes answers GRACE_S after it appeared
        self.verb = verb
        self.setWindowTitle(f"{verb.capitalize()} {count} drafts")
        layout = QVBoxLayout(self)
        rejecting = verb == "reject"
        prompt = QLabel(
            f"{verb.capitalize()} all {count} selected drafts? "
            + (
                "Give the reason; it is recorded on each of them, and the statements stay rejected if asserted again."
                if rejecting
                else "An optional note is recorded on each approval."
            )
        )
        prompt.setObjectName("bulkPrompt")
        prompt.setTextFormat(Qt.TextFormat.PlainText)
        prompt.setWordWrap(True)
        layout.addWidget(prompt)
        if extra:  # e.g. what the selection may contradict; plain text, as agents wrote it
            note = QLabel(extra)
            note.setObjectName("bulkExtra")
            note.setTextFormat(Qt.TextFormat.PlainText)
            note.setWordWrap(True)
            layout.addWidget(note)
        self.flagged = QListWidget()
        self.flagged.setObjectName("flaggedDrafts")
        self.flagged.setAccessibleName("Flagged drafts in this batch")
        for engram_id, flags, statement in flagged:
            short = statement if len(statement) <= 90 else statement[:89] + "…"
            self.flagged.addItem(QListWidgetItem(f"{engram_id} — {flags}: {short}"))
        self.include = QCheckBox(f"Include the {len(flagged)} flagged draft{'s' if len(flagged) != 1 else ''} above")
        self.include.setObjectName("includeFlagged")
        if flagged:
            note = QLabel(
                f"{len(flagged)} of the {count} drafts are flagged and stay in the queue for a look one by one, "
                f"unless you include them:"
            )
            note.setTextFormat(Qt.TextFormat.PlainText)
            note.setWordWrap(True)
            layout.addWidget(note)
            layout.addWidget(self.flagged)
            layout.addWidget(self.include)
        else:
            self.flagged.hide()
            self.include.hide()
        self.combo = QComboBox()
        self.combo.setObjectName("reasonField")
        self.combo.setEditable(True)
        self.combo.addItems(recent)
        self.combo.setCurrentText("")
        self.combo.setAccessibleName("Reason" if rejecting else "Approval note")
        _line_edit(self.combo).setPlaceholderText(
            "Why are they wrong? (recent reasons in the list)" if rejecting else "Note (optional)"
        )
        layout.addWidget(self.combo)
        self.required = rejecting
        self.buttons = _buttons(self, f"{verb.capitalize()} {count}")
        layout.addWidget(self.buttons)
        self.count, self.flagged_count = count, len(flagged)
        self.why_off = QLabel()  # a button that is off says why, in words next to it
        self.why_off.setObjectName("bulkWhyOff")
        self.why_off.setTextFormat(Qt.TextFormat.PlainText)
        self.why_off.setWordWrap(True)
        layout.insertWidget(layout.indexOf(self.buttons), self.why_off)
        _line_edit(self.combo).textChanged.connect(self._update)
        self.include.toggled.connect(self._update)
        self._update()
        self.resize(560, self.sizeHint().height())

    @property
    def include_flagged(self) -> bool:
        return self.include.isChecked()

    @property
    def deciding(self) -> int:
        """How many drafts the verdict decides as the dialog stands."""
        return self.count if self.include_flagged else self.count - self.flagged_count

    def armed(self) -> bool:
        """Whether the question takes an answer: at once, or GRACE_S after a late one appeared."""
        return self._armed

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._armed:
            QTimer.singleShot(round(GRACE_S * 1000), self, self._arm)

    def _arm(self) -> None:
        self._armed = True
        self._update()

    def accept(self) -> None:
        if self.armed():  # else a Return or click meant for what was there before the question appeared
            super().accept()

    def _update(self) -> None:
        n, verb = self.deciding, self.verb.capitalize()
        why = ""
        if n == 0:
            why = f"All {self.count} drafts are flagged: tick the box to include them, or decide them one by one."
        elif self.required and not self.reason:
            why = "Give a reason first: it is recorded on each rejected draft."
        button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        left = self.count - n
        button.setText(f"{verb} {n}" + (f" (leave {left} flagged)" if left else ""))
        button.setEnabled(not why and self.armed())
        button.setToolTip(why or ("" if self.armed() else "Just appeared: take a look first"))
        self.why_off.setText(why)
        self.why_off.setVisible(bool(why))

    @property
    def reason(self) -> str:
        return self.combo.currentText().strip()


class ShortcutSheet(QDialog):
    """Every action and its keys, generated from the action table."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("shortcutSheet")
        self.setWindowTitle("Keyboard shortcuts")
        layout = QVBoxLayout(self)
        rows = [(s.key_text(), s.text, s.pane.title() or "Everywhere") for s in ACTIONS if s.shortcuts]
        rows += list(CONTEXT_KEYS)
        self.table = QTableWidget(len(rows), 3)
        self.table.setHorizontalHeaderLabels(["Keys", "Action", "Where"])
        for i, row in enumerate(rows):
            for j, text in enumerate(row):
                self.table.setItem(i, j, QTableWidgetItem(text))
        # Keys and Where as wide as their text; Action takes the rest and wraps, so Where is never off the edge
        header = self.table.horizontalHeader()
        for column, mode in ((0, "ResizeToContents"), (1, "Stretch"), (2, "ResizeToContents")):
            header.setSectionResizeMode(column, getattr(QHeaderView.ResizeMode, mode))
        self.table.setWordWrap(True)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        layout.addWidget(self.table)
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        box.rejected.connect(self.reject)
        layout.addWidget(box)
        self.resize(720, 640)


class CommandPalette(QDialog):
    """Type to find any action; Enter runs it."""

    def __init__(
        self, run: Callable[[str], None], enabled: Callable[[str], bool], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("commandPalette")
        self.setWindowTitle("Command palette")
        self._run = run
        layout = QVBoxLayout(self)
        self.field = QLineEdit()
        self.field.setPlaceholderText("Type a command…")
        self.field.setAccessibleName("Command")
        layout.addWidget(self.field)
        self.list = QListWidget()
        self.list.setAccessibleName("Commands")
        for spec in ACTIONS:
            if not enabled(spec.id):
                continue
            item = QListWidgetItem(f"{spec.text}    {spec.key_text()}".rstrip())
            item.setData(Qt.ItemDataRole.UserRole, spec.id)
            self.list.addItem(item)
        layout.addWidget(self.list)
        self.field.textChanged.connect(self._filter)
        self.field.returnPressed.connect(self._accept_current)
        self.list.itemActivated.connect(lambda _i: self._accept_current())
        self._filter("")
        self.resize(480, 420)

    def _filter(self, text: str) -> None:
        words = text.lower().split()
        first = None
        for i in range(self.list.count()):
            item = self.list.item(i)
            hidden = not all(w in item.text().lower() for w in words)
            item.setHidden(hidden)
            if not hidden and first is None:
                first = item
        if first is not None:
            self.list.setCurrentItem(first)

    def _accept_current(self) -> None:
        item = self.list.currentItem()
        if item is not None and not item.isHidden():
            self.accept()
            self._run(str(item.data(Qt.ItemDataRole.UserRole)))
