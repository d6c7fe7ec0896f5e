"""The finder over a store, the conflicts command, and the reviewer's three answers (no Qt, no Node)."""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from plur_desk.app.conflicts.conflict_actions import not_a_conflict, record_tension, recorded_pair_keys, supersede
from plur_desk.app.conflicts.conflicts_cli import finder_for
from plur_desk.app.conflicts.finder import ConflictFinder, Vectors
from plur_desk.app.review.bootstrap import open_session
from plur_desk.app.review.session import ReviewSession
from plur_desk.cli import main
from plur_desk.domain.commands import ApproveDrafts, EditStatement, RejectDrafts
from plur_desk.domain.plur_rules.derived import content_hash
from plur_desk.infra.clock import FixedClock
from plur_desk.infra.errors import ActionRefused, ChangedSinceError
from plur_desk.store.lists.yaml_dump import dump_engrams_document
from plur_desk.store.plur_store import PlurStore

from support.moments import NOW
from support.sessions import rewrite_statement

STATEMENTS = {
    "ENG-2026-11-01-001": ("Deploys go through Caddy on the edge hosts.", "decided"),
    "ENG-2026-11-02-001": ("Deploys go through nginx on the edge hosts.", "leaning"),
    "ENG-2026-11-03-001": ("API tokens expire after 30 days.", "decided"),
    "ENG-2026-11-04-001": ("API tokens expire after 90 days.", "draft"),
    "ENG-2026-11-05-001": ("The office plants are watered on Mondays.", "decided"),
    "ENG-2026-11-06-001": ("Deploys go through Caddy, which also terminates TLS on the edge hosts.", "decided"),
}


def _engram(ident, statement, commitment):
    return {
        "id": ident,
        "version": 2,
        "status": "active",
        "type": "behavioral",
        "scope": "project:web",
        "statement": statement,
        "commitment": commitment,
        "content_hash": content_hash(statement),
        "created_at": f"{ident[4:14]}T10:00:00.000Z",
    }


@pytest.fixture
def session(tmp_path) -> ReviewSession:
    root = tmp_path / "store"
    root.mkdir()
    engrams = [_engram(i, s, c) for i, (s, c) in STATEMENTS.items()]
    (root / "engrams.yaml").write_text(dump_engrams_document({"engrams": engrams}))
    (root / "tensions.yaml").write_text("[]\n")
    return open_session(root, "Ada Reviewer", clock=FixedClock(NOW), use_cache=False, load_history=False)


