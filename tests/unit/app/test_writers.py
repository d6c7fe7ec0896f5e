"""The writer ledger, built from the history and review records that real session actions wrote."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from plur_desk.app.review.bootstrap import open_session
from plur_desk.app.review.session import ReviewSession
from plur_desk.app.scale.writer_stats import WriterKey, reason_kind
from plur_desk.app.scale.writers import Ledger, ledger_from_files
from plur_desk.domain.commands import ApproveDrafts, EditStatement, RejectDrafts
from plur_desk.domain.plur_rules.derived import content_hash
from plur_desk.infra.clock import FixedClock
from plur_desk.store.lists.yaml_dump import dump_engrams_document

from support.moments import NOW

CLAUDE = {"asserted_by": "agent:claude-code", "model": {"name": "opus"}, "runtime": {"name": "plur-core"}}
CODEX = {"asserted_by": "agent:codex", "runtime": {"name": "plur-core"}}


def _engram(i: int, attribution: dict[str, object], day: int = 1) -> dict[str, object]:
    statement = f"Lesson number {i} about the build"
    return {
        "id": f"ENG-2026-11-{day:02d}-{i:03d}",
        "status": "active",
        "type": "behavioral",
        "scope": "project:web",
        "statement": statement,
        "commitment": "draft",
        "created_at": f"2026-11-{day:02d}T10:00:00.000Z",
        "content_hash": content_hash(statement),
        "attribution": attribution,
    }


def _created(engram: dict[str, object]) -> str:
    attribution = engram["attribution"]
    assert isinstance(attribution, dict)
    actor = {"asserted_by": attribution["asserted_by"], "runtime": {"name": "plur-core"}}
    event = {"event": "engram_created", "engram_id": engram["id"], "timestamp": engram["created_at"],
             "data": {"type": "behavioral", "scope": "project:web"}, "actor": actor}  # fmt: skip
    return json.dumps(event, separators=(",", ":"))


@pytest.fixture
def session(tmp_path) -> ReviewSession:
    root = tmp_path / "store"
    (root / "history").mkdir(parents=True)
    engrams = [_engram(i, CLAUDE) for i in range(1, 6)] + [_engram(i, CODEX, day=20) for i in range(6, 9)]
    (root / "engrams.yaml").write_text(dump_engrams_document({"engrams": engrams}))
    lines = [_created(e) for e in engrams]
    lines.insert(3, '{"event":"co_injection","engram_id":"INJ-1","timestamp":"2026-11-02T00:00:00.000Z"}')
    lines.append("not json at all")
    (root / "history" / "2026-11.jsonl").write_text("\n".join(lines) + "\n")
    return open_session(root, "Ada Reviewer", clock=FixedClock(NOW), use_cache=False)


def _by_writer(session: ReviewSession, ledger: Ledger) -> dict[str, object]:
    return {s.writer.label: s for s in ledger.stats(session.all_engrams(), session.now())}


def test_counts_from_real_decisions(session: ReviewSession) -> None:
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"]))))
    session.execute(
        EditStatement(session.writes.seen(["ENG-2026-11-01-002"])[0], "Lesson number 2 about the build, edited")
    )
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-002"]))))
    session.execute(RejectDrafts(tuple(session.writes.seen(["ENG-2026-11-01-003"])), "duplicate of ENG-2026-11-01-001"))
    session.execute(RejectDrafts(tuple(session.writes.seen(["ENG-2026-11-01-004"])), "Duplicate."))
    session.execute(RejectDrafts(tuple(session.writes.seen(["ENG-2026-11-20-006"])), "wrong: we use Node 22"))
    ledger = Ledger()
    ledger.sync(session.history.lines)
    stats = _by_writer(session, ledger)
    claude = stats["agent:claude-code · opus · plur-core"]
    assert (claude.drafts, claude.approved, claude.approved_after_edit, claude.rejected, claude.pending) == (
        5,
        2,
        1,
        2,
        1,
    )
    assert claude.rejected_by_reason == (("duplicate", 2),)
    assert claude.created == 5
    # created 2026-11-01T10:00, decided 2026-12-02T12:00: 31 days and 2 hours
    assert claude.median_hours_to_decision == 746.0
    assert claude.last30 == (0, 2, 2, 746.0)
    assert claude.weekly[-1] == (2, 2) and sum(a + r for a, r in claude.weekly) == 4
    assert "2 approved, 2 rejected, 1 pending — 100 % of rejections 'duplicate'" in claude.line()
    codex = stats["agent:codex · plur-core"]
    assert (codex.drafts, codex.approved, codex.rejected, codex.pending) == (3, 0, 1, 2)
    assert codex.rejection_rate == 1.0
    assert codex.last30[0] == 3
    assert codex.rejected_by_reason == (("wrong", 1),)


def test_undo_takes_a_decision_back_and_redo_restores_it(session: ReviewSession) -> None:
    session.execute(RejectDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"])), "too vague"))
    session.undo()
    ledger = Ledger()
    ledger.sync(session.history.lines)
    claude = _by_writer(session, ledger)["agent:claude-code · opus · plur-core"]
    assert (claude.rejected, claude.pending) == (0, 5)
    session.redo()
    ledger.sync(session.history.lines)  # incremental: only the redo line is new
    claude = _by_writer(session, ledger)["agent:claude-code · opus · plur-core"]
    assert (claude.rejected, claude.pending, claude.rejected_by_reason) == (1, 4, (("too vague", 1),))


def test_incremental_matches_cold_build(session: ReviewSession) -> None:
    ledger = Ledger()
    ledger.sync(session.history.lines)
    fed = ledger.fed
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-20-007"]))))
    assert ledger.sync(session.history.lines) == 1
    assert ledger.fed == fed + 1
    cold = ledger_from_files(session.store.root / "history")
    assert _by_writer(session, ledger) == _by_writer(session, cold)


def test_review_record_counts_when_history_lost_the_event(session: ReviewSession) -> None:
    session.execute(RejectDrafts(tuple(session.writes.seen(["ENG-2026-11-20-008"])), "not true"))
    for path in (session.store.root / "history").glob("2026-12.jsonl"):
        path.unlink()  # as if that month were lost; the engram keeps its review record
    ledger = ledger_from_files(session.store.root / "history")
    session.reload_if_changed()
    codex = _by_writer(session, ledger)["agent:codex · plur-core"]
    assert codex.rejected == 1 and codex.rejected_by_reason == (("not true", 1),)


def test_only_human_events_count(session: ReviewSession) -> None:
    forged = {"event": "engram_updated", "engram_id": "ENG-2026-11-01-001", "timestamp": "2026-12-01T00:00:00.000Z",
              "data": {"action": "approve"}, "actor": {"asserted_by": "agent:codex", "note": "human"}}  # fmt: skip
    ledger = Ledger()
    ledger.feed([json.dumps(forged).encode()])
    assert ledger.decisions.get("ENG-2026-11-01-001", []) == []


def test_reason_kinds_and_writer_labels() -> None:
    assert reason_kind("Duplicate of ENG-2026-12-02-001") == "duplicate"
    assert reason_kind("wrong: it is Node 22") == "wrong"
    assert reason_kind("") == "(no reason)"
    assert WriterKey.of(None).label == "(unattributed)"
    assert WriterKey.of({"asserted_by": "x", "tool": {"name": "cursor"}}).label == "x · cursor"


def test_escaped_reasons_and_foreign_shapes_read_like_json(session: ReviewSession) -> None:
    session.execute(RejectDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"])), 'too "vague" \\ ünïcode'))
    ledger = Ledger()
    ledger.sync(session.history.lines)
    assert ledger.decisions["ENG-2026-11-01-001"][-1].reason == 'too "vague" \\ ünïcode'
    # the same decision written with another key order (not our shape) is read through json.loads
    reordered = {"actor": {"kind": "human", "asserted_by": "x"}, "event": "engram_retired", "timestamp": "2026-12-02T00:00:00.000Z",
                 "engram_id": "ENG-2026-11-01-002", "data": {"reason": "dup", "action": "reject"}}  # fmt: skip
    created = {"engram_id": "ENG-X", "event": "engram_created", "timestamp": "2026-11-01T00:00:00.000Z",
               "actor": {"asserted_by": "agent:other"}}  # fmt: skip
    ledger.feed([json.dumps(reordered).encode(), b"{broken", json.dumps(created).encode()])
    assert ledger.decisions["ENG-2026-11-01-002"][-1].reason == "dup"
    assert ledger.created["ENG-X"][0] == WriterKey("agent:other")
    assert ledger.created["ENG-2026-11-01-001"][0].asserted_by == "agent:claude-code"


def test_with_keys_only_signed_decisions_count_and_claims_are_shown(session: ReviewSession) -> None:
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"]))))  # the session signs its events
    history = session.store.root / "history" / "2026-12.jsonl"
    forged = {"event": "engram_updated", "engram_id": "ENG-2026-11-01-002", "timestamp": "2026-12-02T11:00:00.000Z",
              "data": {"action": "approve", "field": "commitment", "from": "draft", "to": "decided"},
              "actor": {"asserted_by": "Ada Reviewer", "kind": "human", "runtime": {"name": "plur-desk"}}}  # fmt: skip
    with history.open("a") as handle:
        handle.write(json.dumps(forged, separators=(",", ":")) + "\n")
    session.history.refresh()
    ledger = Ledger(trust=session.trust)
    ledger.sync(session.history.lines)
    claude = _by_writer(session, ledger)["agent:claude-code · opus · plur-core"]
    assert (claude.approved, claude.unverified) == (1, 1)  # the forged approval is a claim, not a decision
    assert "1 unverified claims not counted" in claude.line()
    # without keys (no trust checker), every claim counts: what the ledger did before signing existed
    unchecked = Ledger()
    unchecked.sync(session.history.lines)
    assert _by_writer(session, unchecked)["agent:claude-code · opus · plur-core"].approved == 2


def test_a_claim_written_with_json_escapes_is_a_claim_too(session: ReviewSession) -> None:
    """`"h\\u0075man"` is "human" to every JSON reader: such a forged approval is shown as an unverified claim like
    any other, not left out by the byte search for human lines."""
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"]))))  # the session signs its events
    history = session.store.root / "history" / "2026-12.jsonl"
    forged = {"event": "engram_updated", "engram_id": "ENG-2026-11-01-002", "timestamp": "2026-12-02T11:00:00.000Z",
              "data": {"action": "approve", "field": "commitment", "from": "draft", "to": "decided"},
              "actor": {"asserted_by": "Ada Reviewer", "kind": "human", "runtime": {"name": "plur-desk"}}}  # fmt: skip
    line = json.dumps(forged, separators=(",", ":")).replace('"human"', '"h\\u0075man"')
    assert json.loads(line)["actor"]["kind"] == "human" and '"human"' not in line
    with history.open("a") as handle:
        handle.write(line + "\n")
    session.history.refresh()
    for chunk in (None, 1):  # fed as the month's bytes, and line by line
        ledger = Ledger(trust=session.trust)
        if chunk is None:
            ledger.sync(session.history.lines)
        else:
            ledger.feed([raw for raw, _month, _number in session.history.lines])
        claude = _by_writer(session, ledger)["agent:claude-code · opus · plur-core"]
        assert (claude.approved, claude.unverified) == (1, 1), chunk


def test_a_forged_review_record_is_not_a_decision(session: ReviewSession, tmp_path) -> None:  # type: ignore[no-untyped-def]
    engram = session.engram("ENG-2026-11-20-006")
    assert engram is not None
    engram["review"] = {"state": "approved", "by": "Ada Reviewer", "at": "2026-12-01T00:00:00.000Z"}
    ledger = Ledger(trust=session.trust)
    ledger.sync(session.history.lines)
    codex = _by_writer(session, ledger)["agent:codex · plur-core"]
    assert (codex.approved, codex.unverified) == (0, 1)


def test_a_new_keys_file_judges_the_claims_again_without_reading_every_line(session: ReviewSession) -> None:
    """The first decision of a session registers the reviewer's key (keys.yaml changes): the ledger takes the human
    claims again under the new keys, but does not read the whole history again (a million lines at scale)."""
    ledger = Ledger(trust=session.trust)
    ledger.sync(session.history.lines)
    before = session.trust.generation
    fed: list[bytes] = []
    created_bytes = ledger._created_bytes
    ledger._created_bytes = lambda data: (fed.append(data), created_bytes(data))[1]  # type: ignore[method-assign]
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"]))))
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-20-006"]))))
    assert ledger.sync(session.history.lines) == 2
    assert session.trust.generation != before  # keys.yaml did change
    assert sum(data.count(b"\n") for data in fed) == 2  # only the two new lines were read
    cold = Ledger(trust=session.trust)
    cold.sync(session.history.lines)
    assert _by_writer(session, ledger) == _by_writer(session, cold)
    assert _by_writer(session, ledger)["agent:codex · plur-core"].approved == 1  # the signed decisions count


def test_fed_in_chunks_the_ledger_is_the_same(session: ReviewSession, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long history is fed a chunk at a time (each chunk's regex holds the interpreter lock only briefly): the
    result is the one a single pass gives, the first engram_created of an id still winning across chunks."""
    import plur_desk.app.scale.writers as writers

    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"]))))
    session.execute(RejectDrafts(tuple(session.writes.seen(["ENG-2026-11-20-006"])), "not true"))
    whole = Ledger(trust=session.trust)
    whole.sync(session.history.lines)
    monkeypatch.setattr(writers, "FEED_CHUNK", 2)
    chunked = Ledger(trust=session.trust)
    assert chunked.sync(session.history.lines) == len(session.history.lines)
    assert _by_writer(session, chunked) == _by_writer(session, whole)
    assert (chunked.created, chunked.decisions) == (whole.created, whole.decisions)


