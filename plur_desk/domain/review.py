"""Human review decisions as pure functions over engram and tension records, and the patches that undo them.

Every action takes a private copy of the record as it is on disk and returns the new record plus the history
events that explain it. The difference between the two is a `Patch` (field: before -> after); undoing is
applying the patch backwards, refused when a field no longer holds the value the action left there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Literal

from plur_desk import RUNTIME_NAME, __version__
from plur_desk.domain.engram_view import EngramView
from plur_desk.domain.lint import redact_credentials, removed_credentials
from plur_desk.domain.plur_rules.derived import JS_SPACE, content_hash, generate_summary
from plur_desk.domain.plur_rules.engram_rules import LADDER
from plur_desk.domain.plur_rules.validity import Window, closes_at, opens_at
from plur_desk.infra.clock import iso_ms
from plur_desk.infra.errors import ActionRefused, ChangedSinceError

ABSENT: object = type("Absent", (), {"__repr__": lambda self: "<absent>"})()
DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}\Z")
INSTANT_RE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?Z\Z")


@dataclass(frozen=True)
class Reviewer:
    """The named person whose decisions this session records."""

    name: str

    def actor(self) -> dict[str, object]:
        return {"asserted_by": self.name, "kind": "human", "runtime": {"name": RUNTIME_NAME, "version": __version__}}


def engram_fingerprint(engram: dict[str, object]) -> dict[str, object]:
    """What a reviewer's decision rests on; a change to any of these since they looked refuses the write."""
    return dict(fingerprint_items(engram))


def fingerprint_items(engram: Mapping[str, object]) -> tuple[tuple[str, object], ...]:
    """`engram_fingerprint(engram).items()` as a tuple, built directly (the queue builds one per draft)."""
    get = engram.get
    temporal = get("temporal")
    if not isinstance(temporal, dict):
        temporal = {}
    return (
        ("statement", get("statement")),
        ("status", get("status")),
        ("commitment", get("commitment")),
        ("scope", get("scope")),
        ("valid_from", temporal.get("valid_from")),
        ("valid_until", temporal.get("valid_until")),
        # shown beside the statement in the draft's detail: a decision rests on them too
        ("type", get("type")),
        ("domain", get("domain")),
        ("rationale", get("rationale")),
        ("tags", _frozen(get("tags"))),
    )


def _frozen(value: object) -> object:
    """A list as a tuple (a fingerprint is compared and hashed; the value itself is never written from it)."""
    return tuple(_frozen(v) for v in value) if isinstance(value, list) else value


def tension_fingerprint(record: dict[str, object]) -> dict[str, object]:
    """What a decision on a tension rests on: its state, and the pair and texts its detail shows (PLUR rewriting the
    record's copy of a statement, or its reason, since the reviewer looked refuses the write)."""
    get = record.get
    return {
        "status": get("status", "detected"),
        "resolved_by": get("resolved_by"),
        "engram_a": get("engram_a"),
        "engram_b": get("engram_b"),
        "statement_a": get("statement_a"),
        "statement_b": get("statement_b"),
        "reason": get("reason"),
    }


def make_event(
    kind: str, engram_id: str, now: datetime, data: Mapping[str, object], reviewer: Reviewer
) -> dict[str, object]:
    return {
        "event": kind,
        "engram_id": engram_id,
        "timestamp": iso_ms(now),
        "data": dict(data),
        "actor": reviewer.actor(),
    }


# -- patches ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Patch:
    """Top-level fields of one record, before and after an action (ABSENT for a missing key)."""

    file: Literal["engrams", "tensions"]
    key: str
    changes: tuple[tuple[str, object, object], ...]

    @staticmethod
    def between(
        file: Literal["engrams", "tensions"], key: str, before: dict[str, object], after: dict[str, object]
    ) -> Patch:
        fields = [k for k in before if k not in after or before[k] != after[k]]
        fields += [k for k in after if k not in before]
        return Patch(file, key, tuple((k, before.get(k, ABSENT), after.get(k, ABSENT)) for k in fields))

    def reversed(self) -> Patch:
        return Patch(self.file, self.key, tuple((k, new, old) for k, old, new in self.changes))

    def apply(self, record: dict[str, object]) -> dict[str, object]:
        """Apply to `record`; ChangedSinceError when a field is not at its `before` value."""
        moved = [k for k, old, _ in self.changes if record.get(k, ABSENT) != old]
        if moved:
            raise ChangedSinceError(self.key, moved)
        for k, _, new in self.changes:
            if new is ABSENT:
                record.pop(k, None)
            else:
                record[k] = new
        return record

    def fields(self) -> list[str]:
        return [k for k, _, _ in self.changes]


