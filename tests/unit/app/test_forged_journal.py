"""Adversarial: the write-ahead journal lives in the store folder, which every agent writing to the store can
write. Recovery on open once trusted any record in it and signed the events it found with the *reopening*
reviewer's key when they named that reviewer, so an agent could mint a validly signed `kind: human` approval the
reviewer never made. A record an agent writes is not signed by the reviewer: it is never applied, and nothing of it
reaches history (more in test_journal_authenticity.py).
"""

from __future__ import annotations

import hashlib
import json
import socket

from plur_desk.app.check import run_check
from plur_desk.domain.commands import ApproveDrafts

from support.blocks import rewrite_block
from support.sessions import reopen as _reopen

ADA = "Ada Reviewer"
VICTIM = "ENG-2026-11-02-001"  # a draft nobody decided


def _dead_pid() -> int:
    import os

    pid = 4_000_000
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        except PermissionError:
            pass
        pid += 1


def _forged(template):
    """Ada's real event's shape with another engram id and a made-up signature."""
    event = {k: v for k, v in template.items() if k not in ("prev", "hash")}
    event["signature"] = "made up by the agent"
    event["engram_id"] = VICTIM
    return event


def _plant(root, steps):
    """A "killed writer's" journal record, as an agent can write it into the store folder."""
    record = {
        "format": 1,
        "action": "approve",
        "label": f"approve {VICTIM}",
        "created_at": "2026-12-02T12:00:00Z",
        "host": socket.gethostname(),
        "pid": _dead_pid(),
        "steps": steps,
    }
    journal = root / ".plur-desk" / "journal"
    journal.mkdir(parents=True, exist_ok=True)
    (journal / "20261202T120000-1-1.json").write_text(json.dumps(record))


def _human_events(root):
    out = []
    for path in sorted((root / "history").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            event = json.loads(line)
            if (event.get("actor") or {}).get("kind") == "human":
                out.append(event)
    return out


def test_a_journal_record_written_by_an_agent_does_not_become_a_signed_human_approval(session):
    root = session.store.root
    # Ada really decides one draft: her key is now registered in keys.yaml, her event is a template
    ada = _reopen(root, ADA)
    ada.execute(ApproveDrafts(tuple(ada.writes.seen(["ENG-2026-11-01-001"])), "decided", ""))
    (template,) = _human_events(root)
    assert run_check(root).exit_code == 0

    # the agent (any process that writes the store) plants a "killed writer's" record approving another draft
    before = hashlib.sha256((root / "engrams.yaml").read_bytes()).hexdigest()
    # her real event's shape with another engram id and a made-up signature: recovery re-signs any event that
    # has a `signature` key and names the reopening reviewer, without verifying what it had
    review = {"state": "approved", "by": ADA, "at": template["timestamp"]}
    _plant(
        root,
        [
            # a first step "already applied" (its after-hash is the file as it is), so nothing is rolled back
            {
                "file": "engrams",
                "before_sha256": None,
                "after_sha256": before,
                "planned": False,
                "changes": [],
                "events": [],
                "history_offsets": {},
            },
            {
                "file": "engrams",
                "before_sha256": before,
                "after_sha256": None,
                "planned": False,
                "changes": [
                    {
                        "key": VICTIM,
                        "fields": [["commitment", "draft", "decided"], ["review", {"$absent": True}, review]],
                    }
                ],
                "events": [_forged(template)],
                "history_offsets": {},
            },
        ],
    )

    # Ada opens the store for review again (the window does this in its load worker)
    reopened = _reopen(root, ADA)

    approved = [e for e in _human_events(root) if e.get("engram_id") == VICTIM]
    report = run_check(root)
    # whatever recovery appended must not verify as Ada's own decision: she never saw this draft
    assert approved == [] or report.exit_code == 1, (approved, reopened.recovery_note, report.to_text())
    assert reopened.engram(VICTIM)["commitment"] == "draft", reopened.recovery_note


def test_an_agent_edit_with_a_planted_applied_step_is_not_signed_in_the_reviewers_name(session):
    """The agent approves the draft in engrams.yaml itself and plants a record saying that step was written and
    only its event is missing: recovery may append the event (the change is on disk already), but never with a
    signature made valid by the reopening reviewer's key; check reports it as an unsigned human claim."""
    root = session.store.root
    ada = _reopen(root, ADA)
    ada.execute(ApproveDrafts(tuple(ada.writes.seen(["ENG-2026-11-01-001"])), "decided", ""))
    (template,) = _human_events(root)
    path = root / "engrams.yaml"
    rewrite_block(root, VICTIM, "commitment: draft", "commitment: decided")
    after = hashlib.sha256(path.read_bytes()).hexdigest()
    _plant(
        root,
        [
            {
                "file": "engrams",
                "before_sha256": "0" * 64,
                "after_sha256": after,
                "planned": False,
                "changes": [{"key": VICTIM, "fields": [["commitment", "draft", "decided"]]}],
                "events": [_forged(template)],
                "history_offsets": {},
            }
        ],
    )

    _reopen(root, ADA)
    appended = [e for e in _human_events(root) if e.get("engram_id") == VICTIM]
    assert all("signature" not in e for e in appended), appended
    report = run_check(root)
    assert report.exit_code == 1
    assert VICTIM in report.to_text() or any(c.get("engram_id") == VICTIM for c in report.untrusted), report.to_text()
