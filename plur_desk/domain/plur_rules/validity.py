"""Validity windows exactly as PLUR 0.20 evaluates them (shared/PLUR-FORMAT.md §6).

A date-only `valid_from` opens at 00:00:00.000Z; a date-only `valid_until` closes at 23:59:59.999Z of that UTC
day; other values are parsed as instants (no zone means UTC); an unparseable bound is ignored.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from plur_desk.infra.clock import parse_instant

_DATE_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}\Z")
EXPIRING_SOON = timedelta(days=14)


def opens_at(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    if _DATE_ONLY.match(value):
        try:
            return datetime.fromisoformat(value).replace(tzinfo=UTC)
        except ValueError:
            return None
    return parse_instant(value)


def closes_at(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    if _DATE_ONLY.match(value):
        try:
            return datetime.fromisoformat(value).replace(tzinfo=UTC) + timedelta(days=1, milliseconds=-1)
        except ValueError:
            return None
    return parse_instant(value)


@dataclass(frozen=True)
class Window:
    """An engram's validity window as PLUR stores it (`temporal.valid_from`/`valid_until`, either may be absent)."""

    valid_from: str | None
    valid_until: str | None

    @staticmethod
    def of(engram: Mapping[str, object]) -> Window:
        temporal = engram.get("temporal")
        if not isinstance(temporal, dict):
            return Window(None, None)
        vf, vu = temporal.get("valid_from"), temporal.get("valid_until")
        return Window(vf if isinstance(vf, str) else None, vu if isinstance(vu, str) else None)

    @property
    def present(self) -> bool:
        return self.valid_from is not None or self.valid_until is not None

    def state(self, now: datetime) -> str:
        """'current', 'expired', 'not_yet_valid' (PLUR 0.20), or 'expiring_soon' (current, closes within 14 days)."""
        start, end = opens_at(self.valid_from), closes_at(self.valid_until)
        if start is not None and now < start:
            return "not_yet_valid"
        if end is not None and now > end:
            return "expired"
        if end is not None and end - now <= EXPIRING_SOON:
            return "expiring_soon"
        return "current"

    def valid_at(self, now: datetime) -> bool:
        return self.state(now) in ("current", "expiring_soon")

    def unparseable(self) -> list[str]:
        bad = []
        if self.valid_from is not None and opens_at(self.valid_from) is None:
            bad.append("valid_from")
        if self.valid_until is not None and closes_at(self.valid_until) is None:
            bad.append("valid_until")
        return bad