@dataclass
class Operation:
    """One undoable human action: its patches in the order they were applied."""

    action: str
    label: str
    patches: list[Patch] = field(default_factory=list)
    # each record's fingerprint as this operation's last write left it ("engrams/ENG-1"): an undo or redo refuses
    # when the text or state on disk is no longer what the action (or the last undo/redo of it) left
    prints: dict[str, dict[str, object]] = field(default_factory=dict)


# -- engram actions --------------------------------------------------------------------------------------------


def _review(state: str, reviewer: Reviewer, now: datetime, **extra: object) -> dict[str, object]:
    record: dict[str, object] = {"state": state, "by": reviewer.name, "at": iso_ms(now)}
    record.update({k: v for k, v in extra.items() if v not in (None, "")})
    return record


def _decide(engram: dict[str, object], decision: dict[str, object]) -> None:
    """`review` is the latest decision; once there is more than one, all of them are kept in `reviews` (a set that
    the team merge unions), so a later decision never erases an earlier one from the engram."""
    previous = engram.get("review")
    if isinstance(previous, dict) and previous != decision:
        kept = engram.get("reviews")
        decisions = [d for d in kept if isinstance(d, dict)] if isinstance(kept, list) else []
        for item in (previous, decision):
            if item not in decisions:
                decisions.append(item)
        engram["reviews"] = decisions
    engram["review"] = decision


def approve(
    engram: dict[str, object], level: str, note: str, reviewer: Reviewer, now: datetime, locked_reason: str = ""
) -> tuple[dict[str, object], list[dict[str, object]]]:
    if level not in LADDER:
        raise ActionRefused(f"{level!r} is not a commitment level ({', '.join(LADDER)})")
    if engram.get("commitment") != "draft":
        raise ActionRefused(f"{engram.get('id')} is not a draft (commitment: {engram.get('commitment')})")
    if engram.get("status") != "active":
        raise ActionRefused(f"{engram.get('id')} is {engram.get('status')}, not active; approving it changes nothing")
    engram["commitment"] = level
    if level == "locked":
        engram["locked_at"] = iso_ms(now)
        engram["locked_reason"] = locked_reason or note or f"approved as locked by {reviewer.name}"
    engram["updated_at"] = iso_ms(now)
    _decide(engram, _review("approved", reviewer, now, level=level, note=note))
    data = {"action": "approve", "field": "commitment", "from": "draft", "to": level}
    if note:
        data["note"] = note
    return engram, [make_event("engram_updated", str(engram["id"]), now, data, reviewer)]


def reject(
    engram: dict[str, object], reason: str, reviewer: Reviewer, now: datetime
) -> tuple[dict[str, object], list[dict[str, object]]]:
    reason = reason.strip()
    if not reason:
        raise ActionRefused("a rejection needs a reason")
    if engram.get("status") == "retired":
        raise ActionRefused(f"{engram.get('id')} is already retired")
    engram["status"] = "retired"
    if not engram.get("rationale"):
        engram["rationale"] = f"Retired: rejected in review: {reason}"
    engram["updated_at"] = iso_ms(now)
    _decide(engram, _review("rejected", reviewer, now, reason=reason))
    data = {
        "action": "reject",
        "reason": reason,
        "content_hash": engram.get("content_hash"),
        "statement": engram.get("statement"),
    }
    return engram, [make_event("engram_retired", str(engram["id"]), now, data, reviewer)]


def edit_statement(
    engram: dict[str, object], statement: str, reviewer: Reviewer, now: datetime
) -> tuple[dict[str, object], list[dict[str, object]]]:
    new = statement.strip(JS_SPACE)  # what the reviewer typed, tabs and double spaces included
    if not new:
        raise ActionRefused("the statement cannot be empty")
    old = engram.get("statement")
    if new == old:
        raise ActionRefused("the statement is unchanged")
    engram["statement"] = new
    engram["content_hash"] = content_hash(new)
    summary = generate_summary(new)
    if summary is not None:
        engram["summary"] = summary
    else:
        engram.pop("summary", None)
    version = engram.get("engram_version")
    engram["engram_version"] = (version if isinstance(version, int) and not isinstance(version, bool) else 1) + 1
    engram["updated_at"] = iso_ms(now)
    data: dict[str, object] = {"action": "edit", "field": "statement", "from": old, "to": new}
    if isinstance(old, str) and removed_credentials(old, new):
        # history is append-only and synced to git: a secret edited out must not be copied into it. The event keeps
        # the text around the secret and the old statement's content hash (which engrams.yaml held already), so
        # the edit stays verifiable against an earlier copy without repeating the secret.
        data["from"] = redact_credentials(old)
        data["from_redacted"] = True
        data["from_content_hash"] = content_hash(old)
    return engram, [make_event("engram_updated", str(engram["id"]), now, data, reviewer)]