def _snapshot(root):
    return {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_scan_finds_the_two_conflicts_with_evidence(session):
    result = finder_for(session).scan()
    assert {c.key for c in result.candidates} == {
        "ENG-2026-11-01-001:ENG-2026-11-02-001",
        "ENG-2026-11-03-001:ENG-2026-11-04-001",
    }  # not the refinement (…-006), not the unrelated plants (…-005)
    caddy = next(c for c in result.candidates if c.engram_a == "ENG-2026-11-01-001")
    assert (caddy.rule, caddy.kind, caddy.removed, caddy.added) == ("slot", "name", ("Caddy",), ("nginx",))
    assert caddy.similarity_source == "tokens" and 0 < caddy.similarity <= 1
    assert "Caddy → nginx" in caddy.explanation() and caddy.reason().startswith("plur_desk local detector")
    assert result.pairs_judged >= 2 and result.pairs_keyed >= result.pairs_judged


def test_check_warns_about_a_draft_and_about_an_edit_before_it_is_saved(session):
    finder = finder_for(session)
    draft = session.engram("ENG-2026-11-04-001")
    found = finder.check(draft)
    assert [(c.engram_a, c.engram_b, c.kind) for c in found] == [("ENG-2026-11-03-001", "ENG-2026-11-04-001", "number")]
    assert finder.check(draft, "API tokens expire after 30 days.") == []  # the edit removes the conflict
    edited = finder.check(draft, "Deploys go through Traefik on the edge hosts.")
    assert {c.engram_a for c in edited} == {"ENG-2026-11-01-001", "ENG-2026-11-02-001"}
    assert all(c.statement_b == "Deploys go through Traefik on the edge hosts." for c in edited)


def test_recording_a_tension_writes_plurs_shape_and_a_human_event(session):
    before = (session.store.root / "engrams.yaml").read_bytes()
    candidate = finder_for(session).scan().candidates[0]
    change = record_tension(session, candidate.engram_a, candidate.engram_b, candidate.score, candidate.reason())
    (tension_id,) = change.tensions
    assert tension_id == "T-2026-1202-001"
    record = session.tension(tension_id)
    assert record["status"] == "detected" and record["category"] == "temporal"  # learned on different days
    assert record["statement_a"] == session.engram(candidate.engram_a)["statement"]
    assert (session.store.root / "engrams.yaml").read_bytes() == before
    events = [json.loads(x) for x in (session.store.root / "history" / "2026-12.jsonl").read_text().splitlines()]
    assert events[-1]["event"] == "contradiction_detected"
    assert events[-1]["actor"]["kind"] == "human" and events[-1]["actor"]["asserted_by"] == "Ada Reviewer"
    assert events[-1]["data"]["tension_id"] == tension_id
    assert events[-1].get("signature"), "every human event leaves the app signed"
    # The pair is now excluded from our own finder, and recording it again (either order) is refused.
    assert candidate.key in recorded_pair_keys(session)
    assert candidate.key not in {c.key for c in finder_for(session).scan().candidates}
    with pytest.raises(ActionRefused, match="already recorded as T-2026-1202-001"):
        record_tension(session, candidate.engram_b, candidate.engram_a, 0.9, "again")


def test_not_a_conflict_is_a_dismissed_record_and_ids_count_up(session):
    record_tension(session, "ENG-2026-11-01-001", "ENG-2026-11-02-001", 0.9, "r")
    text_before = (session.store.root / "tensions.yaml").read_bytes()
    change = not_a_conflict(session, "ENG-2026-11-03-001", "ENG-2026-11-04-001", "different APIs")
    assert change.tensions == {"T-2026-1202-002"}
    assert session.tension("T-2026-1202-002")["status"] == "dismissed"
    assert (session.store.root / "tensions.yaml").read_bytes().startswith(text_before)  # appended, nothing else moved
    assert finder_for(session).scan().candidates == []


def test_supersede_links_both_ways_and_is_undoable(session):
    supersede(session, "ENG-2026-11-02-001", "ENG-2026-11-01-001")
    newer, older = session.engram("ENG-2026-11-02-001"), session.engram("ENG-2026-11-01-001")
    assert newer["relations"]["supersedes"] == ["ENG-2026-11-01-001"]
    assert older["relations"]["superseded_by"] == ["ENG-2026-11-02-001"]
    assert older["status"] == "active"  # PLUR's supersedes never retires its target
    assert "ENG-2026-11-01-001:ENG-2026-11-02-001" not in {c.key for c in finder_for(session).scan().candidates}
    with pytest.raises(ActionRefused, match="already supersedes"):
        supersede(session, "ENG-2026-11-02-001", "ENG-2026-11-01-001")
    events = [json.loads(x) for x in (session.store.root / "history" / "2026-12.jsonl").read_text().splitlines()]
    assert [e["data"]["action"] for e in events] == ["supersede", "supersede"]
    assert all(e.get("signature") for e in events)
    session.undo()
    assert "relations" not in session.engram("ENG-2026-11-01-001")


def test_the_conflicts_command_is_read_only_and_exits_zero(session, capsys):
    root = session.store.root
    before = _snapshot(root)
    assert main(["conflicts", str(root), "--json", "--limit", "1"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["total"] == 2 and len(payload["candidates"]) == 1
    first = payload["candidates"][0]
    assert {"engram_a", "engram_b", "score", "rule", "kind", "evidence"} <= set(first)
    assert first["evidence"]["similarity_source"] == "tokens"
    assert main(["conflicts", str(root)]) == 0
    assert "Caddy → nginx" in capsys.readouterr().out
    assert _snapshot(root) == before
    assert main(["conflicts", str(root / "missing")]) == 2


def test_recording_refuses_a_store_plur_could_not_read(session):
    (session.store.root / "tensions.yaml").write_text("- id: [unclosed\n")
    session.store.load()
    with pytest.raises(Exception, match="read-only"):
        record_tension(session, "ENG-2026-11-01-001", "ENG-2026-11-02-001", 0.9, "r")
    assert (session.store.root / "tensions.yaml").read_text() == "- id: [unclosed\n"


def test_a_missing_tensions_file_is_created_with_the_one_record(session):
    (session.store.root / "tensions.yaml").unlink()
    session.store.load()
    record_tension(session, "ENG-2026-11-01-001", "ENG-2026-11-02-001", 0.9, "r")
    text = (session.store.root / "tensions.yaml").read_text()
    assert text.startswith("- id: T-2026-1202-001\n") and text.count("\n- id:") == 0
    reread = PlurStore(session.store.root)
    reread.load()
    assert [e.valid for e in reread.tensions.entries] == [True]


def test_the_service_names_the_other_engram_and_who_approved_it(session):
    from plur_desk.app.conflicts.conflict_service import ConflictService

    session.execute(
        ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-04-001"])), "decided")
    )  # now the 90-day engram is approved by Ada
    service = ConflictService(session).rebuild()
    warnings = service.warnings_for("ENG-2026-11-03-001")
    assert [(w.other_id, w.commitment, w.approved_by) for w in warnings] == [
        ("ENG-2026-11-04-001", "decided", "Ada Reviewer")
    ]
    assert "approved by Ada Reviewer (signed)" in warnings[0].text() and "30 → 90" in warnings[0].text()
    assert service.warnings_for("ENG-2026-11-03-001", "API tokens expire after 90 days.") == []
    assert ConflictService(session).warnings_for("ENG-2026-11-03-001") == []  # not built yet: silent


def test_a_record_whose_event_could_not_be_appended_is_completed_by_recovery(session, monkeypatch):
    from plur_desk.infra.errors import PartialWrite, WriteFailed
    from plur_desk.store.history.log import PreparedAppend
    from plur_desk.store.keys.signatures import verify
    from plur_desk.store.recovery import recover

    def fail(self):
        raise WriteFailed("disk full (simulated)")

    with monkeypatch.context() as patched:  # (monkeypatch.undo() would also undo conftest's private HOME)
        patched.setattr(PreparedAppend, "commit", fail)
        with pytest.raises(PartialWrite, match="journal keeps it"):
            record_tension(session, "ENG-2026-11-01-001", "ENG-2026-11-02-001", 0.9, "r")
    root = session.store.root
    assert "T-2026-1202-001" in (root / "tensions.yaml").read_text()
    assert (
        not (root / "history" / "2026-12.jsonl").exists()
        or "contradiction_detected" not in (root / "history" / "2026-12.jsonl").read_text()
    )
    store = PlurStore(root)
    store.load()
    report = recover(store, session.signing.proven_decision(session.reviewer, session.trust))
    assert report.events_appended == 1 and report.completed
    events = [json.loads(x) for x in (root / "history" / "2026-12.jsonl").read_text().splitlines()]
    assert [(e["event"], e["data"]["tension_id"]) for e in events] == [("contradiction_detected", "T-2026-1202-001")]
    assert verify(events[0], session.keys.public_key())  # appended as it was signed when journaled
    assert not recover(store, lambda _e: True).anything  # the journal record is finished


def test_a_refused_record_leaves_no_journal_record(session):
    record_tension(session, "ENG-2026-11-01-001", "ENG-2026-11-02-001", 0.9, "r")
    with pytest.raises(ActionRefused):
        record_tension(session, "ENG-2026-11-01-001", "ENG-2026-11-02-001", 0.9, "again")
    assert session.store.journal.pending()[0] == []


def test_a_finder_kept_across_decisions_answers_as_a_rebuilt_one(session):
    """Approving or rejecting changes nothing the finder reads: the window keeps it (no rebuild of the whole store
    after each decision) and it answers exactly as a new one would; an edit, or an engram active again after an
    undone reject, needs a new finder."""
    from plur_desk.app.conflicts.conflict_service import ConflictService

    def answers(service):
        return {i: [w.text() for w in service.warnings_for(i)] for i in STATEMENTS}

    kept = ConflictService(session).rebuild()
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-04-001"])), "decided"))
    assert kept.answers_after(["ENG-2026-11-04-001"])
    assert answers(kept) == answers(ConflictService(session).rebuild())
    assert any("approved by Ada Reviewer" in t for texts in answers(kept).values() for t in texts)
    session.execute(RejectDrafts(tuple(session.writes.seen(["ENG-2026-11-02-001"])), "wrong host"))
    assert kept.answers_after(["ENG-2026-11-02-001"])
    assert answers(kept) == answers(ConflictService(session).rebuild())
    after_reject = ConflictService(session).rebuild()  # built while it was retired: it does not hold it
    session.undo()  # active again
    assert not after_reject.answers_after(["ENG-2026-11-02-001"])
    assert kept.answers_after(["ENG-2026-11-02-001"])  # built before the reject: it holds it as it is again
    assert answers(kept) == answers(ConflictService(session).rebuild())
    rebuilt = ConflictService(session).rebuild()
    session.execute(
        EditStatement(session.writes.seen(["ENG-2026-11-05-001"])[0], "Deploys go through Traefik on the edge hosts.")
    )
    assert not rebuilt.answers_after(["ENG-2026-11-05-001"])
    assert not rebuilt.answers_after([], max_age=-1)  # an old finder is rebuilt anyway (its clock)


def test_a_stale_content_hash_does_not_lend_an_engram_the_vector_of_other_text() -> None:
    """The similarity of a pair uses the vectors of the statements the engrams say now (cached under the hash of
    each statement, as search and the clusters key them), not whatever the `content_hash` field names: here B was
    edited by hand from the plants statement to the nginx one and its field still names the plants."""
    caddy, nginx, plants = (STATEMENTS[f"ENG-2026-11-0{n}-001"][0] for n in (1, 2, 5))
    same, apart = np.eye(4, dtype=np.float32)[0], np.eye(4, dtype=np.float32)[1]
    vectors = Vectors({content_hash(caddy): same, content_hash(nginx): same, content_hash(plants): apart})
    a = _engram("ENG-2026-11-01-001", caddy, "decided")
    b = {**_engram("ENG-2026-11-02-001", nginx, "leaning"), "content_hash": content_hash(plants)}
    finder = ConflictFinder([a, b], (), NOW, vectors=vectors)
    candidate = finder.score(a, b)
    assert candidate.similarity_source == "minilm" and candidate.similarity == pytest.approx(1.0)
    assert finder.score(b, a).similarity == pytest.approx(1.0)
    vector_a = vectors.of(a)
    assert vector_a is not None and finder.score(b, a, vector_a=vector_a).similarity == pytest.approx(1.0)


ANSWERS = {
    "record": lambda s, c: record_tension(s, c.engram_a, c.engram_b, c.score, c.reason(), seen=c.seen),
    "not a conflict": lambda s, c: not_a_conflict(s, c.engram_a, c.engram_b, seen=c.seen),
    "supersede": lambda s, c: supersede(s, c.engram_b, c.engram_a, c.seen),
}


def test_a_scan_candidate_carries_both_engrams_as_judged(session):
    caddy = next(c for c in finder_for(session).scan().candidates if c.engram_a == "ENG-2026-11-01-001")
    assert [s.id for s in caddy.seen] == ["ENG-2026-11-01-001", "ENG-2026-11-02-001"]
    assert caddy.seen[1].expected()["statement"] == caddy.statement_b == "Deploys go through nginx on the edge hosts."


@pytest.mark.parametrize("answer", list(ANSWERS))
@pytest.mark.parametrize("changed", ["ENG-2026-11-01-001", "ENG-2026-11-02-001"])
def test_an_answer_about_text_that_changed_since_the_scan_writes_nothing(session, answer, changed):
    """The dialog shows a candidate from its scan; an agent rewrites one side before the reviewer answers. The
    answer would put a human's name on a pair of texts nobody saw together: refused, every file as it was."""
    candidate = next(c for c in finder_for(session).scan().candidates if c.engram_a == "ENG-2026-11-01-001")
    rewrite_statement(session.store.root, changed, "Deploys go through Traefik on the edge hosts.")
    before = _snapshot(session.store.root)
    with pytest.raises(ChangedSinceError, match=f"{changed} changed since you looked \\(statement"):
        ANSWERS[answer](session, candidate)
    assert _snapshot(session.store.root) == before


@pytest.mark.parametrize("answer", list(ANSWERS))
def test_an_answer_about_the_text_as_shown_is_written_with_a_human_event(session, answer):
    candidate = next(c for c in finder_for(session).scan().candidates if c.engram_a == "ENG-2026-11-01-001")
    rewrite_statement(session.store.root, "ENG-2026-11-05-001", "The office plants are watered on Tuesdays.")
    change = ANSWERS[answer](session, candidate)  # another engram changed on disk: not one of the two shown
    assert change.tensions or change.engrams
    events = [json.loads(x) for x in (session.store.root / "history" / "2026-12.jsonl").read_text().splitlines()]
    assert events[-1]["actor"]["kind"] == "human"
    assert {events[-1]["engram_id"], events[-1]["data"].get("engram_b")} & {candidate.engram_a, candidate.engram_b}


def test_the_finder_keeps_each_engrams_subject_words_small_and_gates_on_them_as_before() -> None:
    """The finder lives as long as the window and holds every engram's subject words: a frozenset of 5-10 words is
    728 bytes (34 MB at 50,000 engrams), a tuple of them ~120. The gate answers as with the words' sets."""
    import sys

    from plur_desk.domain.plur_rules.tension_rules import blocked_by

    words = ["deploy", "database", "staging", "runner", "cache", "queue", "worker", "build", "release", "gateway"]
    statements = [" ".join(words[(n + k) % 10] for k in (0, 3, 5, 7, 1)) + f" runs on port {n}" for n in range(30)]
    statements += ["Plants need water every morning", "Plants need light, not water", "Gateway release is weekly"]
    engrams = [_engram(f"ENG-2026-11-01-{n:03d}", text, "decided") for n, text in enumerate(statements)]
    finder = ConflictFinder(engrams, (), NOW)
    assert max(sys.getsizeof(words) for words in finder._subjects) < 200
    answers = set()
    for i, a in enumerate(engrams):
        for j, b in enumerate(engrams):
            held = (frozenset(finder._subjects[i]), finder._subjects[j])
            answers.add(blocked_by(a, b, finder.context, held))
            assert blocked_by(a, b, finder.context, held) == blocked_by(a, b, finder.context)
    assert {None, "no shared subject"} <= answers


def test_a_check_in_the_reviewers_job_gives_way_to_the_windows_repaint(session):
    """A bulk approval's check is seconds of Python on a worker thread: while the window repaints it waits at its
    next candidate, so the repaint's calls into Python do not each wait for the interpreter lock behind it."""
    from concurrent.futures import ThreadPoolExecutor

    from plur_desk.infra.jobs import Job, Pacing, running

    finder = finder_for(session)
    draft = session.engram("ENG-2026-11-04-001")
    pacing = Pacing()

    def check():  # type: ignore[no-untyped-def]
        with running(Job(pacing)):
            return finder.check(draft)

    with ThreadPoolExecutor(1) as pool:
        with pacing.window.repaint():
            checked = pool.submit(check)
            threading.Event().wait(0.05)  # (time for a check that does not wait to finish)
            assert not checked.done()
        found = checked.result(10)
    assert [(c.engram_a, c.engram_b) for c in found] == [("ENG-2026-11-03-001", "ENG-2026-11-04-001")]


@given(
    st.dictionaries(
        st.sampled_from(["id", "statement", "commitment", "status", "tags", "review", "x"]), st.integers(0, 2)
    ),
    st.dictionaries(
        st.sampled_from(["id", "statement", "commitment", "status", "tags", "review", "x"]), st.integers(0, 2)
    ),
)
def test_two_records_agree_for_the_finder_exactly_when_their_read_fields_do(held, now) -> None:  # type: ignore[no-untyped-def]
    from plur_desk.app.conflicts.conflict_service import UNREAD, _same_read

    def read(record):  # type: ignore[no-untyped-def]
        return {k: v for k, v in record.items() if k not in UNREAD}

    assert _same_read(held, now) == (read(held) == read(now))
