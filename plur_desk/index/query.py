"""The search language: free text, "quoted phrases", -negation and field filters. Never raises.

    deploy friday -staging "release notes" status:active commitment:draft scope:project:web domain:dev
    tag:ci type:procedural by:agent:codex session:sess-42 is:draft is:expired is:rejected in:tension before:2026-06-01 after:2026-01-01

Anything it cannot use is kept as a plain term and named in `ignored`, so the user learns what was not applied.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

FIELDS = {
    "status",
    "commitment",
    "scope",
    "domain",
    "tag",
    "type",
    "by",
    "session",  # an agent session named in sources[].session_id; a prefix is enough, as with by:
    "is",
    "in",
    "before",
    "after",
    "id",
}
IS_VALUES = {
    "draft",
    "expired",
    "rejected",
    "approved",
    "active",
    "retired",
    "current",
    "future",
    "locked",
    "unverified",  # a review record no validly signed event backs (is:approved / is:rejected leave those out)
}
_AS_TEXT = "its words were searched as plain text instead"
_TOKEN = re.compile(r'(-?)(?:([A-Za-z_]+):("[^"]*"?|\S+)|"([^"]*)"?|(\S+))')


@dataclass(frozen=True)
class Filter:
    field: str
    value: str
    negated: bool = False


@dataclass
class ParsedQuery:
    terms: list[str] = field(default_factory=list)
    phrases: list[str] = field(default_factory=list)
    excluded_terms: list[str] = field(default_factory=list)
    excluded_phrases: list[str] = field(default_factory=list)
    filters: list[Filter] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)

    @property
    def has_text(self) -> bool:
        return bool(self.terms or self.phrases)

    @property
    def empty(self) -> bool:
        return not (self.terms or self.phrases or self.excluded_terms or self.excluded_phrases or self.filters)

    def text(self) -> str:
        return " ".join(self.terms + self.phrases)


def _valid(field_name: str, value: str) -> str | None:
    """Why this filter value cannot be used, or None."""
    if not value:
        return "has no value"
    if field_name == "is" and value not in IS_VALUES:
        return f"knows {', '.join(sorted(IS_VALUES))}"
    if field_name == "in" and value != "tension":
        return "only knows in:tension"
    if field_name in ("before", "after"):
        try:
            date.fromisoformat(value)
        except ValueError:
            return "needs a date YYYY-MM-DD"
    return None


def parse(text: str) -> ParsedQuery:
    query = ParsedQuery()
    for match in _TOKEN.finditer(text or ""):
        negated = match.group(1) == "-"
        name, raw_value, phrase, word = match.group(2), match.group(3), match.group(4), match.group(5)
        if name is not None:
            field_name = name.lower()
            value = raw_value.strip('"')
            if field_name in FIELDS:
                if field_name in ("is", "in", "status", "commitment", "type"):
                    value = value.lower()
                problem = _valid(field_name, value)
                if problem is None:
                    query.filters.append(Filter(field_name, value, negated))
                    continue
                query.ignored.append(f"{name}:{raw_value} is not applied ({field_name} {problem}); {_AS_TEXT}")
            else:
                query.ignored.append(
                    f"{name}:{raw_value} is not a filter (there is no field '{name}'; filters are "
                    f"{', '.join(f + ':' for f in sorted(FIELDS))}); {_AS_TEXT}"
                )
            words = f"{name} {value}".split()
            (query.excluded_terms if negated else query.terms).extend(words)
        elif phrase is not None:
            if phrase.strip():
                (query.excluded_phrases if negated else query.phrases).append(phrase.strip())
        elif word:
            if negated and len(word) > 0:
                query.excluded_terms.append(word)
            elif word == "-":
                continue
            else:
                query.terms.append(word)
    return query
