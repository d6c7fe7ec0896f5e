"""Agent changes as a pure function of (baseline, store, history): each difference classified once, and what a
verified human decision explains left out."""

from __future__ import annotations

import pytest

from plur_desk.domain.agents.agent_changes import Baseline, detect, engram_values, tension_values
from plur_desk.domain.agents.baseline_lines import BadLine, chunks, make_line, read_line
from plur_desk.domain.review import Reviewer

from support.moments import NOW

AT = "2026-12-01T00:00:00.000Z"


def engram(ident, **extra):
    record = {
        "id": ident,
        "statement": f"statement of {ident}",
        "commitment": "decided",
        "status": "active",
        "scope": "project:x",
        "type": "behavioral",
        "content_hash": "h" + ident,
        "attribution": {"asserted_by": "agent:a"},
        "sources": [{"session_id": "s-1"}],
    }
    record.update(extra)
    return record


def watched(engrams, tensions=()):
    baseline = Baseline(started=AT, started_by="Ada")
    baseline.take_line(AT, {e["id"]: engram_values(e) for e in engrams}, {t["id"]: tension_values(t) for t in tensions})
    return baseline


def run(baseline, engrams, tensions=(), events=None, human=lambda e: False):
    found = detect(
        baseline,
        {e["id"]: e for e in engrams},
        {t["id"]: t for t in tensions},
        lambda i: (events or {}).get(i, []),
        human,
    )
    return {c.id: c for c in found}


@pytest.mark.parametrize(
    ("fields", "kind"),
    [
        ({"commitment": "draft"}, "promoted"),  # the baseline holds the draft, the store the promotion (swapped below)
        ({"statement": "other words"}, "rewritten"),
        ({"status": "retired"}, "retired"),
        ({"temporal": {"valid_until": "2027-01-01"}}, "validity_changed"),
        ({"scope": "global"}, "rescoped"),
        ({"pinned": True}, "pinned"),
        ({"type": "procedural"}, "other"),
    ],
)
def test_each_difference_is_classified(fields, kind):
    if kind == "promoted":
        before, after = engram("E1", **fields), engram("E1")
    else:
        before, after = engram("E1"), engram("E1", **fields)
    changes = run(watched([before, engram("E2")]), [after, engram("E2")])
    assert list(changes) == ["E1"] and changes["E1"].kind == kind
    assert changes["E1"].writer == "agent:a" and changes["E1"].session == "s-1" and changes["E1"].silent


def test_a_restored_engram_and_a_new_active_one_are_listed_a_new_draft_is_not():
    baseline = watched([engram("E1", status="retired")])
    changes = run(
        baseline,
        [engram("E1"), engram("E2"), engram("E3", commitment="draft")],
        events={"E2": [{"event": "engram_created", "timestamp": "2026-12-02T00:00:00.000Z"}]},
    )
    assert {i: (c.kind, c.silent) for i, c in changes.items()} == {
        "E1": ("restored", True),
        "E2": ("created_active", False),
    }


def test_a_verified_human_decision_after_the_baseline_explains_the_difference():
    baseline = watched([engram("E1", commitment="draft")])
    approval = {"event": "engram_updated", "timestamp": "2026-12-02T00:00:00.000Z", "actor": {"kind": "human"}}
    after = engram("E1", updated_at="2026-12-02T00:00:00.000Z")
    assert run(baseline, [after], events={"E1": [approval]}, human=lambda e: e is approval) == {}
    # the same event not verified (a forged claim) explains nothing
    assert list(run(baseline, [after], events={"E1": [approval]})) == ["E1"]
    # nor does a verified one the agent wrote over afterwards
    later = engram("E1", updated_at="2026-12-03T00:00:00.000Z")
    assert list(run(baseline, [later], events={"E1": [approval]}, human=lambda e: e is approval)) == ["E1"]


def test_a_resolution_carries_its_retired_loser_and_is_listed_once():
    a, b = engram("E1"), engram("E2")
    tension = {"id": "T1", "engram_a": "E1", "engram_b": "E2", "status": "detected", "resolved_by": None}
    baseline = watched([a, b], [tension])
    resolved = dict(tension, status="resolved", resolved_by="E2")
    retire = {
        "event": "engram_retired",
        "engram_id": "E1",
        "timestamp": "2026-12-02T00:00:00.000Z",
        "data": {"reason": "tension T1 resolved in favor of E2"},
        "actor": {"asserted_by": "agent:b"},
    }
    changes = run(baseline, [engram("E1", status="retired"), b], [resolved], events={"E1": [retire]})
    assert list(changes) == ["T1"]
    change = changes["T1"]
    assert (change.kind, change.also, change.writer, change.silent) == ("tension_resolved", ("E1",), "agent:b", False)


