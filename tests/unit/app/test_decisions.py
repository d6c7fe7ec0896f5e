"""A decision acts on what was shown, changes something, and names a person (no Qt, no Node)."""

from __future__ import annotations

import pytest

from plur_desk.app.review.reviewer import InvalidReviewer, check_reviewer, note_reviewer_change, reviewer_problem
from plur_desk.app.review.session import ReviewSession
from plur_desk.app.settings import Settings, SettingsStore
from plur_desk.domain.commands import (
    ApproveDrafts,
    ConfirmTension,
    DismissTension,
    EditStatement,
    ExpireNow,
    RejectDrafts,
    ResolveTension,
    SetValidity,
    SplitInTime,
)
from plur_desk.domain.review import Reviewer
from plur_desk.domain.seen import Seen
from plur_desk.infra.clock import FixedClock
from plur_desk.infra.errors import ActionRefused, ChangedSinceError

from support.sessions import NOW, rewrite_statement
from support.sessions import events as _events
from support.sessions import on_disk as _disk


def _files(session: ReviewSession) -> dict[str, bytes]:
    root = session.store.root
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_decision_on_text_that_changed_after_it_was_shown_is_refused(session):
    shown = session.writes.seen(["ENG-2026-11-01-001"])  # what the reviewer looked at
    path = session.store.root / "engrams.yaml"
    path.write_text(path.read_text().replace("Statement number 1\n", "Statement number 1, unless on Fridays\n"))
    session.reload_if_changed()  # the session now holds the new text; the decision still carries the old one
    before = _files(session)
    with pytest.raises(ChangedSinceError, match="changed since you looked"):
        session.execute(ApproveDrafts(tuple(shown)))
    assert _files(session) == before
    session.execute(
        ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"])))
    )  # on the text as it is now, it goes through
    assert _disk(session, "ENG-2026-11-01-001")["commitment"] == "decided"


def test_the_fingerprint_carried_is_what_is_compared(session):
    forged = Seen("engram", "ENG-2026-11-01-001", (("statement", "a text nobody was shown"),))
    with pytest.raises(ChangedSinceError):
        session.execute(ApproveDrafts((forged,)))
    assert _events(session) == []


def test_a_tension_decision_refuses_when_a_side_changed_since_it_was_shown(session):
    shown = session.writes.seen_tension("T-2026-1201-001")
    path = session.store.root / "engrams.yaml"
    path.write_text(path.read_text().replace("Statement number 5\n", "Statement number 5 (rewritten)\n"))
    session.reload_if_changed()
    before = _files(session)
    with pytest.raises(ChangedSinceError):
        session.execute(ResolveTension(shown, "ENG-2026-11-06-001"))
    with pytest.raises(ChangedSinceError):
        session.execute(SplitInTime(shown, "2026-11-06"))
    assert _files(session) == before  # refused before the first write: not even a rollback event


@pytest.mark.parametrize("decide", [ConfirmTension, DismissTension])
@pytest.mark.parametrize("read_again", [False, True])
@pytest.mark.parametrize("side", ["ENG-2026-11-05-001", "ENG-2026-11-06-001"])
def test_confirming_or_dismissing_is_about_both_sides_as_shown(session, decide, read_again, side):
    """The pair beside the tension is what the reviewer judged: an agent's rewrite of either side since (whether the
    session has read it yet or not) refuses the decision. Dismissing told PLUR never to raise the pair again."""
    shown = session.writes.seen_tension("T-2026-1201-001")
    rewrite_statement(session.store.root, side, "Rewritten by an agent")
    if read_again:
        session.reload_if_changed()
    before = _files(session)
    with pytest.raises(ChangedSinceError, match=f"{side} changed since you looked \\(statement"):
        session.execute(decide(shown))
    assert _files(session) == before


@pytest.mark.parametrize("decide", [ConfirmTension, DismissTension])
def test_confirming_or_dismissing_needs_both_sides_shown_and_ignores_other_engrams(session, decide):
    record = session.writes.seen_tension("T-2026-1201-001")
    with pytest.raises(ActionRefused, match="was not shown"):
        session.execute(decide(Seen("tension", record.id, record.fingerprint)))  # the tension without its engrams
    rewrite_statement(session.store.root, "ENG-2026-11-01-001", "Another engram, rewritten")
    session.execute(decide(record))
    assert [e["data"]["action"] for e in _events(session)] == [decide.event]


