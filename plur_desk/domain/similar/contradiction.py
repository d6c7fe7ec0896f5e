"""Contradiction signals between two statements, with the evidence a reviewer needs to see why.

No model decides here: a word diff of the two statements says what changed, and three rules read it.
- *Substituted slot*: one place where the statements differ, filled with a different value (a name, tool,
  version, number, date or place) while the rest is the same.
- *Polarity flip*: one side negates what the other asserts (`must` / `must not`, `always` / `never`, `use` /
  `avoid`) or uses the opposite word (`enabled` / `disabled`, `before` / `after`, `ascending` / `descending`).
- *Opposite bounds*: `at least 12` against `at most 8`.
A substitution together with a negation cancels out ("don't use tabs" / "use spaces"), two separate substitutions
mean two different subjects ("frontend tests use Jest" / "backend tests use pytest"), and two statements about
events recorded on different days are an event log, not a conflict (as PLUR's judge is told).
The caller supplies the semantic similarity of the pair (MiniLM or token overlap); it scales the final score.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from plur_desk.domain.plur_rules.tension_rules import fts_tokenize, subject_clause
from plur_desk.domain.similar.contradiction_lexicon import (
    ATTRIBUTIVE_BEFORE,
    BOUND_WORDS,
    DATE_WORDS,
    EPISODIC_MARKERS,
    FUNCTION_WORDS,
    NEGATORS,
    PAST_VERBS,
    PRESENT_MARKERS,
    STRICT_BOUNDS,
    antonyms_of,
    stem,
)

DEFAULT_THRESHOLD = 0.5
_SLOT_WORDS = 3  # a value is a few words ("Helen Ortiz", "Austin, Texas"); a longer swap is a rewording
_EXTRA = 0.5  # each content word outside the fired rule halves the score: it is a different sentence
_TOKEN = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?%?|[\w][\w.:/'’+-]*[\w%]|[\w%]")
_CONTRACTION = {"ca": "can", "wo": "will", "sha": "shall"}
_HAS_DIGIT = re.compile(r"\d")
_DATE_LIKE = re.compile(r"\d{4}-\d{2}(-\d{2})?\Z|\d{1,2}:\d{2}\Z|\d{1,2}(st|nd|rd|th)\Z|(19|20)\d{2}\Z")
_VERSION_LIKE = re.compile(r"v?\d+\.\d+(\.\d+)*\Z|v\d+\Z|.*[a-z].*\d|.*\d.*[a-z]")


@dataclass(frozen=True)
class Word:
    text: str  # as written
    norm: str  # lower-case, light stem: what the diff compares
    first: bool = False  # first word of the statement (its capital says nothing)


@dataclass(frozen=True)
class Judgement:
    """The detector's verdict on one pair: a score in 0..1, the rule that fired and its evidence."""

    score: float
    rule: str  # "slot", "negation", "opposite", "bounds", or "" when nothing fired
    kind: str  # a finer label: "name", "number", "version", "date", "word", "negation", "opposite", ...
    removed: tuple[str, ...] = ()  # words of A the diff replaced
    added: tuple[str, ...] = ()  # words of B in their place
    similarity: float = 0.0
    alignment: float = 0.0
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def fired(self) -> bool:
        return bool(self.rule)

    def explain(self) -> str:
        what = {
            "slot": f"same statement, different {self.kind}",
            "negation": "one side negates the other",
            "opposite": "opposite words",
            "bounds": "incompatible bounds",
        }.get(self.rule, "no contradiction signal")
        diff = f": {' '.join(self.removed) or '∅'} → {' '.join(self.added) or '∅'}" if self.rule else ""
        extra = f" ({'; '.join(self.notes)})" if self.notes else ""
        return f"{what}{diff}; similarity {self.similarity:.2f}{extra}"


def words(statement: str) -> list[Word]:
    out: list[Word] = []
    for match in _TOKEN.finditer(statement):
        text = match.group().rstrip(".:/'’+-").replace("’", "'")
        if not text:
            continue
        lower = text.lower()
        if lower.endswith("n't") and len(lower) > 3:
            base = lower[:-3]
            out.append(Word(text[:-3], _CONTRACTION.get(base, base), not out))
            out.append(Word("n't", "not"))
        elif lower == "cannot":
            out += [Word(text[:3], "can", not out), Word("not", "not")]
        else:
            out.append(Word(text, stem(lower), not out))
    return _merge_no_longer(out)


def _merge_no_longer(ws: list[Word]) -> list[Word]:
    merged: list[Word] = []
    for w in ws:
        if w.norm == "longer" and merged and merged[-1].norm == "no":
            merged[-1] = Word("no longer", "not", merged[-1].first)
        else:
            merged.append(w)
    return merged


