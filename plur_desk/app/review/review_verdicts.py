"""Which review records count as a human's verdict: only those the latest verified decision on the same content
backs (domain/decision.py); the `review` record itself is a claim anyone writing engrams.yaml can make."""

from __future__ import annotations

from plur_desk.app.history.history_index import HistoryIndex
from plur_desk.app.history.history_table import parse_line
from plur_desk.app.review.rows import Verdict
from plur_desk.app.review.snapshot import Snapshot
from plur_desk.app.trust.verifier import TrustChecker
from plur_desk.domain.decision import review_standing
from plur_desk.domain.plur_rules.rekey import Renames
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

    def signed_names(self, engram_id: str, record: dict[str, object], renames: Renames) -> list[str]:
        """The ids a review of this engram may be signed under: its own, and those PLUR 0.21 renamed it from,
        unless an engram still under that id carries the same review (a copy never borrows the original's)."""
        names = [engram_id]
        for old in renames.earlier(engram_id):
            other = self.snapshot.engrams.get(old)
            review = other.get("review") if other is not None else None
            if not (
                isinstance(review, dict)
                and (review.get("at"), review.get("by")) == (record.get("at"), record.get("by"))
            ):
                names.append(old)
        return names

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
        renames = history.renames()  # once, not once per reviewed engram
        names = {i: self.signed_names(i, e["review"], renames) for i, e in reviewed.items()}  # type: ignore[arg-type]
        under: dict[str, list[str]] = {}  # an id events are signed under -> the reviewed engrams it names now
        for engram_id, ids in names.items():
            for name in ids:
                under.setdefault(name, []).append(engram_id)
        claims: dict[str, list[tuple[dict[str, object], Trust]]] = {}
        for line in history.human_lines():
            event = parse_line(*line)
            for engram_id in under.get(name := str(event.get("engram_id")), ()):
                if not renames.follows(engram_id, name, event.get("timestamp")):
                    continue  # under that id after the rename: the other copy's
                claims.setdefault(engram_id, []).append((event, history.trust_of(line, event)))
        unverified = set()
        for engram_id, engram in reviewed.items():
            events = sorted(claims.get(engram_id, []), key=lambda c: str(c[0].get("timestamp")))
            if not review_standing(engram, events, names[engram_id]).counts_as_human:
                unverified.add(engram_id)
        self._unverified = (stamp, frozenset(unverified))
        return unverified

    def review_trust(self, engram: dict[str, object]) -> Trust:
        """What an engram's `review` record is worth: backed by the latest verified decision on this content, or the
        claim it is (never signed, signed on other content, or undone since)."""
        if not isinstance(engram.get("review"), dict):
            return Trust(TrustState.NOT_HUMAN)
        engram_id = str(engram.get("id"))
        renames = self.history.renames()
        names = self.signed_names(engram_id, engram["review"], renames)  # type: ignore[arg-type]
        events = [
            e
            for name in names
            for e in self.history.timeline(name)
            if e.get("engram_id") == name and renames.follows(engram_id, name, e.get("timestamp"))
        ]
        events.sort(key=lambda e: str(e.get("timestamp")))
        return review_standing(engram, [(e, self.trust(e)) for e in events], names)
