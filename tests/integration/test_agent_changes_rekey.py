"""The agent-changes baseline follows PLUR 0.21's rename of a watched engram (domain/agents/baseline_renames.py).

The store is written by the real PLUR 0.20 and watched; then it is shaped as 0.21 leaves it after a teammate's engram
with the same id was merged in before a watched one (CHANGELOG 0.21.0 P1: the later, different copy is renamed
`<id>-D<8 hex>`, with an `engram_rekeyed` event). Only the teammate's engram is new; the watched one is not "gone",
and its new id is not an engram nobody decided on, in `plur-desk changes` and in the window's Changes queue.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from plur_desk.app.changes.changes_cli import main as changes_main
from plur_desk.app.review.bootstrap import open_session
from plur_desk.domain.plur_rules.rekey import fresh_duplicate_id
from plur_desk.store.lists.yaml_dump import dump_engrams_document
from plur_desk.store.lists.yaml_load import load_general

from support.stores import plur

pytestmark = pytest.mark.interop


def _rekey_as_021(store: Path, watched_id: str) -> str:
    records = list(load_general((store / "engrams.yaml").read_text(encoding="utf-8"))["engrams"])
    at = next(i for i, r in enumerate(records) if r["id"] == watched_id)
    teammate = {**records[at], "statement": "A teammate's engram minted with the same id", "content_hash": "t" * 64}
    others = {str(r["id"]) for r in records} - {watched_id}
    new_id = fresh_duplicate_id(watched_id, records[at], others | {watched_id})
    records[at] = {**records[at], "id": new_id}
    records.insert(at, teammate)  # the teammate's copy comes first: 0.21 renames the watched one
    (store / "engrams.yaml").write_text(dump_engrams_document({"engrams": records}), encoding="utf-8")
    now = datetime.now(UTC)
    event = {
        "event": "engram_rekeyed",
        "engram_id": new_id,
        "timestamp": now.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
        "data": {"from": watched_id, "to": new_id, "store": str(store / "engrams.yaml")},
        "reason": "duplicate id: a later, different copy was given a fresh id (P1)",
    }
    with (store / "history" / f"{now:%Y-%m}.jsonl").open("a", encoding="utf-8") as log:
        log.write(json.dumps(event) + "\n")
    return new_id


def test_a_watched_engram_plur_renamed_is_neither_gone_nor_new(tmp_path, capsys):
    store, home = tmp_path / "store", tmp_path / "node-home"
    store.mkdir()
    (store / "config.yaml").write_text('provenance:\n  identity: "agent:claude-code"\n', encoding="utf-8")
    texts = ["The CI pipeline uses Node 20 for all builds", "Logs are kept for thirty days"]
    made = plur(store, home, [{"op": "learn", "statement": t, "options": {"scope": "project:demo"}} for t in texts])
    watched_id = made[0]["id"]
    assert changes_main([str(store), "--start", "--reviewer", "Alice Reviewer"]) == 0

    new_id = _rekey_as_021(store, watched_id)
    capsys.readouterr()
    assert changes_main([str(store), "--json"]) == 1
    listed = json.loads(capsys.readouterr().out)["changes"]
    assert [(c["id"], c["kind"], c["after"]["statement"]) for c in listed] == [
        (watched_id, "created_active", "A teammate's engram minted with the same id")
    ]
    session = open_session(store, "Alice Reviewer")
    assert [(c.id, c.kind) for c in session.watch.changes()] == [(watched_id, "created_active")]

    plur(store, home, [{"op": "update", "id": new_id, "fields": {"statement": "The CI pipeline uses Node 22"}}])
    session.reload_if_changed()
    found = {c.id: c for c in session.watch.changes()}
    assert {i: c.kind for i, c in found.items()} == {watched_id: "created_active", new_id: "rewritten"}
    assert found[new_id].before is not None and found[new_id].before["statement"] == texts[0]