def test_a_resolution_needs_both_sides_as_shown(session):
    record = session.writes.seen_tension("T-2026-1201-001")
    blind = Seen("tension", record.id, record.fingerprint)  # the tension without its engrams
    with pytest.raises(ActionRefused, match="was not shown"):
        session.execute(ResolveTension(blind, "ENG-2026-11-06-001"))
    assert _events(session) == []


@pytest.mark.parametrize("action", ["confirm", "dismiss"])
def test_no_op_tension_decisions_are_refused_and_write_nothing(session, action):
    command = {"confirm": ConfirmTension, "dismiss": DismissTension}[action]
    session.execute(command(session.writes.seen_tension("T-2026-1201-001")))
    before = _files(session)
    with pytest.raises(ActionRefused, match="already"):
        session.execute(command(session.writes.seen_tension("T-2026-1201-001")))
    assert _files(session) == before
    assert len(_events(session)) == 1


def test_no_op_engram_decisions_are_refused(session):
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"]))))
    with pytest.raises(ActionRefused, match="not a draft"):
        session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"]))))
    session.execute(RejectDrafts(tuple(session.writes.seen(["ENG-2026-11-02-001"])), "wrong"))
    with pytest.raises(ActionRefused, match="already retired"):
        session.execute(RejectDrafts(tuple(session.writes.seen(["ENG-2026-11-02-001"])), "wrong"))
    with pytest.raises(ActionRefused, match="unchanged"):
        session.execute(EditStatement(session.writes.seen(["ENG-2026-11-03-001"])[0], "Statement number 3"))
    session.execute(SetValidity(tuple(session.writes.seen(["ENG-2026-11-04-001"])), "2026-01-01", "2026-06-30"))
    with pytest.raises(ActionRefused, match="unchanged"):
        session.execute(SetValidity(tuple(session.writes.seen(["ENG-2026-11-04-001"])), "2026-01-01", "2026-06-30"))
    with pytest.raises(ActionRefused, match="already expired"):
        session.execute(ExpireNow(tuple(session.writes.seen(["ENG-2026-11-04-001"]))))
    assert [e["data"]["action"] for e in _events(session)] == ["approve", "reject", "set_validity"]


@pytest.mark.parametrize(
    "name",
    [
        "",
        "   ",
        "\n",
        "\t",
        "Ada\nLovelace",
        "agent:claude",
        "Agent:Claude-Code",
        " agent:codex ",
        "unidentified",
        "plur-core",
        "model:gpt-5",
        "tool:importer",
        "x" * 200,
    ],
)
def test_names_that_do_not_name_a_person_are_refused(session, name):
    assert reviewer_problem(name)
    with pytest.raises(InvalidReviewer):
        check_reviewer(name)
    with pytest.raises(InvalidReviewer):
        ReviewSession(session.store, Reviewer(name), FixedClock(NOW))


def test_a_person_s_name_is_kept_without_surrounding_blanks(session):
    assert reviewer_problem("Ada Lovelace") is None and reviewer_problem("José Núñez-O'Brien") is None
    assert ReviewSession(session.store, Reviewer("  Ada Lovelace "), FixedClock(NOW)).reviewer.name == "Ada Lovelace"


def test_a_change_of_reviewer_is_noted_once(tmp_path):
    store = SettingsStore(tmp_path / "settings.yaml")
    settings = Settings(reviewer_name="Grace")
    assert note_reviewer_change(store, settings, "Grace") == ""  # first run: nothing to compare with
    assert note_reviewer_change(store, settings, "Grace") == ""
    note = note_reviewer_change(store, settings, "Mallory")
    assert "Mallory" in note and "Grace" in note
    assert note_reviewer_change(store, store.load(), "Mallory") == ""  # shown once; remembered in the file
    assert store.load().reviewer_name == "Grace"  # the default did not change


def test_a_read_only_command_s_session_decides_nothing(session):
    from plur_desk.app.review.reviewer import READER
    from plur_desk.infra.errors import ReadOnlyStore

    reader = ReviewSession(session.store, Reviewer(READER), FixedClock(NOW))
    before = _files(session)
    with pytest.raises(ReadOnlyStore, match="reading only"):
        reader.execute(ApproveDrafts(tuple(reader.writes.seen(["ENG-2026-11-01-001"]))))
    with pytest.raises(ReadOnlyStore, match="reading only"):
        reader.execute(ConfirmTension(session.writes.seen_tension("T-2026-1201-001")))
    assert _files(session) == before


