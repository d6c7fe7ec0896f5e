"""The watched baseline on the small store: started once, signed, followed by the reviewer's decisions, and never
trusted for a line that does not verify (no Qt, no Node: an agent's write is simulated on the files)."""

from __future__ import annotations

import json

import pytest

from plur_desk.app.changes.baseline_read import read_baseline
from plur_desk.app.changes.changes_cli import main as changes_main
from plur_desk.app.check import run_check
from plur_desk.domain.commands import ApproveDrafts, ConfirmTension
from plur_desk.domain.lint import REDACTED
from plur_desk.infra.errors import PlurDeskError
from plur_desk.store import baseline
from plur_desk.store.lists.yaml_dump import dump_engrams_document, dump_tensions_document
from plur_desk.store.plur_store import PlurStore

DRAFT, DECIDED = "ENG-2026-11-01-001", "ENG-2026-11-06-001"


def agent_writes(root, engram_id, **fields):
    """What an agent's updateEngram leaves: the fields set, nothing logged."""
    store = PlurStore(root)
    store.load()
    engrams = [dict(e.value) for e in store.engrams.entries]
    for engram in engrams:
        if engram["id"] == engram_id:
            engram.update(fields)
    (root / "engrams.yaml").write_text(dump_engrams_document({"engrams": engrams}))


def agent_settles(root, tension_id, **fields):
    store = PlurStore(root)
    store.load()
    records = [dict(e.value) for e in store.tensions.entries]
    for record in records:
        if record["id"] == tension_id:
            record.update(fields)
    (root / "tensions.yaml").write_text(dump_tensions_document(records))


def listed(session):
    session.reload_if_changed()
    return {c.id: c for c in session.watch.changes()}


def test_watching_starts_once_and_lists_nothing_until_an_agent_moves_something(session):
    root = session.root
    assert not session.watch.watched and session.watch.changes() == []
    assert session.watch.start() is True
    written = baseline.path_of(root).read_bytes()
    assert session.watch.watched and session.watch.changes() == []
    assert session.watch.start() is False  # already watched: nothing written
    assert baseline.path_of(root).read_bytes() == written
    line = json.loads(written.splitlines()[0])
    assert line["data"]["claim"] == "watching" and line["signer"] == "human:Ada Reviewer"
    assert run_check(root, use_cache=False).exit_code == 0  # a baseline that verifies is nothing to report


def test_an_agent_promotion_and_rewrite_are_listed_silent_with_before_and_after(session):
    session.watch.start()
    agent_writes(session.root, DRAFT, commitment="decided")
    agent_writes(session.root, DECIDED, statement="Statement number six, rewritten")
    changes = listed(session)
    assert {i: (c.kind, c.silent) for i, c in changes.items()} == {
        DRAFT: ("promoted", True),
        DECIDED: ("rewritten", True),
    }
    assert changes[DRAFT].before["commitment"] == "draft" and changes[DRAFT].after["commitment"] == "decided"
    assert changes[DECIDED].before["statement"] == "Statement number 6"


def test_the_reviewers_own_decisions_join_the_baseline(session):
    session.watch.start()
    session.execute(ApproveDrafts(tuple(session.writes.seen([DRAFT]))))
    session.execute(ConfirmTension(session.writes.seen_tension("T-2026-1201-001")))
    assert listed(session) == {}
    # an agent moving the approved engram afterwards is still listed, against the values the decision left
    agent_writes(session.root, DRAFT, commitment="draft")
    changes = listed(session)
    assert list(changes) == [DRAFT] and changes[DRAFT].before["commitment"] == "decided"


