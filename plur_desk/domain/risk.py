"""Risk order for the drafts queue: what most needs a careful look comes first, with the reasons shown.

The score is a weighted mean of factors, each between 0 and 1. The factors and weights are fixed and listed in
FACTORS (the queue shows them on hover); nothing here decides anything, it only orders the queue.

| factor        | weight | value                                                                              |
|---------------|--------|------------------------------------------------------------------------------------|
| scope         | 3      | how far an approved draft reaches: global 1, group 0.8, project 0.4, local 0.3, user 0.2 |
| commitment    | 2      | the level approval would give: locked 1, decided 0.6, leaning 0.3, exploring 0.1   |
| lint          | 4      | instruction-like or credential-like text 1, a URL 0.5 (the highest flag counts)    |
| contradiction | 3      | in an open tension with another engram 1                                           |
| rejected      | 2      | the same statement was rejected before 1                                           |
| writer        | 2      | the writer's rejection rate, smoothed ((rejected + 1) / (decided + 2))             |
| novelty       | 1.5    | 1 - similarity to the nearest approved engram (1 when nothing approved is close)   |
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple


@dataclass(frozen=True)
class Factor:
    """One factor of a draft's risk score, with its weight."""

    name: str
    weight: float
    description: str


FACTORS: tuple[Factor, ...] = (
    Factor("scope", 3.0, "scope breadth: global and group scopes reach every session of many people"),
    Factor("commitment", 2.0, "the commitment approval would give (locked is injected with full confidence)"),
    Factor("lint", 4.0, "instruction-like text, a credential-like string or a URL"),
    Factor("contradiction", 3.0, "in an open tension (a possible contradiction) with another engram"),
    Factor("rejected", 2.0, "the same statement was rejected before"),
    Factor("writer", 2.0, "how often reviewers rejected this writer's drafts"),
    Factor("novelty", 1.5, "nothing similar is approved yet"),
)
WEIGHTS = {f.name: f.weight for f in FACTORS}
_SCOPE = {"global": 1.0, "group": 0.8, "project": 0.4, "local": 0.3, "user": 0.2}
_LEVEL = {"locked": 1.0, "decided": 0.6, "leaning": 0.3, "exploring": 0.1}
_LINT = {"instruction-like text": 1.0, "credential-like string": 1.0, "URL": 0.5}


class RiskInput(NamedTuple):  # a tuple: the memo below hashes it in C
    scope: str
    level: str = "decided"
    flags: tuple[str, ...] = ()
    writer_rejected: int = 0
    writer_decided: int = 0
    nearest_approved: float | None = None  # cosine similarity, None when nothing approved was compared


@dataclass(frozen=True)
class Risk:
    """A draft's risk score and the parts that make it up."""

    score: float  # 0..1
    parts: tuple[tuple[str, float, str], ...]  # (factor, weighted contribution, reason), largest first

    @property
    def reasons(self) -> str:
        return "; ".join(reason for _name, points, reason in self.parts if points > 0)


def scope_breadth(scope: str) -> float:
    if scope in _SCOPE:
        return _SCOPE[scope]
    return _SCOPE.get(scope.partition(":")[0], 0.5)


@lru_cache(maxsize=65536)  # many drafts share writer, scope, flags and (rounded) novelty
def assess(item: RiskInput) -> Risk:
    lint = max((_LINT.get(f, 0.0) for f in item.flags), default=0.0)
    lint_names = [f for f in item.flags if f in _LINT]
    rate = (item.writer_rejected + 1) / (item.writer_decided + 2)
    novelty = 1.0 if item.nearest_approved is None else min(1.0, max(0.0, 1.0 - item.nearest_approved))
    values = {
        "scope": (scope_breadth(item.scope), f"scope {item.scope}"),
        "commitment": (_LEVEL.get(item.level, 0.6), f"would be {item.level}"),
        "lint": (lint, ", ".join(lint_names)),
        "contradiction": (1.0 if "in tension" in item.flags else 0.0, "possible contradiction (open tension)"),
        "rejected": (1.0 if "rejected before" in item.flags else 0.0, "rejected before"),
        "writer": (rate, f"writer rejected {item.writer_rejected} of {item.writer_decided}"),
        "novelty": (novelty, _novelty_text(item.nearest_approved)),
    }
    parts = [(name, WEIGHTS[name] * value, text) for name, (value, text) in values.items()]
    parts.sort(key=lambda p: -p[1])
    total = sum(WEIGHTS.values())
    return Risk(round(sum(p[1] for p in parts) / total, 4), tuple((n, round(p, 3), t) for n, p, t in parts))


def _novelty_text(nearest: float | None) -> str:
    if nearest is None:
        return "nothing approved to compare with"
    return f"nearest approved engram {nearest:.2f} alike"


def factors_help() -> str:
    """The hover text for the risk column: every factor and its weight."""
    lines = ["Risk = weighted mean of these factors (each 0..1):"]
    lines += [f"  {f.name} x{f.weight:g}: {f.description}" for f in FACTORS]
    lines.append("It orders the queue only; it decides nothing.")
    return "\n".join(lines)
