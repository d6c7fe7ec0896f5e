"""PLUR's own rules for tension scans and records (PLUR-FORMAT.md §4.1, §9), as pure functions.

The candidate pre-filter is PLUR's `getCandidatePairsDetailed` gate by gate (scope overlap, shared domain segment,
pair not recorded, not linked by supersedes, neither expired, not a snapshot pair, subject tokens intersect); the
record helpers build a tension exactly as PLUR's `recordTensions` does (id, pair key, category).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from plur_desk.domain.plur_rules.validity import closes_at
from plur_desk.infra.clock import iso_ms

Engram = Mapping[str, object]

# PLUR's FTS stop words (fts.ts): three-letter-and-longer function words only; two-letter words are dropped by length.
_STOP_WORDS = frozenset(
    " ".join(
        [
            "the and for that this with from are was were been have has not but its you your can will should would could ",
            "may might",
        ]
    ).split()
)
# Scripts written without spaces: PLUR indexes them as overlapping character bigrams.
_SPACELESS = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u0e00-\u0eff\u1780-\u17ff\u1000-\u109f]{2,}"
)
_DENSE = re.compile(r"[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
# Python's \w covers letters, digits and `_`; PLUR also keeps combining marks (the common blocks are listed).
_NOT_WORD = re.compile(r"[^\w\s\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u064b-\u065f\u0900-\u0903\u093a-\u094f]")
# JS's \w in PLUR's subject split is ASCII; a fixed three-character look-behind matches what `\w{3,}` does there.
_SUBJECT_SPLIT = re.compile(
    r"[,;]|(?<=[A-Za-z0-9_]{3})\s+(?:is|are|was|were|has|have|can|will|should|must|does|do)\s", re.ASCII
)
SUPERSEDED_PATTERN = re.compile(r"\(\s*not\s+[^)]+\)", re.IGNORECASE)
_ID_DATE = re.compile(r"(\d{4})-(\d{2})-?(\d{2})(?=-|$)")


def fts_tokenize(text: str) -> list[str]:
    """PLUR's `ftsTokenize`: lowercase words of 3+ characters without stop words, bigrams for spaceless scripts."""
    lower = text.lower()
    source = _NOT_WORD.sub(" ", _SPACELESS.sub(" ", lower))
    tokens = [w for w in source.split() if (len(w) > 2 or (len(w) == 2 and _DENSE.search(w))) and w not in _STOP_WORDS]
    for match in _SPACELESS.finditer(lower):
        run = match.group()[:512]
        tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
    return tokens


def subject_clause(statement: str) -> str:
    """The part of a statement before its first comma, semicolon or auxiliary verb (PLUR's subject split)."""
    return _SUBJECT_SPLIT.split(statement, maxsplit=1)[0]


def subject_tokens(statement: str) -> frozenset[str]:
    """PLUR's `extractSubjectTokens`: tokens longer than 3 characters of the clause before the first verb."""
    clause = subject_clause(statement)[:80]
    # interned: the contradiction finder keeps one set per engram, and the words repeat across the store (a 50,000-
    # engram store held 411,750 token strings of 192 distinct words: 59 MB of sets, 36 MB interned)
    return frozenset([sys.intern(t) for t in fts_tokenize(clause) if len(t) > 3][:10])


def pair_key(id_a: str, id_b: str) -> str:
    return ":".join(sorted((id_a, id_b)))


def scopes_overlap(a: object, b: object) -> bool:
    return a == "global" or b == "global" or a == b


def domain_segments_overlap(a: object, b: object) -> bool:
    if not a or not b or not isinstance(a, str) or not isinstance(b, str):
        return True
    return bool(set(a.split(".")) & set(b.split(".")))


def _relation(engram: Engram, name: str) -> list[object]:
    relations = engram.get("relations")
    value = relations.get(name) if isinstance(relations, dict) else None
    return value if isinstance(value, list) else []


def supersedes_linked(a: Engram, b: Engram) -> bool:
    ida, idb = a.get("id"), b.get("id")
    return (
        idb in _relation(a, "supersedes")
        or idb in _relation(a, "superseded_by")
        or ida in _relation(b, "supersedes")
        or ida in _relation(b, "superseded_by")
    )


def is_expired(engram: Engram, now: datetime) -> bool:
    temporal = engram.get("temporal")
    end = closes_at(temporal.get("valid_until")) if isinstance(temporal, dict) else None
    return end is not None and now > end


def recorded_date(engram: Engram) -> str | None:
    """PLUR's `recordedDate`/`engramDate`: `temporal.learned_at`, else the date in the id."""
    temporal = engram.get("temporal")
    learned = temporal.get("learned_at") if isinstance(temporal, dict) else None
    if isinstance(learned, str) and re.match(r"\d{4}-\d{2}-\d{2}", learned):
        return learned[:10]
    match = _ID_DATE.search(str(engram.get("id", "")))
    return f"{match[1]}-{match[2]}-{match[3]}" if match else None


