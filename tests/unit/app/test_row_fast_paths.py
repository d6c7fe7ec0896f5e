"""The drafts queue skips the validity-window rules for an engram without a `temporal` mapping (most drafts, and
thousands of rows at launch): the answers are the same as the general rules give, for every shape of `temporal`
and every position of `now` around the bounds and the creation time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from plur_desk.app.review.queries import SOON, next_change
from plur_desk.domain.engram_view import OUTSIDE_WINDOW, EngramView
from plur_desk.domain.plur_rules.validity import Window, closes_at, opens_at
from plur_desk.infra.clock import parse_instant

TEMPORALS = [
    "absent",
    None,
    "2026-01-01",
    ["2026-01-01"],
    {},
    {"valid_from": "2026-06-01"},
    {"valid_until": "2026-06-30"},
    {"valid_from": "2026-06-01T12:00:00.000Z", "valid_until": "2026-07-01T00:00:00Z"},
    {"valid_from": 20260601, "valid_until": None},
    {"valid_until": "not a date"},
]
CREATED = ["2026-05-31T23:30:00.000Z", "2026-06-20", "2026-06-30T10:00:00Z", "", "garbage", "2027-01-01"]
NOWS = [datetime(2026, 6, d, h, tzinfo=UTC) for d in (1, 15, 17, 30) for h in (0, 11, 23)] + [
    datetime(2026, 7, 2, tzinfo=UTC)
]


def _engram(temporal: object) -> dict[str, object]:
    engram: dict[str, object] = {"id": "ENG-2026-06-01-001", "statement": "s", "status": "active"}
    if temporal != "absent":
        engram["temporal"] = temporal
    return engram


def _reference_next_change(engram: dict[str, object], created: str, now: datetime) -> datetime | None:
    window = Window.of(engram)
    start, end = opens_at(window.valid_from), closes_at(window.valid_until)
    moments = [m for m in (start, end, end - SOON if end else None) if m is not None and m > now]
    born = parse_instant(created)
    if born is not None and born <= now:
        step = timedelta(hours=1) if now - born < timedelta(days=1) else timedelta(days=1)
        moments.append(born + step * ((now - born) // step + 1))
    return min(moments, default=None)


@pytest.mark.parametrize("temporal", TEMPORALS, ids=repr)
def test_the_fast_paths_answer_as_the_window_rules_do(temporal):
    engram = _engram(temporal)
    for now in NOWS:
        state = Window.of(engram).state(now)
        assert EngramView(engram).outside_window(now) == (state if state in OUTSIDE_WINDOW else None)
        for created in CREATED:
            assert next_change(engram, parse_instant(created), now) == _reference_next_change(engram, created, now)
