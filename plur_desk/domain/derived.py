"""content_hash and summary exactly as PLUR 0.20 computes them in JavaScript.

JavaScript differs from Python in two ways that matter here: its `\\s` is a fixed set (it includes U+FEFF and
leaves out U+001C-U+001F and U+0085, which `str.isspace` counts), and `length`, `slice` and `search` count UTF-16
code units, so an astral character counts twice and a cut can fall between its halves (PLUR then keeps the lone
half, and so do we). The differential test runs PLUR's own functions on random statements.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

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


def normalize_statement(statement: str) -> str:
    """PLUR's normalizeStatement: lowercase, keep letters/numbers/marks/_/JS whitespace, squeeze, trim."""
    kept = "".join(
        ch
        for ch in statement.lower()
        if ch == "_" or ch in _JS_SPACE_SET or unicodedata.category(ch)[0] in _WORD_CATEGORIES
    )
    return _JS_SPACE_RUN.sub(" ", kept).strip(" ")


def content_hash(statement: str) -> str:
    """PLUR's computeContentHash: sha256 of the normalized statement (UTF-8), hex."""
    return hashlib.sha256(normalize_statement(statement).encode("utf-8", "surrogatepass")).hexdigest()


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