def test_a_stores_first_decision_starts_watching_it_and_says_so(session):
    """A store nobody watched is watched from the reviewer's first decision in it (her key signs then anyway): the
    decision's state is the baseline, the window is told once, and an agent's change afterwards is listed."""
    assert not session.watch.watched
    change = session.execute(ApproveDrafts(tuple(session.writes.seen([DRAFT]))))
    assert session.watch.watched and listed(session) == {}
    assert any("now watched for agent changes" in w for w in change.warnings)
    again = session.execute(ConfirmTension(session.writes.seen_tension("T-2026-1201-001")))
    assert not any("now watched" in w for w in again.warnings)  # said once
    agent_writes(session.root, DECIDED, statement="Statement number six, rewritten")
    assert {i: c.kind for i, c in listed(session).items()} == {DECIDED: "rewritten"}


def test_a_first_decision_does_not_start_watching_over_a_baseline_that_does_not_verify(session):
    path = baseline.path_of(session.root)
    path.parent.mkdir(parents=True)
    path.write_text('{"event":"plur_desk_baseline","data":{"claim":"watching"}}\n')
    before = path.read_bytes()
    session.execute(ApproveDrafts(tuple(session.writes.seen([DRAFT]))))
    assert path.read_bytes() == before and not session.watch.watched


def test_an_agent_settling_a_tension_is_listed(session):
    session.watch.start()
    agent_settles(session.root, "T-2026-1201-001", status="dismissed")
    changes = listed(session)
    assert {i: c.kind for i, c in changes.items()} == {"T-2026-1201-001": "tension_dismissed"}


