"""`.git/plur-held.json` read as PLUR 0.21's readers read it (check counts it; nothing is written).

The case is PLUR's own (packages/core/test for owner decision P1b, "a withheld local record whose id arrives from
the remote is re-id'd"; a plur-ai/plur copy read without its commit): the pulled file holds
ENG-2026-09-26-002 (B's), the held local one with that id is read under a fresh `-D` id.
"""

from __future__ import annotations

import json

from plur_desk.app.check import run_check
from plur_desk.app.review.bootstrap import open_session
from plur_desk.domain.plur_rules.rekey import fresh_duplicate_id
from plur_desk.store.lists.yaml_dump import dump_engrams_document
from plur_desk.store.team.held import merge_held, read_held

SHARED = {"id": "ENG-2026-09-26-001", "scope": "global", "statement": "A shared"}
PULLED = {"id": "ENG-2026-09-26-002", "scope": "global", "statement": "B team fact"}
LOCAL = {"id": "ENG-2026-09-26-002", "scope": "local", "statement": "A local note"}
OTHER_LOCAL = {"id": "ENG-2026-09-26-003", "scope": "local", "statement": "Another local note"}


def _engram(record):
    return {**record, "status": "active", "type": "behavioral"}


def _store(tmp_path, held):
    root = tmp_path / "store"
    (root / ".git").mkdir(parents=True)
    (root / "engrams.yaml").write_text(dump_engrams_document({"engrams": [_engram(SHARED), _engram(PULLED)]}))
    doc = {"version": 1, "note": "…", "files": [{"file": "engrams.yaml", "saved": "", "staged": "", "held": held}]}
    (root / ".git" / "plur-held.json").write_text(json.dumps(doc))
    return root


def test_the_held_local_engram_is_read_under_a_fresh_id_and_the_others_as_they_are(tmp_path):
    held = [_engram(LOCAL), _engram(OTHER_LOCAL), _engram(SHARED)]  # SHARED: already back in the file
    root = _store(tmp_path, held)
    merged = merge_held([_engram(SHARED), _engram(PULLED)], read_held(root))
    fresh = fresh_duplicate_id(
        LOCAL["id"], _engram(LOCAL), {"ENG-2026-09-26-001", "ENG-2026-09-26-002", OTHER_LOCAL["id"]}
    )
    assert [e["id"] for e in merged.engrams] == [fresh, OTHER_LOCAL["id"]]
    assert merged.renamed == [(LOCAL["id"], fresh)] and fresh.startswith("ENG-2026-09-26-002-D")
    # restored already under its fresh id (an earlier, interrupted restore): not read twice
    again = merge_held([_engram(SHARED), _engram(PULLED), {**_engram(LOCAL), "id": fresh}], read_held(root))
    assert [e["id"] for e in again.engrams] == [OTHER_LOCAL["id"]]


def test_check_counts_the_held_engrams_and_writes_nothing(tmp_path):
    root = _store(tmp_path, [_engram(LOCAL), _engram(OTHER_LOCAL)])
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    report = run_check(root, use_cache=False)
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before
    assert report.engrams["held"] == 2
    (note,) = [w for w in report.warnings if "plur-held.json" in w]
    assert "2 scope:local engram(s)" in note and "ENG-2026-09-26-002 is read as ENG-2026-09-26-002-D" in note
    assert report.exit_code == 0


def test_an_unreadable_held_file_is_reported(tmp_path):
    root = _store(tmp_path, [])
    (root / ".git" / "plur-held.json").write_text('{"files": [{"file": "engrams.yaml"}]}')
    report = run_check(root, use_cache=False)
    assert any("is not a held-records file" in w for w in report.warnings)


def test_the_window_says_why_a_held_file_is_unread_and_writes_nothing(tmp_path):
    root = _store(tmp_path, [])
    (root / ".git" / "plur-held.json").write_text('{"files": [{"file": "engrams.yaml"}]}')
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    session = open_session(root, "Alice Reviewer", use_cache=False)
    held, problem = session.held_engrams()
    assert held == [] and problem is not None and "is not a held-records file" in problem
    assert "PLUR 0.21 refuses to sync" in problem
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before
