"""Trust shown in the window: History labels and filters, the detail panel's warnings, the Reviewer Identity action."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from ui.conftest import answer_modal, human_events


def test_history_labels_and_filters_human_claims_by_trust(qtbot, window, store_copy):
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    assert human_events(store_copy)[0]["signer"] == "human:Grace Tester"
    notice = window.banner.text()  # the one notice: no dialog stood between the reviewer and the first draft
    assert "Created a signing key for human:Grace Tester" in notice and "0600" in notice and "keys.yaml" in notice
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_4, Qt.KeyboardModifier.ControlModifier)
    pane = window.history
    pane.trust_filter.setCurrentText("signed human decisions")
    signed = list(pane.model.events)  # ours: the demo reviewer's key is in keys.yaml, but this user never trusted it
    assert [e["actor"]["asserted_by"] for e in signed] == ["Grace Tester"]
    assert "human (signed)" in pane.model.data(pane.model.index(0, 1))
    pane.trust_filter.setCurrentText("keys you have not trusted")
    assert [e["actor"]["asserted_by"] for e in pane.model.events] == ["Ada Lovelace"] * 3
    assert "human (UNTRUSTED key)" in pane.model.data(pane.model.index(0, 1))
    # an agent appends a human-looking approval: a claim, not a verdict
    claim = dict(human_events(store_copy)[0], engram_id="ENG-FORGED")
    del claim["signature"], claim["signer"]
    with open(store_copy / "history" / "2026-12.jsonl", "a") as handle:
        handle.write(json.dumps(claim) + "\n")
    window.session.history.refresh()
    pane.trust_filter.setCurrentText("unsigned human claims")
    unsigned = list(pane.model.events)
    assert [e["engram_id"] for e in unsigned] == ["ENG-FORGED"]
    label = pane.model.data(pane.model.index(0, 1))
    assert label.startswith("human (UNSIGNED human claim)")
    assert "Not a verified human decision" in pane.model.data(pane.model.index(0, 1), Qt.ItemDataRole.ToolTipRole)
    assert pane.model.data(pane.model.index(0, 1), Qt.ItemDataRole.ForegroundRole) is not None
    assert "UNSIGNED human claim" in pane.detail.toPlainText()
    pane.trust_filter.setCurrentText("invalid signatures")
    assert len(pane.model.events) == 0
    marked_up = dict(claim, engram_id="ENG-MARKUP", signature="AAAA", signer="<b>Eve</b>")
    with open(store_copy / "history" / "2026-12.jsonl", "a") as handle:
        handle.write(json.dumps(marked_up) + "\n")
    window.session.history.refresh()
    pane.trust_filter.setCurrentText("unknown signers")
    assert [e["engram_id"] for e in pane.model.events] == ["ENG-MARKUP"]
    tip = pane.model.data(pane.model.index(0, 1), Qt.ItemDataRole.ToolTipRole)
    assert "&lt;b&gt;Eve&lt;/b&gt;" in tip and "<b>Eve" not in tip  # agent-written text stays text
    pane.trust_filter.setCurrentText("unverified human claims")
    assert len(pane.model.events) == 2 + 3
    pane.trust_filter.setCurrentText("any trust")
    assert len(pane.model.events) > 5


def test_detail_warns_when_a_review_record_is_not_a_signed_decision(qtbot, window, store_copy):
    session = window.session
    row = session.queue.rows()[0]
    engram = dict(session.engram(row.id))
    engram["review"] = {"state": "approved", "by": "Grace Tester", "at": "2026-12-01T10:00:00.000Z"}
    session._engrams[row.id] = engram  # what an agent's updateEngram would leave (interop test writes it for real)
    from plur_desk.ui.review.detail import engram_html

    text = engram_html(session, row.id)
    assert "NOT a verified human decision" in text and "no signed decision" in text


def test_reviewer_identity_dialog_says_where_the_key_lives(qtbot, window):
    seen: list[str] = []

    def read(dialog):
        assert isinstance(dialog, QMessageBox)
        seen.append(dialog.text())
        dialog.reject()

    answer_modal(read)
    window.qactions["file.identity"].trigger()
    qtbot.waitUntil(lambda: bool(seen), timeout=10000)
    assert "human:Grace Tester" in seen[0] and "0600" in seen[0]
    json.dumps(seen)  # plain text, nothing else


def test_a_key_listed_for_the_reviewer_that_was_never_hers_does_not_stop_her_deciding(qtbot, window, store_copy):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from plur_desk.store.keys.keys_file import register_key
    from plur_desk.store.keys.signatures import public_key_b64

    planted = public_key_b64(Ed25519PrivateKey.generate())  # an agent registered first, under her name
    register_key(store_copy, "human:Grace Tester", planted, "2026-12-01T00:00:00.000Z")
    keys_before = (store_copy / "keys.yaml").read_bytes()
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)  # no dialog: that key decides nothing for her
    (approval,) = human_events(store_copy)
    assert window.session.trust(approval).state.value == "valid"  # signed with her own key
    assert "never yours" in window.banner.text() and "FORGED" in window.banner.text()
    assert (store_copy / "keys.yaml").read_bytes() == keys_before  # nothing rewritten without asking


def test_an_earlier_key_of_hers_in_force_is_replaced_only_after_confirmation(qtbot, window, store_copy):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from plur_desk.app.trust.trust_file import TrustFile
    from plur_desk.domain.trust import OWN
    from plur_desk.store.keys.keys_file import register_key
    from plur_desk.store.keys.signatures import public_key_b64

    impostor = public_key_b64(Ed25519PrivateKey.generate())  # hers once (her trust file says so), now lost
    TrustFile().add("human:Grace Tester", impostor, OWN, "2026-11-01T00:00:00.000Z")
    register_key(store_copy, "human:Grace Tester", impostor, "2026-12-01T00:00:00.000Z")
    engrams_before = (store_copy / "engrams.yaml").read_bytes()
    texts: list[str] = []

    def disown(dialog):
        texts.append(dialog.text())
        button = next(b for b in dialog.buttons() if b.text().startswith("It was NOT mine"))
        button.click()

    answer_modal(disown)
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    qtbot.waitUntil(lambda: bool(human_events(store_copy)), timeout=10000)
    assert "already holds another key of yours" in texts[0]
    assert (store_copy / "engrams.yaml").read_bytes() == engrams_before  # the approval was not written
    (changed,) = human_events(store_copy)
    assert changed["event"] == "reviewer_key_changed" and changed["data"]["action"] == "disown_key"
    qtbot.waitUntil(lambda: window.jobs.pending("session") == 0, timeout=10000)
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        window.qactions["review.approve"].trigger()  # focus is on the dialog's former button; the action is A
    assert window.session.trust(human_events(store_copy)[-1]).state.value == "valid"


def test_a_locked_keyring_is_asked_about_once_and_declining_writes_nothing(qtbot, window, store_copy):
    import keyring
    import keyring.errors
    from keyring.backend import KeyringBackend

    class LockedKeyring(KeyringBackend):
        priority = 1  # type: ignore[assignment]

        def get_password(self, service, username):
            raise keyring.errors.KeyringLocked("the login keyring is locked")

        def set_password(self, service, username, password):
            raise keyring.errors.KeyringLocked("the login keyring is locked")

        def delete_password(self, service, username):
            raise keyring.errors.KeyringLocked("the login keyring is locked")

    keyring.set_keyring(LockedKeyring())
    history = store_copy / "history" / "2026-12.jsonl"
    before = (store_copy / "engrams.yaml").read_bytes(), history.read_bytes()
    asked: list[str] = []

    def cancel(dialog):
        asked.append(dialog.text())
        dialog.button(QMessageBox.StandardButton.Cancel).click()

    answer_modal(cancel)
    with qtbot.waitSignal(window.error_shown, timeout=10000) as shown:
        window.qactions["review.approve"].trigger()  # the key is needed in the worker: asked in the GUI thread
    assert len(asked) == 1 and "locked" in asked[0]
    assert "not written" in shown.args[0]
    assert ((store_copy / "engrams.yaml").read_bytes(), history.read_bytes()) == before


def test_a_key_listed_in_keys_yaml_is_trusted_from_the_window_only_with_identity_and_fingerprint_shown(
    qtbot, window, store_copy
):
    from PySide6.QtWidgets import QInputDialog

    from plur_desk.app.trust.signing import fingerprint
    from plur_desk.domain.trust import TrustState

    session = window.session
    ada = human_events(store_copy, "Ada Lovelace")[0]
    assert session.trust(ada).state is TrustState.UNTRUSTED_KEY  # listed in the demo's keys.yaml, never trusted
    (entry,) = [e for e in session.trust.untrusted_entries() if e.identity == "human:Ada Lovelace"]
    shown: list[str] = []

    def confirm(dialog):
        assert dialog.objectName() == "trustKeyConfirm"
        shown.append(dialog.text())
        dialog.button(QMessageBox.StandardButton.Yes).click()

    def pick(dialog):
        assert isinstance(dialog, QInputDialog)
        shown.append(" | ".join(dialog.comboBoxItems()))
        answer_modal(confirm)
        dialog.setTextValue(next(item for item in dialog.comboBoxItems() if "Ada Lovelace" in item))
        dialog.accept()

    def identity(dialog):
        answer_modal(pick, kind=QInputDialog)
        next(b for b in dialog.buttons() if b.objectName() == "trustListedKey").click()

    answer_modal(identity)
    window.qactions["file.identity"].trigger()
    qtbot.waitUntil(lambda: session.trust(ada).state is TrustState.VALID, timeout=10000)
    assert "human:Ada Lovelace" in shown[0] and fingerprint(entry.public_key) in shown[0]
    assert "human:Ada Lovelace" in shown[1] and fingerprint(entry.public_key) in shown[1]
    assert "told you this fingerprint" in shown[1]
    qtbot.waitUntil(lambda: "You now trust human:Ada Lovelace" in window.statusBar().currentMessage(), timeout=10000)


def test_a_key_listed_for_the_reviewer_that_is_not_hers_is_said_at_open(qtbot, window, store_copy):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from plur_desk.app.trust.signing import fingerprint
    from plur_desk.store.keys.signatures import public_key_b64

    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)  # Grace's first decision: her key is hers
    planted = public_key_b64(Ed25519PrivateKey.generate())
    text = (store_copy / "keys.yaml").read_text()
    (store_copy / "keys.yaml").write_text(
        text.replace(
            "keys:\n", f"keys:\n  - identity: human:Grace Tester\n    public_key: {planted}\n    added_at: x\n", 1
        )
    )
    window.opener.open_path(store_copy)  # opened again (as at launch): said before the queue can be acted on
    qtbot.waitUntil(lambda: "not yours" in window.banner.text(), timeout=20000)
    assert fingerprint(planted) in window.banner.text()


def test_the_reviewer_dialog_refuses_a_look_alike_of_a_reviewer_this_user_trusts(qtbot):
    from PySide6.QtWidgets import QDialogButtonBox

    from plur_desk.app.trust.trust_file import TrustFile
    from plur_desk.domain.trust import OWN
    from plur_desk.ui.common.dialogs import ReviewerDialog

    TrustFile().add("human:Alice", "MCowBQYDK2VwAyEANGbufLuunVttxjPrB4Ys4jCHJ9TsmXdDA+qrWVLE/uI=", OWN, "x")
    dialog = ReviewerDialog("Alice")
    qtbot.addWidget(dialog)
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    assert ok.isEnabled()  # her own name
    for look_alike in ("alice", "\u0410lice", "Al ice"):
        dialog.name.setText(look_alike)
        assert not ok.isEnabled() and "looks like the reviewer 'Alice'" in dialog.problem.text()
    dialog.name.setText("Alice Smith")
    assert ok.isEnabled() and dialog.problem.text() == ""