def _in_temporal_domain(domain: object, temporal_domains: Iterable[str]) -> bool:
    if not isinstance(domain, str) or not domain:
        return False
    return any(domain == td or domain.startswith(td + ".") for td in temporal_domains)


def is_snapshot_pair(a: Engram, b: Engram, temporal_domains: tuple[str, ...]) -> bool:
    if not temporal_domains:
        return False
    if not (
        _in_temporal_domain(a.get("domain"), temporal_domains)
        and _in_temporal_domain(b.get("domain"), temporal_domains)
    ):
        return False
    da, db = recorded_date(a), recorded_date(b)
    return da is not None and db is not None and da != db


@dataclass(frozen=True)
class GateContext:
    """What the pre-filter needs besides the two engrams: recorded pair keys, the evaluation instant, config."""

    recorded: frozenset[str]
    now: datetime
    temporal_domains: tuple[str, ...] = ()


def blocked_by(
    a: Engram, b: Engram, ctx: GateContext, subjects: tuple[frozenset[str], Iterable[str]] | None = None
) -> str | None:
    """The first of PLUR's candidate gates the pair fails, or None when PLUR's scan would judge it."""
    if a.get("status") != "active" or b.get("status") != "active":
        return "not active"
    if not scopes_overlap(a.get("scope"), b.get("scope")):
        return "scopes differ"
    if not domain_segments_overlap(a.get("domain"), b.get("domain")):
        return "domains share no segment"
    if pair_key(str(a.get("id")), str(b.get("id"))) in ctx.recorded:
        return "already recorded as a tension"
    if supersedes_linked(a, b):
        return "linked by supersedes"
    if is_expired(a, ctx.now) or is_expired(b, ctx.now):
        return "expired"
    if is_snapshot_pair(a, b, ctx.temporal_domains):
        return "snapshot pair"
    sa, sb = subjects or (subject_tokens(str(a.get("statement", ""))), subject_tokens(str(b.get("statement", ""))))
    if sa.isdisjoint(sb):  # (sb: any collection of words; the finder keeps its engrams' as tuples)
        return "no shared subject"
    return None


# -- records ---------------------------------------------------------------------------------------------------


def categorize(statement_a: str, statement_b: str, a: Engram | None, b: Engram | None) -> str:
    """PLUR's `categorizeTension`: superseded if either says `(not …)`, temporal if recorded on different days."""
    if SUPERSEDED_PATTERN.search(statement_a) or SUPERSEDED_PATTERN.search(statement_b):
        return "superseded"
    if a is not None and b is not None:
        da, db = recorded_date(a), recorded_date(b)
        if da and db and da != db:
            return "temporal"
    return "factual"


def next_tension_id(existing_ids: Iterable[str], now: datetime) -> str:
    """PLUR's `generateTensionId`: T-YYYY-MMDD-NNN, 1 + the highest same-day suffix among valid records (UTC)."""
    day = iso_ms(now)[:10].replace("-", "")
    prefix = f"T-{day[:4]}-{day[4:8]}-"
    highest = 0
    for ident in existing_ids:
        if ident.startswith(prefix):
            match = re.match(r"\s*[+-]?\d+", ident[len(prefix) :])
            if match:
                highest = max(highest, int(match.group()))
    return f"{prefix}{highest + 1:03d}"


def new_tension(
    tension_id: str,
    a: Engram,
    b: Engram,
    confidence: float,
    reason: str,
    now: datetime,
    status: str = "detected",
) -> dict[str, object]:
    """A record in PLUR's exact key order, with the statements as they are now (PLUR keeps snapshots)."""
    sa, sb = str(a.get("statement", "")), str(b.get("statement", ""))
    return {
        "id": tension_id,
        "engram_a": str(a.get("id")),
        "engram_b": str(b.get("id")),
        "statement_a": sa,
        "statement_b": sb,
        "confidence": round(min(1.0, max(0.0, confidence)), 3),
        "reason": reason,
        "detected_at": iso_ms(now),
        "status": status,
        "resolved_by": None,
        "resolved_at": None,
        "category": categorize(sa, sb, a, b),
    }


RELATION_KEYS = ("broader", "narrower", "related", "conflicts", "supersedes", "superseded_by")


def add_relation(engram: dict[str, object], name: str, target: str) -> dict[str, object]:
    """Add `target` to `relations[name]` as PLUR's learn does: a missing `relations` gets every array defaulted."""
    relations = engram.get("relations")
    current = dict(relations) if isinstance(relations, dict) else {k: [] for k in RELATION_KEYS}
    values = current.get(name)
    items = list(values) if isinstance(values, list) else []
    if target not in items:
        items.append(target)
    current[name] = items
    engram["relations"] = current
    return engram
