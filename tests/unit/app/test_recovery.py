"""Recovery of a two-file action killed between its files: completed when the second file still holds what the
reviewer saw (PLUR moving `updated_at` meanwhile does not matter), kept and reported when someone changed the same
fields since."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from plur_desk.app.check import run_check

from support.blocks import rewrite_block
from support.sessions import reopen as _reopen
from support.users import another_user

ROOT = Path(__file__).resolve().parents[3]
NO_KEYRING = "keyring.backends.fail.Keyring"  # child processes never touch a real keyring
LOSER, WINNER, TENSION = "ENG-2026-11-05-001", "ENG-2026-11-06-001", "T-2026-1201-001"

_KILLED_RESOLVE = rf"""
import os, sys
from datetime import datetime, timezone
from pathlib import Path
from plur_desk.app.review.session import ReviewSession
from plur_desk.domain.commands import ResolveTension
from plur_desk.domain.review import Reviewer
from plur_desk.infra.clock import FixedClock
from plur_desk.store.plur_store import PlurStore
store = PlurStore(Path(sys.argv[1])); store.load()
session = ReviewSession(store, Reviewer("Ada Reviewer"), FixedClock(datetime(2026, 12, 2, 12, 0, tzinfo=timezone.utc)))
os.environ["PLUR_DESK_CRASH_AT"] = "step-done:1"  # the tension record and its event are written, the loser is not
session.execute(ResolveTension(session.writes.seen_tension("{TENSION}"), "{WINNER}"))
"""


def _killed_between_files(root: Path) -> None:
    env = dict(os.environ, PYTHON_KEYRING_BACKEND=NO_KEYRING, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", _KILLED_RESOLVE, str(root)], capture_output=True, text=True, env=env)
    assert out.returncode == -9, out.stderr


def test_second_file_is_written_on_reopen_even_after_plur_moved_updated_at(session):
    root = session.store.root
    _killed_between_files(root)
    assert session.store.journal.pending()[0]
    rewrite_block(root, LOSER, "status: active", "status: active\n    updated_at: '2026-12-03T08:00:00.000Z'")
    (record,) = (root / ".plur-desk" / "journal").glob("*.json")
    journaled = json.loads(record.read_text())["steps"][1]["events"]
    reopened = _reopen(root, "Ada Reviewer")
    assert "completed 1 interrupted action(s) (resolve T-2026-1201-001" in reopened.recovery_note
    assert reopened.engram(LOSER)["status"] == "retired"
    assert reopened.tension(TENSION)["status"] == "resolved"
    events = [json.loads(x) for x in (root / "history" / "2026-12.jsonl").read_text().splitlines()]
    assert [e["event"] for e in events] == ["tension_reviewed", "engram_retired"]
    assert events[1:] == journaled  # appended as she signed it when she journaled it: recovery signs nothing
    assert events[1]["actor"]["asserted_by"] == "Ada Reviewer"
    report = run_check(root)  # her own key proved the journaled record and its event
    assert report.exit_code == 0, report.to_text()


def test_someone_else_cannot_finish_a_decision_whose_signature_they_cannot_prove(session):
    """The killed writer never registered its key, so nobody but Ada can prove the journaled event is hers (the
    journal is in the store folder, where an agent can write): the record is kept, nothing of it applied, and Ada's
    own next session finishes it."""
    root = session.store.root
    _killed_between_files(root)
    before = (root / "engrams.yaml").read_bytes()
    with another_user(root.parent / "someone-else"):  # another person: Ada's key is not theirs
        reopened = _reopen(root, "Someone Else")
    assert "1 journal record(s) not applied" in reopened.recovery_note
    assert "does not verify with a key you trust" in reopened.recovery_note
    assert (root / "engrams.yaml").read_bytes() == before
    assert reopened.engram(LOSER)["status"] == "active"
    assert len(reopened.store.journal.pending()[0]) == 1
    assert run_check(root).exit_code == 1
    ada = _reopen(root, "Ada Reviewer")
    assert "completed 1 interrupted action(s)" in ada.recovery_note
    assert ada.engram(LOSER)["status"] == "retired"
    assert run_check(root).exit_code == 0


def test_second_file_changed_since_is_kept_and_reported(session):
    root = session.store.root
    session.keys.register(session.now())  # Ada's key is known: check can verify her record, and sees the conflict
    _killed_between_files(root)
    rewrite_block(root, LOSER, "status: active", "status: active\n    rationale: Someone wrote a rationale meanwhile")
    reopened = _reopen(root, "Ada Reviewer")
    assert "could not finish 1" in reopened.recovery_note
    assert "changed since" in reopened.recovery_note
    assert reopened.engram(LOSER)["status"] == "active"
    assert len(reopened.store.journal.pending()[0]) == 1  # kept for a person to decide
    report = run_check(root)
    assert report.exit_code == 1
    assert any("engrams.yaml changed since" in u for u in report.unfinished), report.unfinished


_KILLED_APPROVE = r"""
import os, sys
from datetime import datetime, timezone
from pathlib import Path
from plur_desk.app.review.session import ReviewSession
from plur_desk.domain.commands import ApproveDrafts
from plur_desk.domain.review import Reviewer
from plur_desk.infra.clock import FixedClock
from plur_desk.store.plur_store import PlurStore
store = PlurStore(Path(sys.argv[1])); store.load()
session = ReviewSession(store, Reviewer("Ada Reviewer"), FixedClock(datetime(2026, 12, 2, 12, 0, tzinfo=timezone.utc)))
os.environ["PLUR_DESK_CRASH_AT"] = "store-renamed"  # engrams.yaml written, its event not appended yet
session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"]))))
"""


def test_an_approval_plur_renamed_since_is_found_under_its_new_id_and_never_applied_to_another(session):
    # Killed after the write; then PLUR 0.21 read a teammate's engram with the same id first in the file, renamed
    # ours <id>-D… and logged `engram_rekeyed`. Judged by the old id alone, the step looked "not applied" (the
    # teammate's draft has the old values) and recovery would have approved the teammate's text.
    from plur_desk.domain.plur_rules.rekey import fresh_duplicate_id
    from plur_desk.store.lists.yaml_dump import dump_engrams_document
    from plur_desk.store.lists.yaml_load import load_general

    root = session.store.root
    env = dict(os.environ, PYTHON_KEYRING_BACKEND=NO_KEYRING, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", _KILLED_APPROVE, str(root)], capture_output=True, text=True, env=env)
    assert out.returncode == -9, out.stderr
    engrams = load_general((root / "engrams.yaml").read_text())["engrams"]
    ours = next(e for e in engrams if e["id"] == "ENG-2026-11-01-001")
    assert ours["commitment"] == "decided"
    teammate = {**ours, "statement": "A teammate's draft minted with the same id", "commitment": "draft"}
    del teammate["review"]
    new_id = fresh_duplicate_id(ours["id"], ours, {e["id"] for e in engrams})
    renamed = [teammate if e is ours else e for e in engrams] + [{**ours, "id": new_id}]
    (root / "engrams.yaml").write_text(dump_engrams_document({"engrams": renamed}))
    rekeyed = {
        "event": "engram_rekeyed",
        "engram_id": new_id,
        "timestamp": "2026-12-02T12:00:01.000Z",
        "data": {"from": ours["id"], "to": new_id},
    }
    with (root / "history" / "2026-12.jsonl").open("a") as log:
        log.write(json.dumps(rekeyed) + "\n")

    (line,) = [u for u in run_check(root).unfinished if u.startswith("pending journal record")]
    assert "engrams.yaml applied" in line and "1 history event(s) missing" in line
    reopened = _reopen(root, "Ada Reviewer")
    assert reopened.engram(ours["id"])["commitment"] == "draft"  # the teammate's text was not approved
    assert reopened.engram(new_id)["commitment"] == "decided"
    events = [json.loads(x) for x in (root / "history" / "2026-12.jsonl").read_text().splitlines()]
    # her event, appended verbatim as she signed it (recovery marks and signs nothing)
    assert [(e["event"], e["engram_id"], e["data"].get("recovered")) for e in events][-1] == (
        "engram_updated",
        ours["id"],
        None,
    )
