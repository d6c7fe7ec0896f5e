"""The local contradiction finder: PLUR's candidate gates, then the offline detector, over a whole store or one draft.

Pairs come from a key index (no all-pairs loop), pass PLUR's own pre-filter (`tension_rules.blocked_by`: scope,
domain, recorded, supersedes, expiry, snapshot, subject tokens), and are scored by `domain.contradiction.judge`
with the semantic similarity of the pair: cosine of cached MiniLM vectors when both are at hand, token overlap
otherwise. Every candidate carries the evidence the reviewer sees: the substituted words, the similarity, the rule.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime

import numpy as np

from plur_desk.domain.plur_rules.derived import content_hash
from plur_desk.domain.plur_rules.tension_rules import (
    GateContext,
    blocked_by,
    domain_segments_overlap,
    pair_key,
    recorded_date,
    subject_tokens,
)
from plur_desk.domain.seen import Seen, seen_engram
from plur_desk.domain.similar.contradiction import DEFAULT_THRESHOLD, Judgement, judge, token_similarity
from plur_desk.index.lexicon import known_words
from plur_desk.index.pairs import PairIndex, statement_keys
from plur_desk.infra.jobs import checkpoints, give_way

DETECTOR = "plur_desk local detector"
TOP_PARTNERS = 6  # per statement, the pairs sharing the most words are judged (a conflict shares nearly all)
Engram = Mapping[str, object]
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class ConflictCandidate:
    engram_a: str
    engram_b: str
    statement_a: str
    statement_b: str
    score: float
    rule: str
    kind: str
    removed: tuple[str, ...]
    added: tuple[str, ...]
    similarity: float
    similarity_source: str  # "minilm" or "tokens"
    notes: tuple[str, ...] = ()
    seen: tuple[Seen, ...] = ()  # a scan's candidate: both engrams as judged (an answer is refused if either changed)

    @property
    def key(self) -> str:
        return pair_key(self.engram_a, self.engram_b)

    def explanation(self) -> str:
        what = {
            "slot": f"same statement, different {self.kind}",
            "negation": "one negates the other",
            "opposite": "opposite words",
            "bounds": "incompatible bounds",
        }.get(self.rule, self.rule)
        swap = f"{' '.join(self.removed) or '∅'} → {' '.join(self.added) or '∅'}"
        extra = f"; {'; '.join(self.notes)}" if self.notes else ""
        return f"{what}: {swap} (similarity {self.similarity:.2f} by {self.similarity_source}{extra})"

    def reason(self) -> str:
        """The tension record's `reason`: names the detector and says why."""
        return f"{DETECTOR}: {self.explanation()}"

    def to_json(self) -> dict[str, object]:
        return {
            "engram_a": self.engram_a,
            "engram_b": self.engram_b,
            "score": round(self.score, 4),
            "rule": self.rule,
            "kind": self.kind,
            "evidence": {
                "removed": list(self.removed),
                "added": list(self.added),
                "similarity": round(self.similarity, 4),
                "similarity_source": self.similarity_source,
                "notes": list(self.notes),
                "explanation": self.explanation(),
            },
            "statement_a": self.statement_a,
            "statement_b": self.statement_b,
        }


@dataclass
class ScanResult:
    candidates: list[ConflictCandidate] = field(default_factory=list)
    pairs_keyed: int = 0  # pairs sharing enough words to look at
    pairs_judged: int = 0  # of those, pairs PLUR's own pre-filter lets through
    gated: Counter[str] = field(default_factory=Counter)  # why the others were skipped


