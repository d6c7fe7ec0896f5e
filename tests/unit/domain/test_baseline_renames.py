"""The watched baseline follows PLUR 0.21's renames of a repeated id (domain/agents/baseline_renames.py): an engram PLUR
renamed after its baseline line was signed is neither "gone" nor a new engram nobody decided on."""

from __future__ import annotations

from plur_desk.domain.agents.agent_changes import Baseline, detect, engram_values
from plur_desk.domain.agents.baseline_renames import follow_renames
from plur_desk.domain.plur_rules.rekey import Renames

AT = "2026-12-01T00:00:00.000Z"
RENAMED_AT = "2026-12-02T00:00:00.000Z"
X = "ENG-2026-12-01-001"
NEW = f"{X}-D0a1b2c3d"


def engram(ident: str, statement: str, **extra: object) -> dict[str, object]:
    record: dict[str, object] = {
        "id": ident,
        "statement": statement,
        "commitment": "decided",
        "status": "active",
        "scope": "project:x",
        "type": "behavioral",
        "content_hash": "h-" + statement,
        "sources": [{"session_id": "s-1"}],
    }
    record.update(extra)
    return record


WATCHED = engram(X, "Deploys freeze on Fridays")
TEAMMATE = engram(X, "A teammate's engram minted under the same id")


def changes(records: list[dict[str, object]], trail: Renames, *, signed: str = AT) -> dict[str, str]:
    baseline = Baseline(started=AT, started_by="Ada")
    baseline.take_line(signed, {X: engram_values(WATCHED)}, {})
    store = {str(r["id"]): r for r in records}
    asked: list[bool] = []

    def read_trail() -> Renames:
        asked.append(True)
        return trail

    followed = follow_renames(baseline, store, read_trail)
    assert baseline.engrams == {X: engram_values(WATCHED)}  # the baseline read is not changed
    found = detect(followed, store, {}, lambda _i: [], lambda _e: False)
    return {c.id: c.kind for c in found}


def test_a_watched_engram_renamed_behind_a_teammates_copy_is_not_new() -> None:
    trail = Renames([(X, NEW, RENAMED_AT)])
    # The teammate's copy came first, so 0.21 renamed the watched engram; the teammate's is what is new here.
    assert changes([TEAMMATE, {**WATCHED, "id": NEW}], trail) == {X: "created_active"}
    assert changes([TEAMMATE, {**WATCHED, "id": NEW, "status": "retired"}], trail) == {
        X: "created_active",
        NEW: "retired",
    }


def test_a_watched_engram_renamed_and_gone_from_its_old_id_is_neither_gone_nor_new() -> None:
    trail = Renames([(X, NEW, RENAMED_AT)])
    assert changes([{**WATCHED, "id": NEW}], trail) == {}
    assert changes([{**WATCHED, "id": NEW, "statement": "Deploys freeze on Thursdays"}], trail) == {NEW: "rewritten"}


def test_nothing_is_carried_when_the_watched_copy_kept_its_id_or_was_signed_after_the_rename() -> None:
    trail = Renames([(X, NEW, RENAMED_AT)])
    assert changes([WATCHED, {**TEAMMATE, "id": NEW}], trail) == {NEW: "created_active"}
    # A line signed after the rename is about whatever was under X then: it is not carried to the renamed copy.
    signed_later = "2026-12-03T00:00:00.000Z"
    assert changes([TEAMMATE, {**WATCHED, "id": NEW}], trail, signed=signed_later) == {
        X: "rewritten",
        NEW: "created_active",
    }


def test_without_a_rename_in_history_nothing_is_carried() -> None:
    assert changes([{**WATCHED, "id": NEW}], Renames()) == {X: "other", NEW: "created_active"}


def test_the_same_text_minted_on_two_machines_is_told_apart_by_the_watched_fields() -> None:
    trail = Renames([(X, NEW, RENAMED_AT)])
    twin = {**WATCHED, "commitment": "leaning"}  # a teammate learned the same words; the watched one was decided
    assert changes([twin, {**WATCHED, "id": NEW}], trail) == {X: "created_active"}
