"""Which review records count as a human's verdict: only those the latest verified decision on the same content
backs (domain/decision.py); the `review` record itself is a claim anyone writing engrams.yaml can make."""

from __future__ import annotations

from plur_desk.app.history_index import HistoryIndex
from plur_desk.app.history_table import parse_line
from plur_desk.app.rows import Verdict
from plur_desk.app.snapshot import Snapshot
from plur_desk.app.trust import TrustChecker
from plur_desk.domain.decision import review_standing
from plur_desk.domain.trust import Trust, TrustState
from plur_desk.store.plur_store import PlurStore


class ReviewVerdicts:
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

    def unverified_reviews(self) -> set[str]:
        """Ids of engrams whose `review` record does not stand (one pass over the human lines, each verified once;
        kept until the history, the trusted keys or the engrams change)."""
        self.history.sync_trust()  # until the history is loaded, no review counts as verified
        history = self.history
        stamp = (*history.stamp(), self.store.engrams.identity)  # before the answer (`HistoryIndex.stamp`)
        cached = self._unverified
        if cached is not None and cached[0] == stamp:
            return set(cached[1])
        reviewed = {i: e for i, e in self.snapshot.engrams.items() if isinstance(e.get("review"), dict)}
        claims: dict[str, list[tuple[dict[str, object], Trust]]] = {}
        for line in history.human_lines():
            event = parse_line(*line)
            engram_id = str(event.get("engram_id"))
            if engram_id in reviewed:
                claims.setdefault(engram_id, []).append((event, history.trust_of(line, event)))
        unverified = set()
        for engram_id, engram in reviewed.items():
            events = sorted(claims.get(engram_id, []), key=lambda c: str(c[0].get("timestamp")))
            if not review_standing(engram, events).counts_as_human:
                unverified.add(engram_id)
        self._unverified = (stamp, frozenset(unverified))
        return unverified

    def review_trust(self, engram: dict[str, object]) -> Trust:
        """What an engram's `review` record is worth: backed by the latest verified decision on this content, or the
        claim it is (never signed, signed on other content, or undone since)."""
        if not isinstance(engram.get("review"), dict):
            return Trust(TrustState.NOT_HUMAN)
        engram_id = str(engram.get("id"))
        events = [e for e in self.history.timeline(engram_id) if e.get("engram_id") == engram_id]
        return review_standing(engram, [(e, self.trust(e)) for e in events])
