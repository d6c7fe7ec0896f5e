"""Commands and EngramView: pure values, pure rules (no store, no clock)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from plur_desk.domain.changes import ChangeSet
from plur_desk.domain.commands import (
    ApproveDrafts,
    Context,
    RecordTension,
    ResolveTension,
    SettleDuplicates,
    SplitInTime,
    Supersede,
)
from plur_desk.domain.engram_view import EngramView, split_order
from plur_desk.domain.review import Reviewer
from plur_desk.domain.seen import seen_engram, seen_tension
from plur_desk.infra.errors import ActionRefused, ChangedSinceError

NOW = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
CTX = Context(Reviewer("Ada Reviewer"), NOW)


def _engram(ident: str, **extra: object) -> dict[str, object]:
    return {
        "id": ident,
        "statement": f"statement of {ident}",
        "type": "behavioral",
        "scope": "global",
        "status": "active",
        "commitment": "draft",
        **extra,
    }


def _lookup(*engrams: dict[str, object]):  # type: ignore[no-untyped-def]
    by_id = {str(e["id"]): EngramView(e) for e in engrams}
    return by_id.get


def test_a_command_is_a_frozen_value_and_its_edit_is_pure() -> None:
    engram = _engram("ENG-2026-11-01-001")
    command = ApproveDrafts((seen_engram(engram),), "decided", "looks right")
    with pytest.raises(dataclasses.FrozenInstanceError):
        command.level = "locked"  # type: ignore[misc]
    new, events = command.apply(dict(engram), CTX)
    again, events_again = command.apply(dict(engram), CTX)
    assert new == again and events == events_again  # same inputs, same record and event: no clock, no I/O
    assert new["commitment"] == "decided" and engram["commitment"] == "draft"
    assert events[0]["actor"]["asserted_by"] == "Ada Reviewer"  # type: ignore[index]
    assert events[0]["data"] == {
        "action": "approve",
        "field": "commitment",
        "from": "draft",
        "to": "decided",
        "note": "looks right",
    }
    assert command.label() == "approve ENG-2026-11-01-001 as decided"


def test_view_keeps_unknown_keys_and_answers_the_rules_once() -> None:
    engram = _engram(
        "ENG-2026-11-01-001",
        relations={"superseded_by": ["ENG-2026-11-02-001"]},
        temporal={"learned_at": "2026-01-01T00:00:00.000Z", "valid_until": "2026-11-30"},
        x_future_field={"kept": True},
    )
    view = EngramView(engram)
    assert view.superseded and view.superseded_by == ("ENG-2026-11-02-001",)
    assert view.outside_window(NOW) == "expired" and view.expire_now_window(NOW) is None
    assert view.record["x_future_field"] == {"kept": True}
    with pytest.raises(TypeError):
        view.record["status"] = "retired"  # type: ignore[index]
    open_ended = EngramView(_engram("ENG-2026-11-03-001"))
    assert not open_ended.superseded and open_ended.outside_window(NOW) is None
    assert open_ended.expire_now_window(NOW) == (None, "2026-12-01T12:00:00Z")


def test_split_order_is_by_creation_then_id() -> None:
    old = EngramView(_engram("ENG-2026-11-05-001", created_at="2026-01-01T00:00:00.000Z"))
    new = EngramView(_engram("ENG-2026-11-01-001", created_at="2026-06-01T00:00:00.000Z"))
    assert split_order(new, old) == split_order(old, new) == ("ENG-2026-11-05-001", "ENG-2026-11-01-001")


def _tension(a: dict[str, object], b: dict[str, object]) -> dict[str, object]:
    return {"id": "T-2026-1201-001", "engram_a": a["id"], "engram_b": b["id"], "status": "detected"}


def test_split_in_time_ends_the_earlier_and_starts_the_later() -> None:
    a = _engram("ENG-2026-11-01-001", created_at="2026-06-01T00:00:00.000Z")
    b = _engram("ENG-2026-11-02-001", created_at="2026-01-01T00:00:00.000Z")
    record = _tension(a, b)
    command = SplitInTime(seen_tension(record, [a, b]), "2026-09-01")
    steps = command.engram_steps(record, _lookup(a, b), CTX)
    assert steps.fields["earlier"] == "ENG-2026-11-02-001" and steps.fields["later"] == "ENG-2026-11-01-001"
    edited = {key: apply(dict(a if key == a["id"] else b))[0] for key, apply in steps.edits}
    assert edited["ENG-2026-11-02-001"]["temporal"]["valid_until"] == "2026-08-31"  # type: ignore[index]
    assert edited["ENG-2026-11-01-001"]["temporal"]["valid_from"] == "2026-09-01"  # type: ignore[index]
    with pytest.raises(ActionRefused, match="takes a date"):
        SplitInTime(command.seen, "2026-09-01T00:00:00Z").validate()


def test_resolve_refuses_a_retired_winner_and_a_stranger() -> None:
    a, b = _engram("ENG-2026-11-01-001", status="retired"), _engram("ENG-2026-11-02-001")
    record = _tension(a, b)
    seen = seen_tension(record, [a, b])
    with pytest.raises(ActionRefused, match="already retired"):
        ResolveTension(seen, str(a["id"])).engram_steps(record, _lookup(a, b), CTX)
    with pytest.raises(ActionRefused, match="not one of the two"):
        ResolveTension(seen, "ENG-2026-11-09-001").engram_steps(record, _lookup(a, b), CTX)
    steps = ResolveTension(seen, str(b["id"])).engram_steps(record, _lookup(a, b), CTX)
    assert [k for k, _ in steps.edits] == [a["id"]] and steps.shown == (a["id"], b["id"])
    new_record, events = ResolveTension(seen, str(b["id"])).record_edit(CTX, steps.fields)(dict(record))
    assert new_record["status"] == "resolved" and events[0]["data"]["to"] == "resolved"  # type: ignore[index]


def test_settle_duplicates_acts_only_on_the_statement_shown() -> None:
    a, b = _engram("ENG-2026-11-01-001"), _engram("ENG-2026-11-02-001")
    seen = (seen_engram(a), seen_engram(b))
    shown = ((str(a["id"]), str(a["statement"])), (str(b["id"]), "an older text"))
    with pytest.raises(ChangedSinceError):
        SettleDuplicates(str(a["id"]), seen, True, shown=shown).check(_lookup(a, b))
    command = SettleDuplicates(str(a["id"]), seen, True)
    assert command.label() == "keep ENG-2026-11-01-001, reject 1 as its duplicates"
    assert command.apply(dict(b), CTX)[0]["review"]["duplicate_of"] == a["id"]  # type: ignore[index]


def test_supersede_and_record_tension() -> None:
    a, b = _engram("ENG-2026-11-01-001"), _engram("ENG-2026-11-02-001")
    command = Supersede((seen_engram(a), seen_engram(b)), str(b["id"]), str(a["id"]))
    newer = command.apply(dict(b), CTX)[0]
    assert EngramView(newer).relation("supersedes") == [a["id"]] and not EngramView(newer).superseded
    with pytest.raises(ActionRefused, match="already supersedes"):
        command.check(_lookup(a, newer))
    record, events = RecordTension(str(a["id"]), str(b["id"]), 0.9, "r").make([], EngramView(a), EngramView(b), CTX)
    assert record["status"] == "detected" and events[0]["event"] == "contradiction_detected"
    with pytest.raises(ActionRefused, match="already recorded"):
        RecordTension(str(b["id"]), str(a["id"]), 0.9, "r").make([record], EngramView(b), EngramView(a), CTX)


def test_change_set_is_frozen_and_merges_into_a_new_one() -> None:
    first = ChangeSet(engrams=frozenset({"a"}), events=1, message="approve a")
    both = first.merge(ChangeSet(tensions=frozenset({"t"}), events=2, warnings=("w",)))
    assert both == ChangeSet(frozenset({"a"}), frozenset({"t"}), 3, False, ("w",), "approve a")
    assert first.events == 1
