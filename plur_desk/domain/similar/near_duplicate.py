"""When two drafts that read alike still teach different lessons: the detail rules that keep them apart.

A similarity score (embeddings or word overlap) says two statements are about the same thing; it does not see
that "Node 20" and "Node 22", "10 seconds" and "10 minutes", "Alice" and "Bob", or "always" and "never" make
them different lessons. `detail_conflict` says why two statements must stay apart, or None. It errs towards
keeping drafts apart: a missed duplicate costs the reviewer one more key, a false one could hide a lesson.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

_TOKEN = re.compile(r"\d+(?:[.:]\d+)+|[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
_RAW = re.compile(r"\S+")
_NUMBER = re.compile(r"\d+(?:[.:]\d+)*")
_NUMBER_WORDS = {
    "zero": "0",
    "one": "1",
    "once": "1",
    "two": "2",
    "twice": "2",
    "three": "3",
    "thrice": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
    "fifteen": "15",
    "twenty": "20",
    "thirty": "30",
    "fifty": "50",
    "hundred": "100",
    "thousand": "1000",
}
_UNITS = {
    **dict.fromkeys(("ms", "millisecond", "milliseconds"), "ms"),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), "s"),
    **dict.fromkeys(("min", "mins", "minute", "minutes"), "min"),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), "h"),
    **dict.fromkeys(("d", "day", "days"), "d"),
    **dict.fromkeys(("week", "weeks"), "wk"),
    **dict.fromkeys(("month", "months"), "mo"),
    **dict.fromkeys(("year", "years"), "y"),
    **dict.fromkeys(("kb", "kib"), "kb"),
    **dict.fromkeys(("mb", "mib"), "mb"),
    **dict.fromkeys(("gb", "gib"), "gb"),
    **dict.fromkeys(("tb", "tib"), "tb"),
    **dict.fromkeys(("percent", "%"), "%"),
    **dict.fromkeys(("core", "cores", "cpu", "cpus"), "cpu"),
}
# Words that flip or contrast a statement; their presence must agree on both sides.
_NEGATIONS = frozenset(
    [
        "not",
        "no",
        "never",
        "dont",
        "don't",
        "don’t",
        "cannot",
        "can't",
        "can’t",
        "mustn't",
        "shouldn't",
        "isn't",
        "aren't",
        "doesn't",
        "won't",
        "without",
        "avoid",
        "disable",
        "disabled",
        "forbid",
        "forbidden",
        "instead",
        "rather",
    ]
)
# Swapping only these is not a different lesson ("a" for "the").
_FUNCTION_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "for",
        "is",
        "are",
        "be",
        "by",
        "with",
        "and",
        "or",
        "this",
        "that",
        "our",
        "its",
        "it",
    ]
)


@dataclass(frozen=True)
class Details:
    """What must agree between two statements for them to be one lesson."""

    tokens: tuple[str, ...]  # lowercased words, in order
    numbers: tuple[str, ...]  # sorted: "20", "500ms", "3"
    names: frozenset[str]  # capitalised or code-like words inside the sentence, lowercased
    negated: bool


def tokens_of(statement: str) -> list[str]:
    return [t.lower().replace("’", "'") for t in _TOKEN.findall(statement)]


def _numbers(tokens: list[str]) -> tuple[str, ...]:
    found = []
    for i, token in enumerate(tokens):
        word = _NUMBER_WORDS.get(token)
        for number in [word] if word else _NUMBER.findall(token):
            canonical = number if ":" in number or "." in number else number.lstrip("0") or "0"
            rest = token.replace(number, "", 1) if word is None else ""
            if not rest and i + 1 < len(tokens):
                rest = tokens[i + 1]
            found.append(canonical + _UNITS.get(rest, ""))
    return tuple(sorted(found))


def _names(statement: str) -> frozenset[str]:
    """Capitalised words inside the sentence, mixed-case or code-like words (a first word may just be capitalised)."""
    strong = set()
    for position, raw in enumerate(_RAW.findall(statement)):
        word = raw.strip(".,;:!?()[]{}\"'“”‘’")
        if not word or not any(c.isalpha() for c in word) or word.lower() in _FUNCTION_WORDS:
            continue
        inner_upper = any(c.isupper() for c in word[1:])
        code_like = any(c in word for c in "._/@") or any(c.isdigit() for c in word)
        if inner_upper or code_like or (word[0].isupper() and position > 0):
            strong.add(word.lower())
    return frozenset(strong)


@lru_cache(maxsize=65536)
def details_of(statement: str) -> Details:
    tokens = tokens_of(statement)
    strong = _names(statement)
    return Details(
        tokens=tuple(tokens),
        numbers=_numbers(tokens),
        names=strong,
        negated=any(t in _NEGATIONS for t in tokens),
    )


def _present(name: str, details: Details, text: str) -> bool:
    return name in details.names or name in details.tokens or name in text


def _spans(a: tuple[str, ...], b: tuple[str, ...]) -> list[tuple[tuple[str, ...], tuple[str, ...]]] | None:
    """The differing spans when `b` is `a` with spans replaced in place (None when words were added or moved)."""
    if len(a) == len(b):
        spans, i = [], 0
        while i < len(a):
            if a[i] == b[i]:
                i += 1
                continue
            j = i
            while j < len(a) and a[j] != b[j]:
                j += 1
            spans.append((a[i:j], b[i:j]))
            i = j
        return spans
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(a), len(b)) - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    left, right = a[prefix : len(a) - suffix], b[prefix : len(b) - suffix]
    return [(left, right)] if left and right else None


def _substitution(a: Details, b: Details) -> tuple[str, str] | None:
    """Short spans swapped for others, everything else word for word: the shape of changed details."""
    spans = _spans(a.tokens, b.tokens)
    if not spans:
        return None
    left = [t for span, _ in spans for t in span]
    right = [t for _, span in spans for t in span]
    same = len(a.tokens) - len(left)
    if any(max(len(x), len(y)) > 3 for x, y in spans) or same < 2 or same < len(left):
        return None
    if set(left) <= _FUNCTION_WORDS and set(right) <= _FUNCTION_WORDS:
        return None
    return " ".join(left), " ".join(right)


def agreement_key(statement: str) -> tuple[tuple[str, ...], bool]:
    """What must be equal for two statements to be one lesson (numbers with units, negation): a cheap first cut.
    The same as `details_of`'s numbers and negation, not kept in its cache: the clusters ask it once for every
    statement of the store (~46 MB of cached details at 50,000), `detail_conflict` only for candidate pairs."""
    tokens = tokens_of(statement)
    return _numbers(tokens), any(t in _NEGATIONS for t in tokens)


@lru_cache(maxsize=262144)
def detail_conflict(a: str, b: str) -> str | None:
    """Why statements `a` and `b` are different lessons however alike they read, or None."""
    da, db = details_of(a), details_of(b)
    if da.numbers != db.numbers:
        return f"numbers differ ({', '.join(da.numbers) or 'none'} vs {', '.join(db.numbers) or 'none'})"
    if da.negated != db.negated:
        return "one says not/never/avoid, the other does not"
    text_a, text_b = " ".join(da.tokens), " ".join(db.tokens)
    only_a = sorted(n for n in da.names if not _present(n, db, text_b))
    only_b = sorted(n for n in db.names if not _present(n, da, text_a))
    if only_a or only_b:  # "Thursday and Friday" is not "Friday"; a capitalised first word does not count
        return f"names differ ({', '.join(only_a) or 'none'} vs {', '.join(only_b) or 'none'})"
    swapped = _substitution(da, db)
    if swapped is not None:
        return f"one detail swapped ({swapped[0]!r} vs {swapped[1]!r})"
    return None


def scopes_overlap(a: str, b: str) -> bool:
    """PLUR's own rule for pairs that can meet in one session: the same scope, or either is global."""
    return a == b or a == "global" or b == "global"
