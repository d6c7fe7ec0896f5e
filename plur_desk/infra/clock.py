"""Time in one place: a system clock, a fixed clock for tests, and JavaScript's toISOString format."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class FixedClock:
    """A clock for tests; `advance` moves it forward."""

    def __init__(self, start: datetime) -> None:
        self._now = start.astimezone(UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += timedelta(seconds=seconds)


def iso_ms(moment: datetime) -> str:
    """`Date.prototype.toISOString()`: YYYY-MM-DDTHH:MM:SS.sssZ in UTC."""
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_instant(text: str) -> datetime | None:
    """Parse an ISO date or instant as JavaScript's Date.parse would for PLUR's values; None if unparseable.

    Zone-less date-times are UTC (PLUR 0.20 appends Z); a date alone is midnight UTC.
    """
    if not isinstance(text, str) or not text:
        return None
    candidate = text.strip()
    if candidate.endswith(("Z", "z")):
        candidate = candidate[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(candidate)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)
