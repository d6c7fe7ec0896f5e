"""The reviewer's signing key in the window: unlock asked once, replacing a registered key only on confirmation,
the Reviewer Identity dialog (where the key lives, rotate, report lost), and the checkpoint when a session ends."""

from __future__ import annotations

import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, QThread, Signal, Slot
from PySide6.QtWidgets import QWidget

from plur_desk.app.trust.signing import fingerprint
from plur_desk.domain.changes import ChangeSet
from plur_desk.infra.clock import iso_ms
from plur_desk.infra.errors import KeyConflict, PlurDeskError
from plur_desk.ui.common.widgets import escape
from plur_desk.ui.workspace import Workspace

UNLOCK_WAIT_S = 600.0


class UnlockAsker(QObject):
    """Asks the reviewer (in the GUI thread, whichever thread needs the key) whether to try the keyring again."""

    _ask = Signal(str, object)

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self._parent = parent
        self._ask.connect(self._show)

    def __call__(self, reason: str) -> bool:
        if QThread.currentThread() is self.thread():
            return self._question(reason)
        reply: dict[str, object] = {"done": threading.Event(), "yes": False}
        self._ask.emit(reason, reply)
        reply["done"].wait(UNLOCK_WAIT_S)  # type: ignore[attr-defined]
        return bool(reply["yes"])

    @Slot(str, object)
    def _show(self, reason: str, reply: dict[str, object]) -> None:
        reply["yes"] = self._question(reason)
        reply["done"].set()  # type: ignore[attr-defined]

    def _question(self, reason: str) -> bool:
        from PySide6.QtWidgets import QMessageBox  # made on first use, not at launch

        box = QMessageBox(self._parent)
        box.setWindowTitle("Unlock your reviewer key")
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setText(
            f"{reason}\n\nYour decision is signed with a key kept in the system keyring. Unlock it and try again? "
            "If you cancel, the decision is not written."
        )
        box.setStandardButtons(QMessageBox.StandardButton.Retry | QMessageBox.StandardButton.Cancel)
        return box.exec() == QMessageBox.StandardButton.Retry


