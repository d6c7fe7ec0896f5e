"""Whether the history is hash-chained is found out while the history loads (every month searched once, on the
loading thread), so the first decision's append does not search a large history inside the store's lock."""

from __future__ import annotations

import json

from plur_desk.domain.commands import ApproveDrafts, RejectDrafts
from plur_desk.store.history import chain

from support.sessions import small_session


def test_the_first_decision_searches_no_month_again(tmp_path, monkeypatch):
    session = small_session(tmp_path)
    history = session.root / "history"
    history.mkdir(exist_ok=True)
    old = {"event": "engram_updated", "engram_id": "ENG-2026-11-01-001", "timestamp": "2025-01-01T00:00:00.000Z"}
    (history / "2025-01.jsonl").write_text("".join(json.dumps({**old, "n": i}) + "\n" for i in range(500)))
    session.load_history()
    scanned: list[str] = []
    real_scan = chain._scan
    monkeypatch.setattr(
        chain, "_scan", lambda path, info, done: scanned.append(path.name) or real_scan(path, info, done)
    )
    draft = next(r.id for r in session.queue.rows())
    session.execute(ApproveDrafts(tuple(session.writes.seen([draft])), "decided"))
    assert session.engram(draft)["commitment"] == "decided"
    assert scanned == []  # the first decision searched nothing: the load did
    session.execute(RejectDrafts(tuple(session.writes.seen([next(r.id for r in session.queue.rows())])), "not true"))
    assert scanned == ["2026-12.jsonl"]  # only the month our first decision appended to, from where it was read
