"""The signing side of a review session: every event leaves the app signed and bound to what it decided, key
replacement, the closing checkpoint. (What review records are worth: app/review_verdicts.py.)"""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import datetime

from plur_desk.app.history_index import HistoryIndex
from plur_desk.app.signing import ReviewerKeys
from plur_desk.app.trust import TrustChecker
from plur_desk.domain.changes import ChangeSet
from plur_desk.domain.decision import bind, decided
from plur_desk.domain.review import Reviewer
from plur_desk.domain.trust import TrustState
from plur_desk.store.checkpoint import emit_checkpoint
from plur_desk.store.plur_store import Edit, PlurStore
from plur_desk.store.recovery import as_signed
from plur_desk.store.signatures import claimed_human, verify

Apply = Callable[[dict[str, object]], tuple[dict[str, object], list[dict[str, object]]]]


def _file_of(record: dict[str, object]) -> str:
    """Which file a record is from: a tension names its pair, an engram does not."""
    return "tensions" if "engram_a" in record and "engram_b" in record else "engrams"


class SessionSigning:
    def __init__(self, store: PlurStore, keys: ReviewerKeys, history: HistoryIndex) -> None:
        self.store, self.keys, self.history = store, keys, history

    def signed(self, edits: list[Edit]) -> list[Edit]:
        """Edits whose events leave the app signed by the reviewer. Before any lock is taken the key is reached
        checked (a locked keyring asks once, and declining writes nothing); it is registered once a write succeeded."""
        self.keys.ready()

        def signing(apply: Apply, key: str) -> Apply:
            def signed_apply(value: dict[str, object]) -> tuple[dict[str, object], list[dict[str, object]]]:
                before = copy.deepcopy(value)  # `apply` changes its value in place
                new, events = apply(value)
                # each event signs what it decided: the record, its content and the values set (domain/decision.py)
                block = decided(_file_of(new), key, before, new)
                return new, [self.keys.sign(bind(event, block)) for event in events]

            return signed_apply

        return [Edit(e.key, signing(e.apply, e.key), e.expected) for e in edits]

    def key_notices(self) -> list[str]:
        """What was done about the reviewer key without asking (each line once)."""
        notices, self.keys.notices = self.keys.notices, []
        return notices

    def replace_key(self, now: datetime, *, revoke: bool, new_key: bool, disown: bool) -> ChangeSet:
        """After the reviewer confirmed: make a (new) key this reviewer's key in keys.yaml, older ones kept as
        retired (or revoked), and record that as a signed event."""
        event = self.keys.replace(now, revoke=revoke, new_key=new_key, disown=disown)
        appended = self.store.history.append([event])
        self.history.add([event])
        verb = "revoked the old key and registered a new one" if revoke or disown else "replaced the reviewer key"
        warnings = tuple(appended.warnings) + tuple(self.key_notices())
        return ChangeSet(events=1, warnings=warnings, message=f"{verb} for {self.keys.identity}")

    def checkpoint(self, now: datetime) -> dict[str, object] | None:
        """On a hash-chained store, the checkpoint signed by the reviewer that ends a session which changed
        something (PLUR's shape). Returns it, or None when none was written."""
        if self.store.read_only_reasons():
            return None
        try:
            event = emit_checkpoint(self.store.history, self.store.engrams_path, now, self.keys.sign)
        except ValueError:
            return None
        if event is not None:
            self.history.add([event])
        return event

    def resign_recovered(self, reviewer: Reviewer) -> Callable[[dict[str, object]], dict[str, object]]:
        """A recovered event (`data.recovered` changed its bytes) is signed again only by the reviewer it names, and
        only when it carries that reviewer's own signature as written; anything else is left unsigned rather than
        carrying a signature that no longer verifies (or a forged one made valid), so `check` lists it as an
        unsigned human claim."""

        def resign(event: dict[str, object]) -> dict[str, object]:
            actor = event.get("actor")
            if isinstance(actor, dict) and actor.get("asserted_by") == reviewer.name and self._own(event):
                return self.keys.sign(event)
            return {k: v for k, v in event.items() if k not in ("signature", "signer")}

        return resign

    def _own(self, event: dict[str, object]) -> bool:
        """Whether a recovered event carries this reviewer's signature as its writer made it (before the chain's
        `prev` and the `data.recovered` mark): only then is it signed again; an agent's planted event never is."""
        return verify(as_signed(event), self.keys.public_key())

    def proven_decision(self, reviewer: Reviewer, trust: TrustChecker) -> Callable[[dict[str, object]], bool]:
        """Whether a human decision found in the write-ahead journal was signed by the reviewer it names: by this
        reviewer's own key (which a killed first decision may not have registered yet), or by the named reviewer's
        key in keys.yaml. The journal is in the store folder, where any agent can write; an unproven record would
        otherwise become a decision re-signed in the reopening reviewer's name."""
        own: list[str] = []

        def proven(event: dict[str, object]) -> bool:
            if claimed_human(event) == reviewer.name:
                if not own:
                    own.append(self.keys.public_key())
                if verify(event, own[0]):
                    return True
            return trust(event).state is TrustState.VALID

        return proven
