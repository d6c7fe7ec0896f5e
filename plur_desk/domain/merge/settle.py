"""Settling a team disagreement: an ordinary, audited human decision made after two reviewers disagreed.

`settle_decision` keeps the approval (the engram becomes active again at the chosen level) or the rejection;
`reinstate_winner` and `set_winner` settle a tension two machines resolved with different winners. Settling an
engram writes a new `review` (the earlier decisions stay in `reviews`) and removes the merge's
`review_disagreements` from it; the team merge carries that removal to every clone.
"""

from __future__ import annotations

from datetime import datetime

from plur_desk.domain.merge.merge_engram import DISAGREEMENTS_KEY
from plur_desk.domain.plur_rules.engram_rules import LADDER
from plur_desk.domain.review import Reviewer, make_event
from plur_desk.domain.review import _decide as record_decision  # the one way a decision is recorded
from plur_desk.domain.review import _review as decision_record
from plur_desk.infra.clock import iso_ms
from plur_desk.infra.errors import ActionRefused

KEEP = ("approved", "rejected")


def _reactivate(engram: dict[str, object]) -> None:
    engram["status"] = "active"
    rationale = engram.get("rationale")
    if isinstance(rationale, str) and rationale.startswith("Retired: "):
        del engram["rationale"]  # the retirement it explained is undone


def settle_decision(
    engram: dict[str, object], keep: str, level: str, note: str, reviewer: Reviewer, now: datetime
) -> tuple[dict[str, object], list[dict[str, object]]]:
    if keep not in KEEP:
        raise ActionRefused(f"keep must be one of {', '.join(KEEP)}")
    before = {"status": engram.get("status"), "commitment": engram.get("commitment")}
    if keep == "approved":
        if level not in LADDER:
            raise ActionRefused(f"{level!r} is not a commitment level ({', '.join(LADDER)})")
        _reactivate(engram)
        engram["commitment"] = level
        record_decision(
            engram, decision_record("approved", reviewer, now, level=level, note=note or "settles a team disagreement")
        )
    else:
        engram["status"] = "retired"
        record_decision(
            engram, decision_record("rejected", reviewer, now, reason=note or "settles a team disagreement")
        )
    engram.pop(DISAGREEMENTS_KEY, None)  # settled: the removal travels to every clone with the next sync
    engram["updated_at"] = iso_ms(now)
    after = {"status": engram.get("status"), "commitment": engram.get("commitment")}
    data = {"action": "settle_disagreement", "keep": keep, "from": before, "to": after}
    return engram, [make_event("engram_updated", str(engram["id"]), now, data, reviewer)]


def set_winner(record: dict[str, object], winner: str, now: datetime) -> dict[str, object]:
    if record.get("status") != "resolved":
        raise ActionRefused(f"{record.get('id')} is not resolved; resolve it as usual")
    if winner not in (record.get("engram_a"), record.get("engram_b")):
        raise ActionRefused(f"{winner} is not one of the two engrams of {record.get('id')}")
    record["resolved_by"] = winner
    record["resolved_at"] = iso_ms(now)
    return record


def reinstate_winner(
    engram: dict[str, object], tension_id: str, reviewer: Reviewer, now: datetime
) -> tuple[dict[str, object], list[dict[str, object]]]:
    before = engram.get("status")
    _reactivate(engram)
    engram["updated_at"] = iso_ms(now)
    data = {"action": "settle_two_winners", "tension_id": tension_id, "field": "status", "from": before, "to": "active"}
    return engram, [make_event("engram_updated", str(engram["id"]), now, data, reviewer)]
