"""The signing side of a review session: every event leaves the app signed and bound to what it decided, key
replacement, the closing checkpoint. (What review records are worth: app/review/review_verdicts.py.)"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from plur_desk.app.demo import DEMO_MARK, from_demo_copy, is_demo_copy
from plur_desk.app.history.history_index import HistoryIndex
from plur_desk.app.trust.signing import ReviewerKeys
from plur_desk.app.trust.verifier import TrustChecker
from plur_desk.domain.changes import ChangeSet
from plur_desk.domain.decision import bind, decided
from plur_desk.domain.review import Reviewer, make_event
from plur_desk.domain.trust import TrustState
from plur_desk.infra.copies import copy_value
from plur_desk.store.history.checkpoint import emit_checkpoint
from plur_desk.store.journal import JournalRecord
from plur_desk.store.keys.signatures import claimed_human, verify
from plur_desk.store.plur_store import Edit, PlurStore

Apply = Callable[[dict[str, object]], tuple[dict[str, object], list[dict[str, object]]]]


def _file_of(record: dict[str, object]) -> str:
    """Which file a record is from: a tension names its pair, an engram does not."""
    return "tensions" if "engram_a" in record and "engram_b" in record else "engrams"


class SessionSigning:
    def __init__(self, store: PlurStore, keys: ReviewerKeys, history: HistoryIndex) -> None:
        self.store, self.keys, self.history = store, keys, history
        self.demo = is_demo_copy(
            store.root
        )  # decisions tried in a demo copy are marked so (signed): kept out of others

    def signed(self, edits: list[Edit]) -> list[Edit]:
        """Edits whose events leave the app signed by the reviewer. Before any lock is taken the key is reached
        checked (a locked keyring asks once, and declining writes nothing); it is registered once a write succeeded."""
        self.keys.ready()

        def signing(apply: Apply, key: str) -> Apply:
            def signed_apply(value: dict[str, object]) -> tuple[dict[str, object], list[dict[str, object]]]:
                before = copy_value(value)  # `apply` changes its value in place
                new, events = apply(value)
                # each event signs what it decided: the record, its content and the values set (domain/decision.py)
                block = decided(_file_of(new), key, before, new)
                if self.demo:
                    block[DEMO_MARK] = True
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

    def completion_line(
        self, reviewer: Reviewer, now: Callable[[], datetime]
    ) -> Callable[[JournalRecord, int], dict[str, object] | None]:
        """The one line a reviewer adds on completing another reviewer's interrupted action: their own signed event
        naming the record, who started it and how many of its events were appended (those keep the signatures they
        were journaled with: recovery signs nothing of anyone else's)."""

        def line(record: JournalRecord, appended: int) -> dict[str, object] | None:
            started_by = claimed_human(record.payload)
            if started_by == reviewer.name:
                return None  # her own action: her journaled events say everything
            event = make_event(
                "journal_recovered",
                "",
                now(),
                {
                    "action": "complete_interrupted",
                    "record": record.path.name,
                    "interrupted_action": record.action,
                    "label": record.label,
                    "started_by": started_by,
                    "events_appended": appended,
                },
                reviewer,
            )
            return self.keys.sign(event)

        return line

    def proven_decision(self, reviewer: Reviewer, trust: TrustChecker) -> Callable[[dict[str, object]], bool]:
        """Whether a signed human claim found in the write-ahead journal (a record as a whole, or an event in it)
        was signed by the reviewer it names: by this reviewer's own key (which a killed first decision may not have
        registered yet), or as the trust verdict (`TrustChecker`) says. The journal is in the store folder, where
        any agent can write: only what this proves is ever applied."""
        own: list[str] = []

        def proven(event: dict[str, object]) -> bool:
            if claimed_human(event) == reviewer.name:
                if not own:
                    own.append(self.keys.public_key())
                if verify(event, own[0]) and (trust.demo or not from_demo_copy(event)):
                    return True
            return trust(event).state is TrustState.VALID

        return proven