def test_undo_refuses_when_an_agent_changed_the_text_since_the_action(session):
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"]))))
    path = session.store.root / "engrams.yaml"
    path.write_text(path.read_text().replace("Statement number 1\n", "Statement number 1, said an agent later\n"))
    before = _files(session)
    with pytest.raises(ChangedSinceError):
        session.undo()  # re-drafting a text the reviewer never saw would be a human event on unseen text
    assert _files(session) == before
    assert session.undo_history.can_undo


def test_undo_and_redo_check_what_the_previous_step_left(session):
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"]))))
    session.undo()
    assert _disk(session, "ENG-2026-11-01-001")["commitment"] == "draft"
    path = session.store.root / "engrams.yaml"
    path.write_text(path.read_text().replace("Statement number 1\n", "Statement number 1, edited after the undo\n"))
    before = _files(session)
    with pytest.raises(ChangedSinceError):
        session.redo()  # the redo would approve a text nobody approved
    assert _files(session) == before


def test_settling_duplicates_without_approving_checks_the_kept_engrams_text(session):
    shown = {"ENG-2026-11-04-001": "a text the pane showed", "ENG-2026-11-02-001": "Statement number 2"}
    before = _files(session)
    with pytest.raises(ChangedSinceError):
        session.settle_duplicates("ENG-2026-11-04-001", ["ENG-2026-11-02-001"], False, shown=shown)
    assert _files(session) == before


def test_resolving_checks_the_winner_on_disk_not_only_in_the_session(session):
    """Only the loser is edited; the winner is what the loser is retired in favour of. A rewrite of the winner
    the session has not read yet (no reload) refuses the resolution: the reviewer never saw that winner."""
    shown = session.writes.seen_tension("T-2026-1201-001")
    rewrite_statement(session.store.root, "ENG-2026-11-06-001", "Rewritten by an agent, not read yet")
    before = _files(session)
    with pytest.raises(ChangedSinceError, match="ENG-2026-11-06-001 changed since you looked \\(statement"):
        session.execute(ResolveTension(shown, "ENG-2026-11-06-001"))
    assert _files(session) == before


def test_settling_duplicates_checks_the_kept_engram_on_disk_not_only_in_the_session(session):
    """Kept without approving (it is approved already), the others rejected as duplicates of its text as shown:
    a rewrite of it on disk the session has not read yet refuses the settlement."""
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-04-001"]))))
    shown = {"ENG-2026-11-04-001": "Statement number 4", "ENG-2026-11-02-001": "Statement number 2"}
    rewrite_statement(session.store.root, "ENG-2026-11-04-001", "Rewritten by an agent, not read yet")
    before = _files(session)
    with pytest.raises(ChangedSinceError, match="ENG-2026-11-04-001 changed since you looked \\(statement"):
        session.settle_duplicates("ENG-2026-11-04-001", ["ENG-2026-11-02-001"], False, shown=shown)
    assert _files(session) == before


def _approve(session, engram_id):
    return session.execute(ApproveDrafts(tuple(session.writes.seen([engram_id]))))


def test_an_undo_takes_back_only_the_action_on_top_when_it_was_asked_for(session):
    """Ctrl+Z pressed when "Undo approve 1" was on top; by the time the undo runs, another action is on top: it is
    refused, not turned into an undo of an action the reviewer did not name."""
    _approve(session, "ENG-2026-11-01-001")
    intent = session.undo_intent()
    _approve(session, "ENG-2026-11-02-001")
    before = _files(session)
    with pytest.raises(ActionRefused, match="changed since you asked; nothing was undone"):
        session.undo(intent)
    assert _files(session) == before and _disk(session, "ENG-2026-11-02-001")["commitment"] == "decided"


def test_an_undo_behind_an_action_that_failed_takes_nothing_back(session):
    """A on draft 2 (its text changed: refused), Ctrl+Z at once, meaning "undo that": the undo must not take back
    the approval of draft 1 before it."""
    _approve(session, "ENG-2026-11-01-001")
    stale = tuple(session.writes.seen(["ENG-2026-11-02-001"]))
    intent = session.undo_intent(exact=False)  # pressed while the approve of draft 2 was still being written
    rewrite_statement(session.store.root, "ENG-2026-11-02-001", "Rewritten by an agent")
    with pytest.raises(ChangedSinceError):
        session.execute(ApproveDrafts(stale))
    before = _files(session)
    with pytest.raises(ActionRefused, match="was not written; nothing was undone"):
        session.undo(intent)
    assert _files(session) == before and _disk(session, "ENG-2026-11-01-001")["commitment"] == "decided"