def value_kind(w: Word, known: Callable[[str], bool]) -> str:
    """What a substituted word is: number, version, date, name (a proper noun, tool or place) or plain word."""
    lower = w.text.lower()
    if lower in DATE_WORDS or _DATE_LIKE.match(lower):
        return "date"
    if _HAS_DIGIT.search(lower):
        if re.fullmatch(r"[\d,]+(\.\d+)?%?", lower):
            return "number"
        return "version" if _VERSION_LIKE.match(lower) else "name"
    if not w.first and w.text[:1].isupper():
        return "name"
    if not known(lower.removesuffix("'s").strip("'")):
        return "name"
    return "word"


def is_episodic(ws: list[Word]) -> bool:
    """Describes an event (`was`, `yesterday`, or a past-tense verb and no present-tense one), not a standing fact."""
    lowers = [w.text.lower() for w in ws]
    if any(x in EPISODIC_MARKERS for x in lowers):
        return True
    if any(x in PRESENT_MARKERS for x in lowers):
        return False
    for i, x in enumerate(lowers):
        past = x in PAST_VERBS or (x.endswith("ed") and len(x) > 4)
        if not past or i == 0:
            continue
        before = lowers[i - 1]
        after = lowers[i + 1] if i + 1 < len(lowers) else ""
        if before in ATTRIBUTIVE_BEFORE or before.endswith("'s") or after == "by":
            continue  # "of paid leave", "the user's preferred airline", "accepted by the gateway"
        return True
    return False


@dataclass
class _Diff:
    removed: list[Word]
    added: list[Word]
    replaces: list[tuple[list[Word], list[Word]]]
    shared: int
    replaced_at: list[tuple[int, int]] = field(default_factory=list)  # where each replace starts in A and in B


def _diff(a: list[Word], b: list[Word]) -> _Diff:
    matcher = difflib.SequenceMatcher(None, [w.norm for w in a], [w.norm for w in b], autojunk=False)
    d = _Diff([], [], [], 0)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            d.shared += i2 - i1
            continue
        d.removed += a[i1:i2]
        d.added += b[j1:j2]
        if op == "replace":
            d.replaces.append((a[i1:i2], b[j1:j2]))
            d.replaced_at.append((i1, j1))
    return d


def _antonym_pairs(removed: list[Word], added: list[Word]) -> list[tuple[Word, Word]]:
    """Each removed word with the first added word still free that is its opposite (in the order added)."""
    where: dict[str, list[int]] = {}
    for k, a in enumerate(added):
        where.setdefault(a.norm, []).append(k)
    pairs = []
    used: set[int] = set()
    for r in removed:
        free = [k for y in antonyms_of(r.norm) if y in where for k in where[y] if k not in used]
        if free:
            k = min(free)
            pairs.append((r, added[k]))
            used.add(k)
    return pairs


def _bounds(ws: list[Word]) -> tuple[str, float, bool] | None:
    """`at least 12` → ("min", 12, inclusive); `under 22` → ("max", 22, strict): a bound word, then a number."""
    for i, w in enumerate(ws):
        direction = BOUND_WORDS.get(w.norm)
        if direction is None:
            continue
        for nxt in ws[i + 1 : i + 4]:
            number = nxt.text.replace(",", "").rstrip("%")
            if re.fullmatch(r"\d+(\.\d+)?", number):
                return direction, float(number), w.norm in STRICT_BOUNDS
    return None


def _bounds_conflict(a: list[Word], b: list[Word]) -> bool | None:
    """True for a minimum above the other side's maximum, False for compatible opposite bounds, else None."""
    ba, bb = _bounds(a), _bounds(b)
    if ba is None or bb is None or ba[0] == bb[0]:
        return None
    low, high = (ba[1], bb[1]) if ba[0] == "min" else (bb[1], ba[1])
    return low > high or (low == high and (ba[2] or bb[2]))


def judge(
    statement_a: str,
    statement_b: str,
    similarity: float,
    known: Callable[[str], bool],
    dates: tuple[str | None, str | None] = (None, None),
) -> Judgement:
    """Score how likely A and B contradict each other; `dates` are the days each was recorded."""
    a, b = list(_words(statement_a)), list(_words(statement_b))
    d = _diff(a, b)
    alignment = 2 * d.shared / max(1, len(a) + len(b))
    base = {"similarity": similarity, "alignment": alignment}
    if not d.removed and not d.added:
        return Judgement(0.0, "", "same", **base)  # type: ignore[arg-type]
    rule, kind, strength, removed, added, notes = _signal(a, b, d, known)
    if not rule:
        return Judgement(0.0, "", kind, tuple(w.text for w in removed), tuple(w.text for w in added), **base)  # type: ignore[arg-type]
    notes = list(notes)
    if rule == "slot" and _in_subject(d, a, statement_a, statement_b, kind):
        strength *= 0.5  # "the billing service deploys …" / "the search service deploys …": another subject
        notes.append("the words differ in the subject")
    day_a, day_b = dates
    if day_a and day_b and day_a != day_b and is_episodic(a) and is_episodic(b):
        strength *= 0.15
        notes.append(f"event log: recorded {day_a} and {day_b}")
    strength *= min(1.0, 0.4 + alignment)  # a targeted edit of the same sentence, not two different sentences
    score = strength * _similarity_factor(similarity)
    return Judgement(
        round(score, 4),
        rule,
        kind,
        tuple(w.text for w in removed),
        tuple(w.text for w in added),
        similarity,
        alignment,
        tuple(notes),
    )