class IdentityController(QObject):
    """The reviewer's key in the window: a key conflict offers a confirmed replacement, the Reviewer Identity
    dialog shows where the key lives and rotates or revokes it, and a session ends with its checkpoint."""

    def __init__(self, workspace: Workspace, dialog_parent: QWidget, back_to_queue: Callable[[], None]) -> None:
        super().__init__(workspace)
        self.workspace = workspace
        self._parent = dialog_parent
        self._back_to_queue = back_to_queue
        workspace.add_failure_handler(self.key_failed)

    def key_failed(self, error: Exception) -> bool:
        """Handles a refusal about the key (True when handled): a conflict offers a confirmed replacement."""
        from PySide6.QtWidgets import QMessageBox  # made on first use, not at launch

        session = self.workspace.session
        if not isinstance(error, KeyConflict) or session is None:
            return False
        box = QMessageBox(self._parent)
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("Another key is registered for you")
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setText(str(error))
        mine = box.addButton("It was mine: replace it (what it signed still counts)", QMessageBox.ButtonRole.AcceptRole)
        not_mine = box.addButton(
            "It was NOT mine: replace it and distrust everything it signed", QMessageBox.ButtonRole.DestructiveRole
        )
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        clicked = box.clickedButton()
        self._back_to_queue()  # back to the queue the refused decision came from
        if clicked in (mine, not_mine):
            disown = clicked is not_mine
            self.workspace.change(lambda: session.replace_key(new_key=False, disown=disown))
        else:
            self.workspace.messages.error(str(error))
        return True

    def show_reviewer_identity(self) -> None:
        from PySide6.QtWidgets import QMessageBox  # made on first use, not at launch

        session = self.workspace.session
        if session is None:
            return
        keys = session.keys
        try:
            public = keys.public_key()
        except PlurDeskError as exc:
            self.workspace.messages.error(str(exc))
            return
        where = keys.vault.location(keys.identity)
        box = QMessageBox(self._parent)
        box.setObjectName("reviewerIdentityDialog")
        box.setWindowTitle("Reviewer identity")
        box.setText(
            f"<p>You sign every decision as <b>{escape(keys.identity)}</b> "
            f"(key fingerprint <code>{fingerprint(public)}</code>).</p>"
            f"<p>The private key is in the {escape(where.where)}: {escape(where.protects)}.</p>"
            "<p>The public key is registered in this store's keys.yaml, where PLUR finds it. Which keys count is "
            "yours to say: your own, keys you trusted after checking their fingerprint, and keys someone you trust "
            "endorsed; a key that is only listed in keys.yaml counts for nothing.</p>"
        )
        rotate = box.addButton("Rotate key", QMessageBox.ButtonRole.ActionRole)
        trust = box.addButton("Trust a key listed in keys.yaml…", QMessageBox.ButtonRole.ActionRole)
        trust.setObjectName("trustListedKey")
        lost = box.addButton("My key was lost or exposed…", QMessageBox.ButtonRole.DestructiveRole)
        box.addButton(QMessageBox.StandardButton.Close)
        box.exec()
        if box.clickedButton() is trust:
            self.trust_listed_key()
        elif box.clickedButton() is rotate:
            self.workspace.change(lambda: session.replace_key(new_key=True))
        elif box.clickedButton() is lost and self._confirm_revoke():
            self.workspace.change(lambda: session.replace_key(new_key=True, revoke=True))

    def trust_listed_key(self) -> None:
        """Trust one key keys.yaml lists but this user does not trust yet: chosen by identity and fingerprint, then
        confirmed with both shown (a key is never trusted because it is listed: an agent can write keys.yaml)."""
        from PySide6.QtWidgets import QInputDialog, QMessageBox  # made on first use, not at launch

        session = self.workspace.session
        if session is None:
            return
        entries = session.trust.untrusted_entries()
        if not entries:
            self.workspace.messages.show("Every key listed in keys.yaml is one you trust already.")
            return
        trusted = session.trust.trusted()
        shown = [
            f"{e.identity}   fingerprint {fingerprint(e.public_key)}"
            + (f"   LOOK-ALIKE of {twin}" if (twin := trusted.lookalike(e.identity)) else "")
            for e in entries
        ]
        picker = QInputDialog(self._parent)
        picker.setObjectName("trustKeyPicker")
        picker.setWindowTitle("Trust a key")
        picker.setLabelText("Keys listed in keys.yaml that you do not trust yet:")
        picker.setComboBoxItems(shown)
        picker.setComboBoxEditable(False)
        if picker.exec() != QInputDialog.DialogCode.Accepted or picker.textValue() not in shown:
            return
        entry = entries[shown.index(picker.textValue())]
        twin = trusted.lookalike(entry.identity)
        if twin is not None:  # trusting it would make a second "Alice" whose decisions pass for hers
            self.workspace.messages.error(
                f"{entry.identity!r} looks like {twin!r}, whom you trust, but is another name"
            )
            return
        box = QMessageBox(self._parent)
        box.setObjectName("trustKeyConfirm")
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("Trust this key?")
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setText(
            f"Trust the key of {entry.identity}\nfingerprint {fingerprint(entry.public_key)}\n\n"
            "Only if that person told you this fingerprint themselves (in person, or over a channel you trust): "
            "anyone who can write the store can list a key under any name. Their signed decisions then count as "
            "theirs for you, in every store."
        )
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel)
        if box.exec() != QMessageBox.StandardButton.Yes:
            return
        identity, key, at = entry.identity, entry.public_key, iso_ms(session.now())
        self.workspace.change(lambda: ChangeSet(reloaded=True, message=session.trust.trust_key(identity, key, at)))

    def _confirm_revoke(self) -> bool:
        from PySide6.QtWidgets import QMessageBox  # made on first use, not at launch

        answer = QMessageBox.question(
            self._parent,
            "Revoke the key",
            "A new key replaces it, and anything signed with the old key from now on shows as INVALID. "
            "Decisions it signed before now still count. Revoke it?",
        )
        return answer == QMessageBox.StandardButton.Yes

    def end_session(self) -> None:
        """A session that changed a hash-chained store ends with a checkpoint signed by the reviewer."""
        session = self.workspace.session
        if session is not None:
            try:
                session.end()
            except PlurDeskError as exc:
                self.workspace.messages.error(f"no closing checkpoint: {exc}")
