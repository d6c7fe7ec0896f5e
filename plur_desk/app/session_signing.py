"""The signing half of ReviewSession: every event leaves the app signed, key replacement, the closing checkpoint,
and the trust of review records."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from plur_desk.app.history_index import parse_line
from plur_desk.app.rows import Verdict
from plur_desk.domain.trust import Trust, TrustState, backs_review
from plur_desk.store.checkpoint import emit_checkpoint
from plur_desk.store.plur_store import Edit, PlurStore

if TYPE_CHECKING:
    from plur_desk.app.history_index import HistoryIndex
    from plur_desk.app.session import ChangeSet
    from plur_desk.app.signing import ReviewerKeys
    from plur_desk.app.trust import TrustChecker

Apply = Callable[[dict[str, object]], tuple[dict[str, object], list[dict[str, object]]]]


class SigningMixin:
    store: PlurStore
    keys: ReviewerKeys
    trust: TrustChecker
    history: HistoryIndex
    made_changes: bool
    _engrams: dict[str, dict[str, object]]
    _unverified: tuple[tuple[int, object, object], frozenset[str]] | None = None

    def now(self) -> datetime:
        raise NotImplementedError

    def _check_writable(self) -> None:
        raise NotImplementedError

    def _signed(self, edits: list[Edit]) -> list[Edit]:
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

    def replace_key(self, *, revoke: bool = False, new_key: bool = True, disown: bool = False) -> ChangeSet:
        """After the reviewer confirmed: make a (new) key this reviewer's key in keys.yaml, older ones kept as
        retired (or revoked), and record that as a signed event."""
        from plur_desk.app.session import ChangeSet

        self._check_writable()
        event = self.keys.replace(self.now(), revoke=revoke, new_key=new_key, disown=disown)
        appended = self.store.history.append([event])
        self.history.add([event])
        self.made_changes = True
        verb = "revoked the old key and registered a new one" if revoke or disown else "replaced the reviewer key"
        warnings = list(appended.warnings) + self.key_notices()
        return ChangeSet(events=1, warnings=warnings, message=f"{verb} for {self.keys.identity}")

    def end(self) -> dict[str, object] | None:
        """End of the review session: on a hash-chained store a session that changed something ends with a
        checkpoint signed by the reviewer (PLUR's shape). Returns it, or None when none was written."""
        if not self.made_changes or self.store.read_only_reasons():
            return None
        try:
            event = emit_checkpoint(self.store.history, self.store.engrams_path, self.now(), self.keys.sign)
        except ValueError:
            return None
        if event is not None:
            self.history.add([event])
            self.made_changes = False
        return event

    def rejected_verdicts(self) -> dict[str, Verdict]:
        """content_hash -> the latest human rejection, from review records and from history (survives compaction);
        only a signed, valid one counts as a human verdict (`Verdict.trust`)."""
        verdicts = self.history.rejections()
        for engram in self._engrams.values():
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

    def unverified_reviews(self) -> set[str]:
        """Ids of engrams whose `review` record no validly signed event backs (one pass over the human lines,
        each verified once; kept until the history, keys.yaml or the engrams change)."""
        self.history.sync_trust()  # until the history is loaded, no review counts as verified
        stamp = (len(self.history.lines), self.history.trust_generation, self.store.engrams.identity)
        cached = self._unverified
        if cached is not None and cached[0] == stamp:
            return set(cached[1])
        backed: dict[tuple[str, str], list[dict[str, object]]] = {}
        for line in self.history.human_lines():
            if self.history.trust_of(line).counts_as_human:
                event = parse_line(*line)
                backed.setdefault((str(event.get("engram_id")), str(event.get("timestamp"))), []).append(event)
        unverified = set()
        for engram_id, engram in self._engrams.items():
            record = engram.get("review")
            if isinstance(record, dict):
                events = backed.get((engram_id, str(record.get("at"))), [])
                if not any(backs_review(e, engram_id, record) for e in events):
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
        for event in self.history.timeline(engram_id):
            if backs_review(event, engram_id, record):
                trust = self.trust(event)
                if trust.counts_as_human:
                    return trust
                if trust.state is not TrustState.NOT_HUMAN:
                    best = trust
        return best
