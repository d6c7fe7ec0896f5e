"""Who is reviewing: a name that means a person, checked before any session writes an event with it.

A `kind: human` event claims a named person decided. An empty or blank name names nobody; a name shaped like
PLUR's agent identities (`agent:claude-code`, the `unidentified` marker, a runtime such as `plur-core`) would make
an agent's identity look like a human decision.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from plur_desk.app.settings import Settings, SettingsStore
from plur_desk.domain.trust import reviewer_identity
from plur_desk.infra.confusables import confusable
from plur_desk.infra.errors import PlurDeskError

# PLUR's attribution addresses for software and agents (learn() writes `agent:*` identities and the
# `unidentified` marker; runtimes are named `plur-core` / `plur-desk`); a person is never one of these.
AGENT_PREFIXES = ("agent:", "model:", "tool:", "runtime:", "bot:", "session:", "system:")
AGENT_NAMES = ("unidentified", "plur", "plur-core", "plur-desk", "plur_desk", "agent", "assistant", "system")
MAX_LENGTH = 120
READER = "(reading only)"  # the session of a read-only command: it has no reviewer, so it can decide nothing


class InvalidReviewer(PlurDeskError):
    """The reviewer name does not name a person; nothing is written with it."""


def reviewer_problem(name: str) -> str | None:
    """Why `name` cannot be recorded as a human reviewer, or None when it can."""
    stripped = name.strip()
    if not stripped:
        return "Enter your name: every decision is recorded with it."
    if any(unicodedata.category(c).startswith("C") for c in name):
        return "The name may not contain line breaks, tabs or other control characters."
    if len(stripped) > MAX_LENGTH:
        return f"The name is longer than {MAX_LENGTH} characters."
    folded = stripped.casefold()
    if folded.startswith(AGENT_PREFIXES) or folded in AGENT_NAMES:
        return f"“{stripped}” is how PLUR names an agent or a program, not a person."
    return None


def lookalike_problem(name: str, known: Iterable[str]) -> str | None:
    """Why `name` cannot be a new reviewer here: it reads as a reviewer this user already trusts (their own
    identity, one trusted by hand or endorsed) but is another name, told apart only by case, blanks or look-alike
    letters. Signing as it would pass for that person. None when it is that very name, or like none of them."""
    identity = reviewer_identity(name)
    known = set(known)
    if identity in known:
        return None
    for other in sorted(known):
        if confusable(identity, other):
            points = " ".join(f"U+{ord(c):04X}" for c in name.strip() if not c.isascii())
            spelled = f" (it contains {points})" if points else ""
            return (
                f"“{name.strip()}” looks like the reviewer {other.removeprefix('human:')!r} you already trust, but is "
                f"another name{spelled}. Use exactly that name if it is you, or a name nobody could mistake for it."
            )
    return None


def trusted_reviewers() -> set[str]:
    """The identities this user trusts by their trust file (own and by hand; a store's endorsements add to these
    once it is open)."""
    from plur_desk.app.trust.trust_file import TrustFile

    keys, _problem = TrustFile().read()
    return {k.identity for k in keys}


def check_reviewer(name: str) -> str:
    """The name to record (surrounding blanks removed); InvalidReviewer when it does not name a person."""
    problem = reviewer_problem(name)
    if problem:
        raise InvalidReviewer(f"Reviewer name refused: {problem}")
    return name.strip()


def note_reviewer_change(settings_store: SettingsStore, settings: Settings, name: str) -> str:
    """A one-time note when this run's reviewer differs from the previous run's; remembers this run's."""
    last = settings.last_reviewer
    note = f"Reviewing as {name} (the previous run reviewed as {last})." if last and last != name else ""
    if last != name:
        settings.last_reviewer = name
        settings_store.save(settings)
    return note