def check_bound(value: str | None, name: str) -> str | None:
    if value is None or value == "":
        return None
    if not (DATE_RE.match(value) or INSTANT_RE.match(value)):
        raise ActionRefused(f"{name} {value!r} must be a date (YYYY-MM-DD) or a UTC instant (YYYY-MM-DDTHH:MM:SSZ)")
    try:
        if DATE_RE.match(value):
            date.fromisoformat(value)
        else:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ActionRefused(f"{name} {value!r} is not a real date") from None
    return value


def set_validity(
    engram: dict[str, object],
    valid_from: str | None,
    valid_until: str | None,
    reviewer: Reviewer,
    now: datetime,
    action: str = "set_validity",
) -> tuple[dict[str, object], list[dict[str, object]]]:
    valid_from = check_bound(valid_from, "valid_from")
    valid_until = check_bound(valid_until, "valid_until")
    if valid_from and valid_until:
        start, end = opens_at(valid_from), closes_at(valid_until)
        if start is not None and end is not None and start > end:
            raise ActionRefused(f"valid_from {valid_from} is after valid_until {valid_until}")
    temporal = engram.get("temporal")
    old = dict(temporal) if isinstance(temporal, dict) else {}
    before = {"valid_from": old.get("valid_from"), "valid_until": old.get("valid_until")}
    after = {"valid_from": valid_from, "valid_until": valid_until}
    if before == after:
        raise ActionRefused("the validity window is unchanged")
    new = dict(old)
    if not new and (valid_from or valid_until):
        new["learned_at"] = iso_ms(now)  # PLUR quarantines a temporal block without learned_at
    for key, value in after.items():
        if value is None:
            new.pop(key, None)
        else:
            new[key] = value
    if new:
        new.setdefault("learned_at", iso_ms(now))
        engram["temporal"] = new
    else:
        engram.pop("temporal", None)
    engram["updated_at"] = iso_ms(now)
    data = {"action": action, "field": "temporal", "from": before, "to": after}
    return engram, [make_event("engram_updated", str(engram["id"]), now, data, reviewer)]


def expire_now(
    engram: dict[str, object], reviewer: Reviewer, now: datetime
) -> tuple[dict[str, object], list[dict[str, object]]]:
    """End the validity window at this second; refused for an engram whose window has already closed."""
    ends = EngramView(engram).expire_now_window(now)
    if ends is None:
        raise ActionRefused(f"{engram.get('id')} has already expired (valid until {Window.of(engram).valid_until})")
    return set_validity(engram, ends[0], ends[1], reviewer, now, "expire_now")


def retire_loser(
    engram: dict[str, object], tension_id: str, winner: str, reviewer: Reviewer, now: datetime
) -> tuple[dict[str, object], list[dict[str, object]]]:
    reason = f"tension {tension_id} resolved in favor of {winner}"
    engram["status"] = "retired"
    if not engram.get("rationale"):
        engram["rationale"] = f"Retired: {reason}"
    engram["updated_at"] = iso_ms(now)
    data = {"reason": reason, "action": "resolve_tension", "tension_id": tension_id, "winner": winner}
    return engram, [make_event("engram_retired", str(engram["id"]), now, data, reviewer)]


def day_before(value: str) -> str:
    return (date.fromisoformat(value) - timedelta(days=1)).isoformat()


# -- tension actions -------------------------------------------------------------------------------------------


def tension_event(
    action: str, record: dict[str, object], reviewer: Reviewer, now: datetime, **extra: object
) -> dict[str, object]:
    data: dict[str, object] = {
        "action": action,
        "tension_id": record["id"],
        "engram_b": record.get("engram_b"),
        "from": record.get("status", "detected"),
    }
    data.update({k: v for k, v in extra.items() if v is not None})
    return make_event("tension_reviewed", str(record.get("engram_a")), now, data, reviewer)


def confirm_tension(record: dict[str, object]) -> dict[str, object]:
    if record.get("status", "detected") == "confirmed":
        raise ActionRefused(f"{record['id']} is already confirmed; confirming it again changes nothing")
    if record.get("status", "detected") in ("resolved", "dismissed"):
        raise ActionRefused(f"{record['id']} is {record.get('status')}; only an open tension can be confirmed")
    record["status"] = "confirmed"
    return record


def dismiss_tension(record: dict[str, object]) -> dict[str, object]:
    if record.get("status", "detected") in ("resolved", "dismissed"):
        raise ActionRefused(f"{record['id']} is already {record.get('status')}; dismissing it changes nothing")
    record["status"] = "dismissed"
    return record


def resolve_tension(record: dict[str, object], winner: str, now: datetime) -> dict[str, object]:
    if record.get("status", "detected") in ("resolved", "dismissed"):
        raise ActionRefused(f"{record['id']} is {record.get('status')}; it cannot be resolved")
    if winner not in (record.get("engram_a"), record.get("engram_b")):
        raise ActionRefused(f"{winner} is not one of the two engrams of {record['id']}")
    record["status"] = "resolved"
    record["resolved_by"] = winner
    record["resolved_at"] = iso_ms(now)
    return record
