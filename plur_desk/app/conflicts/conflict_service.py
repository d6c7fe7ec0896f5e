"""The finder as the window uses it: built in the background over the session's snapshot, asked in the GUI thread.

`warnings_for` is the pre-approval check (milliseconds: one statement against the key index); `scan` is the
store-wide list for the Conflicts view. Each warning says what the reviewer needs to judge the other engram: its
statement, commitment, status and who approved it.
"""

from __future__ import annotations

import operator
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from plur_desk.app.conflicts.conflict_actions import recorded_pair_keys
from plur_desk.app.conflicts.finder import ConflictCandidate, ConflictFinder, Progress, ScanResult, Vectors
from plur_desk.app.review.session import ReviewSession
from plur_desk.domain.similar.contradiction import DEFAULT_THRESHOLD
from plur_desk.infra.jobs import computing

# what a decision changes and the finder never reads
UNREAD = frozenset({"commitment", "review", "reviews", "updated_at", "locked_at", "locked_reason"})


def _same_read(held: Mapping[str, object], now: Mapping[str, object]) -> bool:
    """Whether the two records agree on every field the finder reads (not UNREAD): the same keys, equal values.
    Compared in C (a set of keys, one itemgetter): on the window's thread after a bulk of 500 decisions, two dict
    comprehensions per engram cost 11 us each, this 3 us."""
    keys = held.keys() - UNREAD
    if keys != now.keys() - UNREAD:
        return False
    if not keys:
        return True
    read = operator.itemgetter(*keys)
    return bool(read(held) == read(now))


FRESH_FOR = 300.0  # seconds a finder is kept across decisions


@dataclass(frozen=True)
class ConflictWarning:
    candidate: ConflictCandidate
    other_id: str
    other_statement: str
    commitment: str
    status: str
    approved_by: str  # the human reviewer who approved it in plur_desk, or "" (e.g. learned with a commitment)
    trust: str = ""  # whether that approval is backed by a valid signature ("signed", "UNSIGNED human claim", …)

    def text(self) -> str:
        who = f", approved by {self.approved_by} ({self.trust})" if self.approved_by else ""
        return (
            f"{self.other_id} ({self.commitment or 'no commitment'}, {self.status}{who}): “{self.other_statement}” "
            f"— {self.candidate.explanation()}"
        )


class ConflictService:
    def __init__(
        self,
        session: ReviewSession,
        vectors: Callable[[], Vectors | None] | None = None,
        threshold: float = DEFAULT_THRESHOLD,
    ) -> None:
        self.session = session
        self.threshold = threshold
        self._vectors = vectors
        self.finder: ConflictFinder | None = None
        self.built_at = 0.0  # time.monotonic() of the last rebuild

    def rebuild(self) -> ConflictService:
        """A new finder over what the session holds now (background work: about 2 s at 50k engrams)."""
        session = self.session
        self.built_at = time.monotonic()
        with computing():  # a computation (infra/turns.py): not beside the history's indexing or the clusters
            self.finder = ConflictFinder(
                list(session.all_engrams()),
                recorded_pair_keys(session),
                session.now(),
                vectors=self._vectors() if self._vectors is not None else None,
                threshold=self.threshold,
            )
        return self

    @property
    def ready(self) -> bool:
        return self.finder is not None

    def answers_after(self, engram_ids: Iterable[str], max_age: float = FRESH_FOR) -> bool:
        """Whether this finder still answers as one rebuilt now would, after a change of these engrams (an approve,
        a reject: nothing the finder reads). The finder holds the active engrams as they were; it reads none of
        UNREAD, and `warnings_for` takes each other engram's status from the session, so an engram retired since
        is skipped. A finder older than `max_age` seconds is rebuilt anyway (its clock decides what is expired)."""
        finder = self.finder
        if finder is None or time.monotonic() - self.built_at > max_age:
            return False
        for engram_id in engram_ids:
            now = self.session.engram(engram_id)
            if now is None or now.get("status") != "active":
                continue
            at = finder.position.get(engram_id)
            if at is None:
                return False  # active now and not in the finder (an undone reject)
            if not _same_read(finder.engrams[at], now):
                return False
        return True

    def warnings_for(self, engram_id: str, statement: str | None = None) -> list[ConflictWarning]:
        """Engrams that approving `engram_id` (or saving `statement` as its text) may contradict, best first."""
        engram = self.session.engram(engram_id)
        if self.finder is None or engram is None:
            return []
        out = []
        for candidate in self.finder.check(engram, statement):
            other_id = candidate.engram_b if candidate.engram_a == engram_id else candidate.engram_a
            other = self.session.engram(other_id)
            if other is None or other.get("status") != "active":
                continue  # changed since the finder was built
            review = other.get("review") if isinstance(other.get("review"), dict) else {}
            approved_by = (
                str(review.get("by", "")) if isinstance(review, dict) and review.get("state") == "approved" else ""
            )
            out.append(
                ConflictWarning(
                    candidate,
                    other_id,
                    str(other.get("statement", "")),
                    str(other.get("commitment", "") or ""),
                    str(other.get("status", "")),
                    approved_by,
                    self.session.verdicts.review_trust(other).label if approved_by else "",
                )
            )
        return out

    def scan(self, progress: Progress | None = None) -> ScanResult:
        if self.finder is None:
            self.rebuild()
        assert self.finder is not None
        with computing():
            return self.finder.scan(progress)