def test_nothing_is_listed_for_a_store_that_is_not_watched():
    assert run(Baseline(), [engram("E1")]) == {}


def test_a_line_reads_back_what_it_says_packed_or_not():
    engrams = {f"E{i}": engram_values(engram(f"E{i}")) for i in range(200)}
    for part, tensions in chunks(engrams, {"T1": ("detected", None)}):
        extras = {i: {"write_count": 2, "rationale": None} for i in part}
        line = make_line("watching", part, tensions, Reviewer("Ada"), NOW, extras=extras)
        assert read_line(line) == ("watching", part, tensions, extras)
    small = make_line("decided", {"E1": engrams["E1"]}, {}, Reviewer("Ada"), NOW)
    assert "engrams" in small["data"] and read_line(small)[1] == {"E1": engrams["E1"]}
    with pytest.raises(BadLine):
        read_line({"event": "plur_desk_baseline", "data": {"claim": "watching", "packed": "not base64!"}})


def test_restore_values_are_held_for_the_engrams_a_line_names_only():
    values = engram_values(engram("E1"))
    previous = {"event_id": "ev-1", "changed_at": "2026-11-01T00:00:00.000Z"}
    line = make_line(
        "decided", {"E1": values}, {}, Reviewer("Ada"), NOW, extras={"E1": {"previous_version_ref": previous}}
    )
    assert read_line(line)[3] == {"E1": {"previous_version_ref": previous}}  # a mapping kept as one
    assert read_line(make_line("decided", {"E1": values}, {}, Reviewer("Ada"), NOW))[3] == {}  # none held: unknown
    line["data"]["restore"] = {"E2": {"write_count": 1}}
    with pytest.raises(BadLine):
        read_line(line)  # restore values for an engram the line does not name


def test_a_line_holding_a_record_as_it_was_keeps_its_date():
    baseline = Baseline(started="2026-11-01T00:00:00.000Z")
    values = engram_values(engram("E1"))
    baseline.take_line("2026-11-01T00:00:00.000Z", {"E1": values}, {"T1": ("detected", None)})
    baseline.take_line("2026-11-05T00:00:00.000Z", {"E1": values}, {"T1": ("detected", None)})  # a revert's line
    assert baseline.engram_at["E1"] == baseline.tension_at["T1"] == "2026-11-01T00:00:00.000Z"
    assert baseline.latest == "2026-11-05T00:00:00.000Z"  # what a line appended later is checked against
    moved = (*values[:2], "retired", *values[3:])
    baseline.take_line("2026-11-06T00:00:00.000Z", {"E1": moved}, {"T1": ("dismissed", None)})
    assert baseline.engram_at["E1"] == baseline.tension_at["T1"] == "2026-11-06T00:00:00.000Z"


def test_an_undone_ratifications_line_dates_its_records_from_before_it_and_never_from_after_itself():
    from plur_desk.domain.agents.baseline_lines import since_of

    values = engram_values(engram("E1"))
    moved = (*values[:2], "retired", *values[3:])
    baseline = watched([engram("E1")])
    baseline.take_line("2026-12-02T00:00:00.000Z", {"E1": moved}, {})  # a ratification's line
    line = make_line("decided", {"E1": values}, {}, Reviewer("Ada"), NOW, since={"engrams": {"E1": AT}})
    at = str(line["timestamp"])
    assert at > AT and since_of(line, at) == {"engrams": {"E1": AT}}
    baseline.take_line(at, {"E1": values}, {}, since=since_of(line, at))
    assert baseline.engram_at["E1"] == AT  # the agent's events since AT are behind its change again
    later = make_line("decided", {"E1": values}, {}, Reviewer("Ada"), NOW, since={"engrams": {"E1": "9999"}})
    assert since_of(later, at) == {"engrams": {}}  # a date after the line itself says nothing
    assert since_of(make_line("decided", {"E1": values}, {}, Reviewer("Ada"), NOW), at) == {}