def test_the_ledger_and_the_history_index_hold_the_records_own_id_and_timestamp_strings(
    session: ReviewSession,
) -> None:
    ledger = Ledger()
    ledger.sync(session.history.lines)
    for engram in session.all_engrams():
        ident = engram["id"]
        assert isinstance(ident, str)
        (created_key,) = [k for k in ledger.created if k == ident]
        assert created_key is ident  # one string for the record, the ledger and the history index
        assert ledger.created[ident][1] is engram["created_at"]
        (indexed,) = [k for k in session.history._state[1].by_id if k == ident]
        assert indexed is ident


_SYNC_PEAK = """
import sys, tracemalloc
from pathlib import Path
from plur_desk.app.history.history_index import HistoryIndex
from plur_desk.app.scale.writers import FEED_CHUNK, Ledger
from plur_desk.store.history.log import HistoryLog
history = HistoryIndex(HistoryLog(Path(sys.argv[1])))
history.load()
run = len(history.lines.raw_runs(0, FEED_CHUNK, FEED_CHUNK).__next__()[0])
tracemalloc.start()
before = tracemalloc.get_traced_memory()[0]
ledger = Ledger()
ledger.sync(history.lines)
held, peak = tracemalloc.get_traced_memory()
print(peak - held, run, ledger.fed, len(ledger.created))
"""


