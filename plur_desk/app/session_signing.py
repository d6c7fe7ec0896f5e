"""The signing side of a review session: every event leaves the app signed, key replacement, the closing
checkpoint; and the trust of review records (which rejections and approvals a signed event backs)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from plur_desk.app.history_index import HistoryIndex
from plur_desk.app.history_table import parse_line
from plur_desk.app.rows import Verdict
from plur_desk.app.signing import ReviewerKeys
from plur_desk.app.snapshot import Snapshot
from plur_desk.app.trust import TrustChecker
from plur_desk.domain.changes import ChangeSet
from plur_desk.domain.review import Reviewer, make_event
from plur_desk.domain.trust import Trust, TrustState, backs_review
from plur_desk.store.checkpoint import emit_checkpoint
from plur_desk.store.journal import JournalRecord
from plur_desk.store.plur_store import Edit, PlurStore
from plur_desk.store.signatures import claimed_human, verify

Apply = Callable[[dict[str, object]], tuple[dict[str, object], list[dict[str, object]]]]


class SessionSigning:
    def __init__(self, store: PlurStore, keys: ReviewerKeys, history: HistoryIndex) -> None:
        self.store, self.keys, self.history = store, keys, history

    def signed(self, edits: list[Edit]) -> list[Edit]:
        """Edits whose events leave the app signed by the reviewer. Before any lock is taken the key is reached
        checked (a locked keyring asks once, and declining writes nothing); it is registered once a write succeeded."""
        self.keys.ready()

        def signing(apply: Apply) -> Apply:
            def signed_apply(value: dict[str, object]) -> tuple[dict[str, object], list[dict[str, object]]]:
                new, events = apply(value)
                return new, [self.keys.sign(event) for event in events]

            return signed_apply

        return [Edit(e.key, signing(e.apply), e.expected) for e in edits]

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
                if verify(event, own[0]):
                    return True
            return trust(event).state is TrustState.VALID

        return proven


class ReviewVerdicts:
    """Which review records count as a human's verdict: only those a validly signed event backs."""

    def __init__(self, store: PlurStore, history: HistoryIndex, trust: TrustChecker, snapshot: Snapshot) -> None:
        self.store, self.history, self.trust, self.snapshot = store, history, trust, snapshot
        self._unverified: tuple[tuple[object, ...], frozenset[str]] | None = None

    def rejected_verdicts(self) -> dict[str, Verdict]:
        """content_hash -> the latest human rejection, from review records and from history (survives compaction);
        only a signed, valid one counts as a human verdict (`Verdict.trust`)."""
        verdicts = dict(self.history.rejections())
        for engram in self.snapshot.engrams.values():
            rec = engram.get("review")
            digest = str(engram.get("content_hash") or "")
            if isinstance(rec, dict) and rec.get("state") == "rejected" and digest and digest not in verdicts:
                verdicts[digest] = Verdict(
                    str(engram["id"]),
                    str(rec.get("by", "")),
                    str(rec.get("at", "")),
                    str(rec.get("reason", "")),
                    self.review_trust(engram),  # only for records no history event backs: rare
                )
        return verdicts

    def signed_names(self, engram_id: str, record: dict[str, object]) -> list[str]:
        """The ids a review of this engram may be signed under: its own, and those PLUR 0.21 renamed it from,
        unless an engram still under that id carries the same review (a copy never borrows the original's)."""
        names = [engram_id]
        for old in self.history.renames().earlier(engram_id):
            other = self.snapshot.engrams.get(old)
            review = other.get("review") if other is not None else None
            if not (
                isinstance(review, dict)
                and (review.get("at"), review.get("by")) == (record.get("at"), record.get("by"))
            ):
                names.append(old)
        return names

    def unverified_reviews(self) -> set[str]:
        """Ids of engrams whose `review` record no validly signed event backs (one pass over the human lines,
        each verified once; kept until the history, keys.yaml or the engrams change)."""
        self.history.sync_trust()  # until the history is loaded, no review counts as verified
        history = self.history
        stamp = (*history.stamp(), self.store.engrams.identity)  # before the answer (`HistoryIndex.stamp`)
        cached = self._unverified
        if cached is not None and cached[0] == stamp:
            return set(cached[1])
        backed: dict[tuple[str, str], list[dict[str, object]]] = {}
        for line in self.history.human_lines():
            if self.history.trust_of(line).counts_as_human:
                event = parse_line(*line)
                backed.setdefault((str(event.get("engram_id")), str(event.get("timestamp"))), []).append(event)
        unverified = set()
        for engram_id, engram in self.snapshot.engrams.items():
            record = engram.get("review")
            if isinstance(record, dict):
                at = str(record.get("at"))
                names = self.signed_names(engram_id, record)
                if not any(backs_review(e, name, record) for name in names for e in backed.get((name, at), [])):
                    unverified.add(engram_id)
        self._unverified = (stamp, frozenset(unverified))
        return unverified

    def review_trust(self, engram: dict[str, object]) -> Trust:
        """The trust of an engram's `review` record: that of its history event (same engram, same instant)."""
        record = engram.get("review")
        if not isinstance(record, dict):
            return Trust(TrustState.NOT_HUMAN)
        engram_id = str(engram.get("id"))
        best = Trust(TrustState.UNSIGNED, "no history event records this review")
        names = self.signed_names(engram_id, record)
        for event in self.history.timeline(engram_id):
            if any(backs_review(event, name, record) for name in names):
                trust = self.trust(event)
                if trust.counts_as_human:
                    return trust
                if trust.state is not TrustState.NOT_HUMAN:
                    best = trust
        return best
