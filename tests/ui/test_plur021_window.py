"""What the window shows of a store as PLUR 0.21 reads it: the engrams an interrupted sync holds in
.git/plur-held.json (counted, listed, marked, never decided on or written) and both engrams of a shared id."""

from __future__ import annotations

import hashlib
import json

import pytest

from plur_desk.domain.commands import ApproveDrafts
from plur_desk.infra.errors import ActionRefused
from plur_desk.store.lists.yaml_dump import dump_engrams_document
from plur_desk.store.lists.yaml_load import load_general

from ui.conftest import open_window_on, wait_loaded


def _files(store) -> dict[str, str]:
    wanted = [store / "engrams.yaml", store / "tensions.yaml", store / ".git" / "plur-held.json"]
    wanted += sorted((store / "history").glob("*.jsonl"))
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in wanted if p.exists()}


def test_held_engrams_are_counted_listed_and_read_only(qtbot, tmp_path, store_copy):
    records = load_general((store_copy / "engrams.yaml").read_text(encoding="utf-8"))["engrams"]
    draft = next(r for r in records if r.get("commitment") == "draft")
    parked = {**draft, "id": "ENG-2026-01-01-901", "scope": "local", "statement": "A local note parked by sync"}
    clashing = {**draft, "scope": "local", "statement": "Another machine's local note with this id"}
    (store_copy / ".git").mkdir(exist_ok=True)
    held = {
        "version": 1,
        "files": [{"file": "engrams.yaml", "saved": "", "staged": "", "held": [parked, clashing, draft]}],
    }  # draft: back in the file already
    (store_copy / ".git" / "plur-held.json").write_text(json.dumps(held), encoding="utf-8")
    before = _files(store_copy)

    win = open_window_on(qtbot, tmp_path, store_copy)
    wait_loaded(qtbot, win)
    session = win.session
    assert session is not None
    assert session.counts()["held"] == 2
    shown, problem = session.held_engrams()
    assert problem is None
    renamed = next(str(e["id"]) for e in shown if e["statement"] == clashing["statement"])
    assert renamed.startswith(f"{draft['id']}-D")  # its id is taken in engrams.yaml: read under 0.21's fresh id
    banner = win.banner.text()
    assert "2 engrams held by an interrupted PLUR sync" in banner
    assert "ENG-2026-01-01-901: A local note parked by sync" in banner and renamed in banner
    assert "2 held by an interrupted PLUR sync" in win.status_labels["counts"].text()
    for engram_id in ("ENG-2026-01-01-901", renamed):
        with pytest.raises(ActionRefused, match="held by an interrupted PLUR sync"):
            session.execute(ApproveDrafts(tuple(session.writes.seen([engram_id]))))
    assert _files(store_copy) == before


def test_both_engrams_of_a_shared_id_wait_in_the_queue(qtbot, tmp_path, store_copy):
    # Two machines minted one id: the queue shows both drafts, the later one under the id PLUR 0.21 gives it.
    path = store_copy / "engrams.yaml"
    records = load_general(path.read_text(encoding="utf-8"))["engrams"]
    draft = next(r for r in records if r.get("commitment") == "draft")
    later = {**draft, "statement": "A teammate's draft minted with the same id"}
    path.write_text(dump_engrams_document({"engrams": [*records, later]}), encoding="utf-8")
    win = open_window_on(qtbot, tmp_path, store_copy)
    wait_loaded(qtbot, win)
    rows = {r.id: r for r in win.drafts.model.rows}
    later_id = next(i for i in rows if i.startswith(f"{draft['id']}-D"))
    assert rows[draft["id"]].statement == draft["statement"]
    assert rows[later_id].statement == later["statement"]
