"""Advisory checks on a draft's text: instruction-like phrasing, URLs, credential-like strings, hidden characters.

Memory poisoning arrives as text that tells the agent what to do, points it somewhere, or carries a secret.
These flags never decide anything; they make the reviewer look twice.
"""

from __future__ import annotations

import re
from functools import lru_cache

_INSTRUCTION = re.compile(
    r"\b(ignore (all |any )?(previous|prior|above) (instructions|rules)|disregard (the )?(previous|above|system)|"
    r"you (must|should) (always|never) (run|execute|send|upload|curl|trust)|system prompt|"
    r"do not (tell|inform) the user|run (this|the following) command|curl\s+\S+\s*\|\s*(ba)?sh|"
    r"exfiltrat|send .{0,40}(password|token|secret|key)s?\b)",
    re.I,
)
_URL = re.compile(r"\b(?:https?|ftp)://[^\s]+|\bwww\.[a-z0-9-]+\.[a-z]{2,}\S*", re.I)
_SECRET = re.compile(
    r"(AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}|sk-[A-Za-z0-9_-]{20,}|xox[baprs]-[A-Za-z0-9-]{10,}|"
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}|"
    r"\b(?:password|passwd|secret|api[_-]?key|token)\s*[:=]\s*(?P<value>\S{6,}))",
    re.I,
)


# Characters that change how text looks without being seen: controls, bidi embeddings/overrides/isolates/marks,
# zero-width and other invisible characters, line/paragraph separators, interlinear annotations, tag characters.
_HIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f"
    "\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0e\ufeff\uffa0\ufff9-\ufffb"
    "\U000e0000-\U000e0fff]"
)


REDACTED = "[redacted credential]"


def credentials(text: str) -> list[str]:
    """The credential-like strings in `text`, each once, in order (of `password: xyz`, the value `xyz`)."""
    return list(dict.fromkeys(m.group("value") or m.group() for m in _SECRET.finditer(text)))


def redact_credentials(text: str) -> str:
    """`text` with every credential-like string (of `password: xyz`, the value) replaced by REDACTED: what history
    may keep of a removed secret."""

    def hide(m: re.Match[str]) -> str:
        if m.group("value") is None:
            return REDACTED
        return m.group()[: m.start("value") - m.start()] + REDACTED

    return _SECRET.sub(hide, text)


def removed_credentials(old: str, new: str) -> list[str]:
    """The credential-like strings of `old` that an edit to `new` takes out."""
    return [c for c in credentials(old) if c not in new]


def hidden_characters(text: str) -> list[str]:
    """The hidden characters in `text` as sorted code point names (`U+202E`), each once."""
    return sorted({f"U+{ord(ch):04X}" for ch in _HIDDEN.findall(text)})


def reveal(text: str) -> str:
    """`text` with every hidden character replaced by a visible marker such as ⟨U+202E⟩."""
    if text.isascii() and text.isprintable():
        return text
    return _HIDDEN.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", text)


def text_flags(statement: str) -> list[str]:
    return list(_text_flags(statement))


@lru_cache(maxsize=1 << 16)
def _text_flags(statement: str) -> tuple[str, ...]:
    """Every refresh of the queue asks again for every draft: the answer for a text is remembered."""
    flags = []
    if _INSTRUCTION.search(statement):
        flags.append("instruction-like text")
    if _URL.search(statement):
        flags.append("URL")
    if _SECRET.search(statement):
        flags.append("credential-like string")
    hidden = hidden_characters(statement)
    if hidden:
        flags.append("hidden characters " + " ".join(hidden[:4]) + (" …" if len(hidden) > 4 else ""))
    return tuple(flags)


# How much a flag asks of the reviewer: 2 the text may attack or leak (look before anything else), 1 the draft may
# not hold or was answered before, 0 worth knowing. The queue sorts, marks and colours flags by it.
_SEVERITY = {
    "instruction-like text": 2,
    "credential-like string": 2,
    "hidden characters": 2,
    "expired": 1,
    "not yet valid": 1,
    "rejected before": 1,
    "in tension": 1,
    "URL": 0,
}
_SHORT = {
    "instruction-like text": "instruction",
    "credential-like string": "secret",
    "not yet valid": "not yet",
    "rejection claim NOT VERIFIED": "unverified reject",  # someone's rejection no key you trust signed
}


def severity(flag: str) -> int:
    return _SEVERITY.get(flag.split(" U+")[0], 1)


def short_flag(flag: str) -> str:
    """A flag as a narrow column shows it ("secret", "hidden chars"); the tooltip keeps the whole text."""
    if flag.startswith("hidden characters"):
        return "hidden chars"
    return _SHORT.get(flag, flag)