def test_the_ledger_holds_one_run_of_history_bytes_at_a_time(tmp_path) -> None:
    """The month files are fed in runs of FEED_CHUNK lines (~4 MB at PLUR's line sizes): a run is let go before the
    next one is read, so the read (and its slice) never sit beside the last run still held by the loop. Measured in
    a process of its own (tracemalloc counts every thread)."""
    from plur_desk.app.scale.writers import FEED_CHUNK

    root = tmp_path / "store"
    (root / "history").mkdir(parents=True)
    (root / "engrams.yaml").write_text("engrams: []\n")
    filler = ',"data":{"type":"behavioral","scope":"project:web","note":"' + "x" * 120 + '"}'
    lines = [
        f'{{"event":"co_injection","engram_id":"ENG-{n}","timestamp":"2026-11-01T00:00:00.000Z"{filler}}}'
        for n in range(4 * FEED_CHUNK)
    ]
    lines[5] = _created(_engram(1, CLAUDE))
    (root / "history" / "2026-11.jsonl").write_text("\n".join(lines) + "\n")
    out = subprocess.run([sys.executable, "-c", _SYNC_PEAK, str(root)], capture_output=True, text=True, check=True)
    over, run, fed, created = (int(word) for word in out.stdout.split())
    assert (fed, created) == (4 * FEED_CHUNK, 1)
    assert over < 2.5 * run, (over, run)  # the read and its slice (2 runs); with the last run still held, 3