def test_undos_asked_for_behind_written_actions_take_back_the_newest_first(session):
    _approve(session, "ENG-2026-11-01-001")
    first = session.undo_intent(exact=False)  # pressed while the approve of draft 2 was being written
    _approve(session, "ENG-2026-11-02-001")
    second = session.undo_intent(exact=False)  # pressed again while the first undo waited
    session.undo(first)
    session.undo(second)
    assert [_disk(session, f"ENG-2026-11-0{i}-001")["commitment"] for i in (1, 2)] == ["draft", "draft"]
    redo = session.undo_intent(redo=True)
    session.redo(redo)
    assert _disk(session, "ENG-2026-11-01-001")["commitment"] == "decided"


@pytest.mark.parametrize("field", ["reason", "statement_a"])
def test_a_tension_decision_refuses_when_the_record_text_it_showed_changed(session, field):
    """The detail shows the record's own copy of both statements and the judge's reason: PLUR rewriting either
    since the reviewer looked refuses the confirm, as a change of status would."""
    shown = session.writes.seen_tension("T-2026-1201-001")
    path = session.store.root / "tensions.yaml"
    old = {"reason": "reason: conflict", "statement_a": "statement_a: Statement number 5"}[field]
    assert old in path.read_text()
    path.write_text(path.read_text().replace(old, old + " (rewritten)"))
    before = _files(session)
    with pytest.raises(ChangedSinceError, match=f"T-2026-1201-001 changed since you looked \\({field}"):
        session.execute(ConfirmTension(shown))
    assert _files(session) == before


def test_locking_an_engram_in_an_open_tension_is_asked_first(session):
    # PLUR keeps an engram in an open tension out of `locked` (0.21 CHANGELOG; PLUR-FORMAT.md §3.5): approving one
    # straight to locked is refused until the reviewer says so (the window asks), and then goes through.
    from plur_desk.infra.errors import LockedWithOpenTension
    from plur_desk.store.lists.yaml_dump import dump_tensions_document
    from plur_desk.store.lists.yaml_load import load_general

    path = session.store.root / "tensions.yaml"
    records = load_general(path.read_text())
    records.append({**records[0], "id": "T-2026-1201-002", "engram_a": "ENG-2026-11-01-001", "status": "confirmed"})
    records.append({**records[0], "id": "T-2026-1201-003", "engram_a": "ENG-2026-11-02-001", "status": "dismissed"})
    path.write_text(dump_tensions_document(records))
    session.reload_if_changed()
    before = _files(session)
    with pytest.raises(LockedWithOpenTension, match="ENG-2026-11-01-001 is in confirmed tension T-2026-1201-002"):
        session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"])), level="locked"))
    assert _files(session) == before
    session.execute(
        ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-02-001"])), level="locked")
    )  # dismissed: closed
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-03-001"])), level="decided"))  # not to locked
    session.execute(
        ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"])), "locked", "", despite_open_tension=True)
    )
    assert [_disk(session, f"ENG-2026-11-0{i}-001")["commitment"] for i in (1, 2, 3)] == ["locked", "locked", "decided"]


def test_an_unchanged_nan_deep_in_an_engram_is_neither_signed_as_set_nor_blocks_the_undo(tmp_path):
    """YAML's .nan is one shared float, equal to itself only as that object: copies made with new float objects
    compared unequal, so approving an engram with structured_data: {score: .nan} signed and journaled
    structured_data as set (to null), and its undo was refused as 'changed since you looked'."""
    import json
    import math

    from plur_desk.app.review.bootstrap import open_session
    from plur_desk.store.lists.yaml_dump import dump_engrams_document, dump_tensions_document

    from support.sessions import engram

    root = tmp_path / "store"
    root.mkdir()
    engrams = [engram(i) for i in range(1, 3)]
    engrams[0]["structured_data"] = {"score": math.nan, "runs": [1.5, math.nan]}
    (root / "engrams.yaml").write_text(dump_engrams_document({"engrams": engrams}))
    (root / "tensions.yaml").write_text(dump_tensions_document([]))
    session = open_session(root, "Ada Reviewer", clock=FixedClock(NOW), use_cache=False)
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"]))))
    lines = [
        json.loads(line) for p in sorted((root / "history").glob("*.jsonl")) for line in p.read_text().splitlines()
    ]
    (approval,) = [e for e in lines if e.get("engram_id") == "ENG-2026-11-01-001" and "decided" in e.get("data", {})]
    assert "structured_data" not in approval["data"]["decided"]["sets"]
    session.undo()
    assert _disk(session, "ENG-2026-11-01-001")["commitment"] == "draft"
