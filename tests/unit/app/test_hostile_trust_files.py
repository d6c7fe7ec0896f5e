"""Adversarial input in the folders an agent writes beside the store's files (.plur-desk/journal/, the watched
baseline): a record or line no plur_desk wrote is reported with where and why, and never stops `check` or the
store opening for review with a traceback."""

from __future__ import annotations

import json

from plur_desk.app.changes.baseline_read import read_baseline
from plur_desk.app.check import run_check
from plur_desk.store import baseline
from plur_desk.store.journal import Journal

from support.sessions import reopen


def test_a_journal_record_whose_pid_is_out_of_range_is_reported_not_raised(session):
    root = session.root
    journal = root / ".plur-desk" / "journal"
    journal.mkdir(parents=True)
    # 1e400 is valid JSON, read as float infinity: no process id
    (journal / "20261202T120000-1-1.json").write_text('{"format": 1, "action": "approve", "pid": 1e400, "steps": []}')
    records, unreadable = Journal(root).pending()
    assert records == [] and len(unreadable) == 1 and "20261202T120000-1-1.json" in unreadable[0]
    report = run_check(root, use_cache=False)
    assert report.exit_code == 1
    assert any(line.startswith("unverifiable_journal_record") for line in report.unfinished)
    reopened = reopen(root, "Ada Reviewer")  # opening for review finishes or reports records: this one is reported
    assert reopened.engrams_by_id()


def test_a_baseline_line_nested_too_deeply_is_a_reported_line(session):
    root = session.root
    session.watch.start()
    path = baseline.path_of(root)
    with path.open("a") as handle:
        handle.write("[" * 200_000 + "\n")  # parses as nothing: Python's decoder gives up on the depth
    read = read_baseline(root, session.trust)
    assert read.baseline.watched and [n for n, _why in read.problems] == [2]
    report = run_check(root, use_cache=False)
    assert [c["line"] for c in report.untrusted if c["file"] == baseline.RELATIVE] == [2]
    assert json.loads(report.to_json())["exit_code"] == 1


def test_a_history_line_nested_too_deeply_is_a_malformed_line_not_a_crash(session):
    from plur_desk.app.review.bootstrap import open_session
    from plur_desk.domain.commands import ApproveDrafts
    from plur_desk.infra.clock import FixedClock

    from support.sessions import NOW

    root = session.root
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"])), "decided", ""))
    month = root / "history" / "2026-12.jsonl"
    with month.open("a") as handle:  # names an engram, so every reader looking for its events meets the line
        handle.write('{"engram_id":"ENG-2026-11-01-001","data":' + "[" * 200_000 + "\n")
    report = run_check(root, use_cache=False)
    (bad,) = report.history["malformed_lines"]
    assert bad["line"] == 2 and "nested too deeply" in bad["reason"]
    opened = open_session(root, "Ada Reviewer", clock=FixedClock(NOW), use_cache=False, for_review=True)
    assert next(e.get("event") for e in opened.history.timeline("ENG-2026-11-01-001")) == "engram_updated"
    assert "ENG-2026-11-01-001" not in opened.verdicts.unverified_reviews()