@lru_cache(maxsize=131072)
def _words(statement: str) -> tuple[Word, ...]:
    return tuple(words(statement))


@lru_cache(maxsize=131072)
def _subject_length(statement: str) -> int | None:
    """Words in the subject clause (before the first auxiliary verb or comma), or None if there is none."""
    clause = subject_clause(statement)
    return len(words(clause)) if len(clause) < len(statement.rstrip(" .!?")) else None


def _in_subject(d: _Diff, a: list[Word], statement_a: str, statement_b: str, kind: str) -> bool:
    """The one replaced span is in the subject: before the first auxiliary verb or comma, or (without one) a
    name or word in the first 40% of the statement, where an English sentence names what it is about."""
    if len(d.replaced_at) != 1:
        return False
    i, j = d.replaced_at[0]
    la, lb = _subject_length(statement_a), _subject_length(statement_b)
    if la is not None and lb is not None:
        return i < la and j < lb
    return kind in ("name", "word") and i + len(d.replaces[0][0]) <= 0.4 * len(a)


@lru_cache(maxsize=131072)
def _token_set(statement: str) -> frozenset[str]:
    return frozenset(stem(t) for t in fts_tokenize(statement))


def token_similarity(statement_a: str, statement_b: str) -> float:
    """Overlap of the content words (Dice over stemmed FTS tokens): the similarity when no model is installed."""
    ta, tb = _token_set(statement_a), _token_set(statement_b)
    if not ta or not tb:
        return 0.0
    return 2 * len(ta & tb) / (len(ta) + len(tb))


def _similarity_factor(similarity: float) -> float:
    return max(0.0, min(1.0, (similarity - 0.3) / 0.4))


def _content(w: Word) -> bool:
    lower = w.text.lower()
    return len(w.norm) > 2 and not ({w.norm, lower} & FUNCTION_WORDS) and w.norm not in NEGATORS


def _side_valued(kinds: list[str]) -> bool:
    """A slot side holds a value: a number, date, version or name (a capitalised word counts as a name unless it
    is the sentence's first word, capitalised whatever it is: value_kind). Counting a first word's capital too made
    a slot of two sentence-initial plain words "valued" with no value kind to name: a crash of the judge."""
    return any(k != "word" for k in kinds)


def _signal(
    a: list[Word], b: list[Word], d: _Diff, known: Callable[[str], bool]
) -> tuple[str, str, float, list[Word], list[Word], list[str]]:
    negators = [w for w in d.removed + d.added if w.norm in NEGATORS]
    opposites = _antonym_pairs(d.removed, d.added)
    flipped = {id(w) for pair in opposites for w in pair} | {id(w) for w in negators}
    bounds = _bounds_conflict(a, b)
    if bounds is not None:  # "at least 12" / "at most 20" can both hold; "at least 12" / "at most 8" cannot
        return ("bounds", "quantity", 0.95, d.removed, d.added, []) if bounds else ("", "bounds", 0.0, [], [], [])
    polarity = (len(negators) % 2 == 1 and not opposites) or (len(negators) % 2 == 0 and bool(opposites))
    if polarity:
        rest = [w for r, ad in d.replaces for w in r + ad if id(w) not in flipped and _content(w)]
        if rest:  # "don't use tabs" / "use spaces": the flip and the swap cancel out
            return "", "flip and substitution", 0.0, d.removed, d.added, []
        kind = "opposite" if opposites else "negation"
        extra = [w for w in d.removed + d.added if id(w) not in flipped and _content(w)]
        return kind, kind, 0.95 * _EXTRA ** len(extra), d.removed, d.added, []
    if negators or opposites:
        return "", "flips cancel", 0.0, d.removed, d.added, []
    if len(d.replaces) != 1:
        return "", "several differences" if d.replaces else "refinement", 0.0, d.removed, d.added, []
    removed, added = d.replaces[0]
    in_slot = {id(w) for w in removed + added}
    extra = [w for w in d.removed + d.added if id(w) not in in_slot and _content(w)]
    kinds_a = [value_kind(w, known) for w in removed]
    kinds_b = [value_kind(w, known) for w in added]
    valued = [k for k in kinds_a + kinds_b if k != "word"]
    penalty = _EXTRA ** len(extra)
    if max(len(removed), len(added)) > _SLOT_WORDS or not (_side_valued(kinds_a) and _side_valued(kinds_b)):
        # ordinary words on one side at least: maybe a synonym, maybe another subject; ranked low, never alone
        return "slot", "word", 0.4 * penalty, removed, added, []
    kind = max(set(valued), key=valued.count)
    return "slot", kind, 0.9 * penalty, removed, added, []
