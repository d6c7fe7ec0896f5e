"""Advisory checks on a draft's text: instruction-like phrasing, URLs and credential-like strings.

Memory poisoning arrives as text that tells the agent what to do, points it somewhere, or carries a secret.
These flags never decide anything; they make the reviewer look twice.
"""

from __future__ import annotations

import re

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
    r"\b(?:password|passwd|secret|api[_-]?key|token)\s*[:=]\s*\S{6,})",
    re.I,
)


def text_flags(statement: str) -> list[str]:
    flags = []
    if _INSTRUCTION.search(statement):
        flags.append("instruction-like text")
    if _URL.search(statement):
        flags.append("URL")
    if _SECRET.search(statement):
        flags.append("credential-like string")
    return flags