class Vectors:
    """Unit vectors for engrams and for new text, when the embedding model is installed. An engram's vector is the
    one cached under the content hash of its statement (as search and the clusters key it), never under its
    `content_hash` field, which a hand edit can leave stale: that would be the vector of other text."""

    def __init__(
        self, by_hash: Mapping[str, np.ndarray], embed: Callable[[list[str]], np.ndarray] | None = None
    ) -> None:
        self.by_hash = by_hash
        self.embed = embed
        self._keys: dict[str, str] = {}  # statement -> its content hash, hashed once per finder

    def cached(self, engram: Engram) -> np.ndarray | None:
        """The cached vector of the engram's statement, if any."""
        statement = str(engram.get("statement", ""))
        key = self._keys.get(statement)
        if key is None:
            key = self._keys[statement] = content_hash(statement)
        return self.by_hash.get(key)

    def of(self, engram: Engram, text: str | None = None) -> np.ndarray | None:
        if text is None:
            found = self.cached(engram)
            if found is not None:
                return found
            text = str(engram.get("statement", ""))
        return self.embed([text])[0] if self.embed is not None else None


class ConflictFinder:
    """Built once over a snapshot of the store's engrams; `scan` for all pairs, `check` for one (new) statement."""

    def __init__(
        self,
        engrams: Iterable[Engram],
        recorded_pairs: Iterable[str],
        now: datetime,
        *,
        vectors: Vectors | None = None,
        threshold: float = DEFAULT_THRESHOLD,
        temporal_domains: tuple[str, ...] = (),
    ) -> None:
        self.engrams = [e for e in engrams if e.get("status") == "active"]  # PLUR's first gate, before indexing
        self.position = {str(e.get("id")): k for k, e in enumerate(self.engrams)}
        self.context = GateContext(frozenset(recorded_pairs), now, temporal_domains)
        self.vectors = vectors
        self.threshold = threshold
        self.known = known_words().__contains__
        # (seconds of Python at 50,000 engrams: a computation's steps, infra/turns.py)
        # held as tuples (~120 bytes each; a frozenset of 5-10 words is 728): 34 MB -> 6 MB at 50,000 engrams
        self._subjects = [tuple(subject_tokens(str(e.get("statement", "")))) for e in checkpoints(self.engrams)]
        self.index = PairIndex(statement_keys(str(e.get("statement", ""))) for e in checkpoints(self.engrams))
        self._scopes, self._domains, self._domain_overlap = _partition_codes(self.engrams)

    # -- one pair ------------------------------------------------------------------------------------------

    def _similarity(self, a: Engram, b: Engram, text_a: str, text_b: str, fresh_a: bool) -> tuple[float, str]:
        if self.vectors is not None:
            va = self.vectors.of(a, text_a) if fresh_a else self.vectors.of(a)
            vb = self.vectors.cached(b)
            if va is not None and vb is not None:
                return float(np.dot(va, vb)), "minilm"
        return token_similarity(text_a, text_b), "tokens"

    def score(
        self, a: Engram, b: Engram, text_a: str | None = None, *, vector_a: np.ndarray | None = None
    ) -> ConflictCandidate:
        """Judge one pair, gates aside (`text_a` replaces A's statement: an edit not saved yet)."""
        statement_a = text_a if text_a is not None else str(a.get("statement", ""))
        statement_b = str(b.get("statement", ""))
        if vector_a is not None and self.vectors is not None:
            vb = self.vectors.cached(b)
            sim, source = (
                (float(np.dot(vector_a, vb)), "minilm")
                if vb is not None
                else (token_similarity(statement_a, statement_b), "tokens")
            )
        else:
            sim, source = self._similarity(a, b, statement_a, statement_b, text_a is not None)
        verdict: Judgement = judge(statement_a, statement_b, sim, self.known, (recorded_date(a), recorded_date(b)))
        first, second = (a, b) if str(a.get("id")) <= str(b.get("id")) else (b, a)
        sa, sb = (statement_a, statement_b) if first is a else (statement_b, statement_a)
        removed, added = (verdict.removed, verdict.added) if first is a else (verdict.added, verdict.removed)
        return ConflictCandidate(
            str(first.get("id")),
            str(second.get("id")),
            sa,
            sb,
            verdict.score,
            verdict.rule,
            verdict.kind,
            removed,
            added,
            sim,
            source,
            verdict.notes,
        )

    # -- whole store ---------------------------------------------------------------------------------------

    def scan(self, progress: Progress | None = None, threshold: float | None = None) -> ScanResult:
        """Every candidate pair at or above the threshold, best first."""
        limit = self.threshold if threshold is None else threshold
        left, right, shared = self.index.pairs()
        result = ScanResult(pairs_keyed=len(left))
        left, right, shared = self._partition_gates(left, right, shared, result)
        keep = PairIndex.top_per_statement(left, right, shared, TOP_PARTNERS)
        left, right = left[keep], right[keep]
        total = len(left)
        for n, (i, j) in enumerate(checkpoints(zip(left.tolist(), right.tolist(), strict=True), 256)):
            if progress is not None and n % 2000 == 0:
                progress(n, total)
            a, b = self.engrams[i], self.engrams[j]
            reason = blocked_by(a, b, self.context, (frozenset(self._subjects[i]), self._subjects[j]))
            if reason is not None:
                result.gated[reason] += 1
                continue
            result.pairs_judged += 1
            candidate = self.score(a, b)
            if candidate.rule and candidate.score >= limit:  # with both engrams as judged: what the dialog shows
                result.candidates.append(replace(candidate, seen=(seen_engram(a), seen_engram(b))))
        if progress is not None:
            progress(total, total)
        result.candidates.sort(key=lambda c: (-c.score, c.key))
        return result

    def _partition_gates(
        self, left: np.ndarray, right: np.ndarray, shared: np.ndarray, result: ScanResult
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """PLUR's scope and domain gates on whole arrays (most key-sharing pairs in a big store fail these)."""
        sa, sb = self._scopes[left], self._scopes[right]
        scope_ok = (sa == 0) | (sb == 0) | (sa == sb)
        domain_ok = self._domain_overlap[self._domains[left], self._domains[right]]
        result.gated["scopes differ"] += int((~scope_ok).sum())
        result.gated["domains share no segment"] += int((scope_ok & ~domain_ok).sum())
        ok = scope_ok & domain_ok
        return left[ok], right[ok], shared[ok]

    # -- one draft, before approval or before an edit is saved ---------------------------------------------

    def check(
        self, engram: Engram, statement: str | None = None, threshold: float | None = None
    ) -> list[ConflictCandidate]:
        """Engrams `engram` may contradict (with `statement` as its text when given), best first."""
        limit = self.threshold if threshold is None else threshold
        text = statement if statement is not None else str(engram.get("statement", ""))
        probe = dict(engram)
        probe["statement"] = text
        subjects = subject_tokens(text)
        vector = self.vectors.of(engram, statement) if self.vectors is not None else None
        own = str(engram.get("id"))
        found = []
        for doc, _shared in self.index.neighbours(statement_keys(text)):
            give_way()  # a bulk approval's check is seconds of Python: a repaint meanwhile goes first
            other = self.engrams[doc]
            if str(other.get("id")) == own:
                continue
            if blocked_by(probe, other, self.context, (subjects, self._subjects[doc])) is not None:
                continue
            candidate = self.score(engram, other, text, vector_a=vector)
            if candidate.rule and candidate.score >= limit:
                found.append(candidate)
        found.sort(key=lambda c: (-c.score, c.key))
        return found


def _partition_codes(engrams: list[Engram]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scope codes (0 = global), domain codes (0 = none) and which domain codes share a dotted segment."""
    scope_ids: dict[object, int] = {"global": 0}
    domain_ids: dict[object, int] = {None: 0}
    scopes = np.array([scope_ids.setdefault(e.get("scope"), len(scope_ids)) for e in engrams], dtype=np.int64)
    domains = np.array(
        [domain_ids.setdefault(e.get("domain") or None, len(domain_ids)) for e in engrams], dtype=np.int64
    )
    names = sorted(domain_ids, key=domain_ids.__getitem__)
    overlap = np.array([[domain_segments_overlap(x, y) for y in names] for x in names], dtype=bool)
    return scopes, domains, overlap
