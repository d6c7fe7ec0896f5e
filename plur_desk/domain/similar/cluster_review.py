"""Settling a cluster of near-duplicates: each duplicate is rejected with a link to the engram kept."""

from __future__ import annotations

from datetime import datetime

from plur_desk.domain import review
from plur_desk.domain.review import Reviewer
from plur_desk.infra.errors import ActionRefused

DUPLICATE_REASON = "duplicate of {}"


def reject_as_duplicate(
    engram: dict[str, object], representative: str, reviewer: Reviewer, now: datetime
) -> tuple[dict[str, object], list[dict[str, object]]]:
    """A rejection whose reason names the kept engram, and whose review record and event link to it."""
    if engram.get("id") == representative:
        raise ActionRefused(f"{representative} cannot be a duplicate of itself")
    engram, events = review.reject(engram, DUPLICATE_REASON.format(representative), reviewer, now)
    record = engram.get("review")
    if isinstance(record, dict):
        record["duplicate_of"] = representative
    for event in events:
        data = event.get("data")
        if isinstance(data, dict):
            data["duplicate_of"] = representative
    return engram, events