def test_an_edited_or_planted_baseline_line_is_reported_and_claims_nothing(session, capsys):
    session.watch.start()
    agent_writes(session.root, DECIDED, statement="Rewritten by an agent")
    path = baseline.path_of(session.root)
    signed = json.loads(path.read_text().splitlines()[0])
    # the agent appends a copy of the signed line claiming its rewrite was the watched value
    forged = json.loads(json.dumps(signed))
    forged["timestamp"] = "2099-01-01T00:00:00.000Z"
    forged["data"].pop("packed", None)
    forged["data"]["engrams"] = {
        DECIDED: [
            "Rewritten by an agent",
            "decided",
            "active",
            None,
            None,
            "project:web",
            "behavioral",
            False,
            "6" * 64,
        ]
    }
    forged["data"]["tensions"] = {}
    unsigned = {k: v for k, v in forged.items() if k not in ("signature", "signer")}
    with path.open("a") as handle:
        handle.write(json.dumps(forged) + "\n" + json.dumps(unsigned) + "\n" + "{not json\n")
    read = read_baseline(session.root, session.trust)
    assert [n for n, _reason in read.problems] == [2, 3, 4]
    assert list(listed(session)) == [DECIDED]  # still listed: the forged lines changed nothing
    report = run_check(session.root, use_cache=False)
    flagged = [c for c in report.untrusted if c["file"] == baseline.RELATIVE]
    assert [c["line"] for c in flagged] == [2, 3, 4] and report.exit_code == 1
    capsys.readouterr()
    assert changes_main([str(session.root), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert len(out["baseline_problems"]) == 3 and [c["id"] for c in out["changes"]] == [DECIDED]


def test_the_union_merge_keeps_every_line_once():
    ours = b'{"a":1}\n{"b":2}\n'
    theirs = b'{"a":1}\n{"c":3}\n'
    assert baseline.merge_lines(b'{"a":1}\n', ours, theirs) == b'{"a":1}\n{"b":2}\n{"c":3}\n'


def test_watching_is_not_started_over_a_baseline_that_does_not_verify(session, capsys):
    path = baseline.path_of(session.root)
    path.parent.mkdir(parents=True)
    path.write_text('{"event":"plur_desk_baseline","data":{"claim":"watching"}}\n')
    before = path.read_bytes()
    assert changes_main([str(session.root), "--start", "--reviewer", "Ada Reviewer"]) == 2
    assert "do not verify" in capsys.readouterr().err
    assert path.read_bytes() == before


def test_what_the_session_reads_as_lines_are_appended_is_what_a_fresh_read_finds(session, tmp_path):
    session.watch.start()
    first = session.watch.read()
    session.execute(ApproveDrafts(tuple(session.writes.seen([DRAFT]))))
    session.execute(ConfirmTension(session.writes.seen_tension("T-2026-1201-001")))
    session.undo()
    grown = session.watch.read()
    assert grown is first and grown.lines == 4  # taken in place: only the appended lines were read
    fresh = read_baseline(session.root, session.trust)
    assert (grown.baseline, grown.problems, grown.lines) == (fresh.baseline, fresh.problems, fresh.lines)
    cache = tmp_path / "cache" / "engram-blocks.marshal"
    kept = read_baseline(session.root, session.trust, cache)
    again = read_baseline(session.root, session.trust, cache)  # from the verified reading kept beside the cache
    assert (again.baseline, again.problems, again.lines) == (fresh.baseline, fresh.problems, fresh.lines)
    assert kept.baseline == fresh.baseline and baseline.verified_cache(cache).exists()


def test_a_planted_link_never_leads_a_baseline_write_out_of_the_store(session, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (session.root / ".plur-desk").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PlurDeskError, match="leads out of the store"):
        session.watch.start()
    assert list(outside.iterdir()) == []


def test_the_kept_verified_reading_is_not_reused_once_the_signer_is_no_longer_trusted(session, tmp_path):
    from plur_desk.app.trust.verifier import TrustChecker

    session.watch.start()
    cache = tmp_path / "cache" / "engram-blocks.marshal"
    trusted = read_baseline(session.root, session.trust, cache)
    assert trusted.baseline.watched and trusted.problems == []
    assert session.trust.trust_file.remove("human:Ada Reviewer")  # her key lost: the user stops trusting it
    fresh = read_baseline(session.root, TrustChecker(session.root, session.trust.trust_file))
    assert not fresh.baseline.watched and fresh.problems  # nothing she signed counts any more
    kept = read_baseline(session.root, TrustChecker(session.root, session.trust.trust_file), cache)
    assert (kept.baseline, kept.problems) == (fresh.baseline, fresh.problems)


def test_a_rewrite_is_listed_though_the_agent_backdates_updated_at_beside_a_decision_naming_the_engram(session):
    # ENG-2026-11-05-001 is tension T-2026-1201-001's engram_a: the reviewer's confirmation names it, but decides
    # nothing of its own values, so it explains no later change to them whatever `updated_at` the agent writes
    side = "ENG-2026-11-05-001"
    session.watch.start()
    session.clock.advance(60)  # the confirmation comes a minute after watching began
    session.execute(ConfirmTension(session.writes.seen_tension("T-2026-1201-001")))
    assert listed(session) == {}
    agent_writes(session.root, side, statement="Rewritten by an agent", updated_at="2000-01-01T00:00:00.000Z")
    changes = listed(session)
    assert list(changes) == [side] and changes[side].after["statement"] == "Rewritten by an agent"


def test_a_kept_reading_is_not_trusted_by_someone_who_does_not_trust_its_signer(session, tmp_path):
    """The verified reading kept beside the cache counts only for the keys that verified it: a user whose trust
    file does not hold the signer's key (another account, or after revoking it) is told the lines do not verify."""
    from plur_desk.app.trust.trust_file import TrustFile
    from plur_desk.app.trust.verifier import TrustChecker

    session.watch.start()
    cache = tmp_path / "cache" / "engram-blocks.marshal"
    assert read_baseline(session.root, session.trust, cache).baseline.watched
    stranger = TrustChecker(session.root, TrustFile(tmp_path / "stranger"))
    kept = read_baseline(session.root, stranger, cache)
    fresh = read_baseline(session.root, stranger)
    assert not fresh.baseline.watched and fresh.problems
    assert (kept.baseline, kept.problems) == (fresh.baseline, fresh.problems)


def test_a_revert_copies_no_credential_the_agent_wrote_into_history(session):
    session.watch.start()
    secret = "sk-" + "a1B2c3D4e5F6g7H8i9J0kLmN"
    agent_writes(session.root, DECIDED, statement=f"Deploy with token {secret}", rationale=f"api_key={secret}")
    [change] = listed(session).values()
    session.execute(session.watch.command_for(change, session.writes.seen([DECIDED])[0], ratify=False))
    written = "".join(p.read_text() for p in (session.root / "history").glob("*.jsonl"))
    assert secret not in written and REDACTED in written  # the reverted text's from, and the rationale's
    assert session.engram(DECIDED)["statement"] == "Statement number 6"
    assert "rationale" not in session.engram(DECIDED) or session.engram(DECIDED)["rationale"] != f"api_key={secret}"


def test_the_kept_reading_holds_its_large_tables_in_pieces_and_reads_them_back_whole(session, tmp_path, monkeypatch):
    import marshal

    from plur_desk.store.lists.parse_cache import read_private

    monkeypatch.setattr("plur_desk.app.changes.baseline_read.CACHE_CHUNK", 2)
    session.watch.start()
    session.execute(ApproveDrafts(tuple(session.writes.seen([DRAFT]))))
    cache = tmp_path / "cache" / "engram-blocks.marshal"
    fresh = read_baseline(session.root, session.trust)
    read_baseline(session.root, session.trust, cache)
    [kept] = read_private(baseline.verified_cache(cache), baseline.VERIFIED_TAG).values()
    pieces = [marshal.loads(piece) for piece in kept[2]]  # the engrams' values: unpacked a piece at a time
    assert len(fresh.baseline.engrams) > 2 and all(len(piece) <= 2 for piece in pieces)
    again = read_baseline(session.root, session.trust, cache)
    assert again.baseline == fresh.baseline and again.baseline.engram_at == fresh.baseline.engram_at


def test_the_lines_a_session_writes_are_not_parsed_back_yet_read_as_a_fresh_read_finds(session, monkeypatch):
    """What the session's own lines say is taken from the values they were made of (unpacking a whole store's
    snapshot again cost ~1 s at 50,000 engrams, on the writer's thread after the first decision); they are still
    verified, and the baseline is the one a fresh read of the file gives."""
    from plur_desk.app.changes import baseline_read
    from plur_desk.app.trust.verifier import TrustChecker

    parsed = []
    real = baseline_read.read_line
    monkeypatch.setattr(baseline_read, "read_line", lambda event: parsed.append(event) or real(event))
    session.execute(ApproveDrafts(tuple(session.writes.seen([DRAFT]))))  # the store's first: watching starts
    session.execute(ConfirmTension(session.writes.seen_tension("T-2026-1201-001")))
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-02-001"]))))
    read = session.watch.read()
    assert parsed == [] and read.lines == 3 and read.problems == []
    fresh = read_baseline(session.root, TrustChecker(session.root, session.trust.trust_file))
    assert len(parsed) == 3  # the fresh read parsed every line
    assert (read.baseline, read.problems, read.lines) == (fresh.baseline, fresh.problems, fresh.lines)
    assert (read.baseline.engram_at, read.baseline.extras) == (fresh.baseline.engram_at, fresh.baseline.extras)


def test_a_whole_store_s_baseline_lines_give_way_to_the_window_one_by_one(session, monkeypatch):
    """Each line of a whole-store baseline is ~2.5 ms of Python on the session's lane (50 lines at 50,000 engrams):
    a repaint under way goes first between two of them (infra/jobs.py `give_way`)."""
    import plur_desk.infra.jobs as jobs

    monkeypatch.setattr("plur_desk.domain.agents.baseline_lines.CHUNK", 1)
    given: list[int] = []
    give_way = jobs.give_way
    monkeypatch.setattr(jobs, "give_way", lambda: (given.append(1), give_way())[1])
    appended: list[int] = []
    append = baseline.append
    monkeypatch.setattr(baseline, "append", lambda root, lines: (appended.append(len(lines)), append(root, lines))[1])
    assert session.watch.start() is True
    assert appended and appended[0] > 2  # one line per engram here (fewer engrams than a `giving_way` step of 256)
    assert len(given) >= appended[0]  # a give_way after every line
