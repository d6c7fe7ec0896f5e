"""content_hash and summary exactly as PLUR 0.20 computes them in JavaScript.

JavaScript differs from Python in three ways that matter here. Its `\\s` is a fixed set (it includes U+FEFF and
leaves out U+001C-U+001F and U+0085, which `str.isspace` counts). Its `length`, `slice` and `search` count UTF-16
code units, so an astral character counts twice and a cut can fall between its halves (PLUR then keeps the lone
half, and so do we). Its Unicode tables are newer than Python 3.11's (unicode_newer.py fills the gap). The
differential test runs PLUR's own functions on random statements.
"""

from __future__ import annotations

import bisect
import hashlib
import re
import sys
import unicodedata
from functools import lru_cache

from plur_desk.domain.plur_rules.unicode_newer import (
    CASE_IGNORABLE_CHANGED,
    CASED_CHANGED,
    NEWER_CASE_IGNORABLE,
    NEWER_CASED,
    NEWER_LOWER,
    NEWER_WORD_RANGES,
)

# ECMAScript WhiteSpace and LineTerminator: what `\s`, `trim()` and `/\s+/` mean in JavaScript.
JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_JS_SPACE_SET = frozenset(JS_SPACE)
_JS_SPACE_RUN = re.compile(f"[{re.escape(JS_SPACE)}]+")
_SENTENCE_END = re.compile(f"[.!?][{re.escape(JS_SPACE)}]")
_WORD_CATEGORIES = frozenset("LNM")
STATEMENT_THRESHOLD = 200  # UTF-16 code units
SUMMARY_MAX_LENGTH = 60  # UTF-16 code units


def js_length(text: str) -> int:
    """`text.length` in JavaScript: UTF-16 code units."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF) if not text.isascii() else len(text)


def _js_slice(text: str, units: int) -> str:
    """`text.slice(0, units)`: may end in the high half of a surrogate pair, as in JavaScript."""
    raw = text.encode("utf-16-le", "surrogatepass")[: 2 * units]
    return raw.decode("utf-16-le", "surrogatepass")


def _in_ranges(ranges: tuple[tuple[int, int], ...], cp: int) -> bool:
    at = bisect.bisect_right(ranges, (cp, 0x110000)) - 1
    return at >= 0 and ranges[at][0] <= cp <= ranges[at][1]


@lru_cache(maxsize=4096)
def _cased(ch: str) -> bool:
    if ord(ch) in CASED_CHANGED:
        return CASED_CHANGED[ord(ch)]
    if unicodedata.category(ch) == "Cn":
        return _in_ranges(NEWER_CASED, ord(ch))
    return ch.islower() or ch.isupper() or ch.istitle()  # Lowercase, Uppercase or Lt: Unicode's Cased


@lru_cache(maxsize=4096)
def _case_ignorable(ch: str) -> bool:
    """Read off Python's own final-sigma rule (it has no public Case_Ignorable), newer characters from the table."""
    if ord(ch) in CASE_IGNORABLE_CHANGED:
        return CASE_IGNORABLE_CHANGED[ord(ch)]
    if unicodedata.category(ch) == "Cn":
        return _in_ranges(NEWER_CASE_IGNORABLE, ord(ch))
    if ch.islower() or ch.isupper() or ch.istitle():  # cased in Python's tables, which its rule used
        return (ch + "Σ").lower()[-1] == "σ"  # skipped, so nothing cased precedes the sigma
    return ("A" + ch + "Σ").lower()[-1] == "ς"  # skipped, so A precedes it


def _final_sigma(text: str, at: int) -> bool:
    """Unicode's Final_Sigma: a cased letter before (past case-ignorables), none after."""
    before = at - 1
    while before >= 0 and _case_ignorable(text[before]):
        before -= 1
    if before < 0 or not _cased(text[before]):
        return False
    after = at + 1
    while after < len(text) and _case_ignorable(text[after]):
        after += 1
    return after == len(text) or not _cased(text[after])


def js_lower(text: str) -> str:
    """`text.toLowerCase()`: Python's full case mapping, with JavaScript's (newer) tables where Python's lack
    characters; a capital sigma's final form is decided with those tables too."""
    if "Σ" not in text:
        return text.lower().translate(NEWER_LOWER)
    pieces = text.split("Σ")
    out = [pieces[0].lower()]
    at = len(pieces[0])
    for piece in pieces[1:]:
        out.append("ς" if _final_sigma(text, at) else "σ")
        out.append(piece.lower())
        at += 1 + len(piece)
    return "".join(out).translate(NEWER_LOWER)


def _is_word(ch: str) -> bool:
    """`/[\\p{L}\\p{N}\\p{M}]/u` as JavaScript's (newer) Unicode tables answer it."""
    category = unicodedata.category(ch)
    if category[0] in _WORD_CATEGORIES:
        return True
    return category == "Cn" and _in_ranges(NEWER_WORD_RANGES, ord(ch))


def normalize_statement(statement: str) -> str:
    """PLUR's normalizeStatement: lowercase, keep letters/numbers/marks/_/JS whitespace, squeeze, trim."""
    kept = "".join(ch for ch in js_lower(statement) if ch == "_" or ch in _JS_SPACE_SET or _is_word(ch))
    return _JS_SPACE_RUN.sub(" ", kept).strip(" ")


def content_hash(statement: str) -> str:
    """PLUR's computeContentHash: sha256 of the normalized statement (UTF-8), hex. Interned, as parsed records'
    `content_hash` values and the vector cache's keys are: one string per statement however many hold it."""
    return sys.intern(hashlib.sha256(normalize_statement(statement).encode("utf-8", "surrogatepass")).hexdigest())


def generate_summary(statement: str) -> str | None:
    """PLUR's autoSummary (no cognitive level): None up to 200 UTF-16 units, else at most 60 units plus '...'."""
    if js_length(statement) <= STATEMENT_THRESHOLD:
        return None
    match = _SENTENCE_END.search(statement)
    if match and 0 < js_length(statement[: match.start()]) <= SUMMARY_MAX_LENGTH:
        return statement[: match.start() + 1]
    truncated = _js_slice(statement, SUMMARY_MAX_LENGTH)
    last_space = truncated.rfind(" ")
    if last_space >= 0 and js_length(truncated[:last_space]) > SUMMARY_MAX_LENGTH * 0.5:
        return truncated[:last_space] + "..."
    return truncated + "..."
