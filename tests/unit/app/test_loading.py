"""The window's loading steps, as the loading thread runs them."""

from __future__ import annotations

import gc
import json
import shutil

from plur_desk.app.demo import demo_source
from plur_desk.app.review import loading
from plur_desk.app.review.bootstrap import open_session


def test_indexing_a_long_history_runs_no_young_collection(tmp_path) -> None:
    """Indexing a history builds objects by the hundred thousand, none of them garbage: a young collection in the
    middle (10-43 ms each at 1,000,000 lines) only held the interpreter lock the window's thread was waiting for."""
    store = tmp_path / "store"
    shutil.copytree(demo_source(), store)
    month = store / "history" / "2025-01.jsonl"
    month.parent.mkdir(exist_ok=True)
    with month.open("w", encoding="utf-8") as handle:
        for n in range(6000):
            event = {"event": "engram_updated", "engram_id": f"ENG-2025-01-01-{n % 500:03d}",
                     "timestamp": f"2025-01-{1 + n % 28:02d}T00:00:00.000Z", "data": {"field": "statement"},
                     "actor": {"asserted_by": "agent:codex"}}  # fmt: skip
            handle.write(json.dumps(event, separators=(",", ":")) + "\n")
    session = open_session(store, "Ada Reviewer", load_history=False, use_cache=False)
    passes: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            passes.append(info["generation"])

    thresholds = gc.get_threshold()
    gc.set_threshold(50, 2, 2)  # a young pass every 50 allocations: indexing 6,000 lines would see hundreds
    gc.callbacks.append(seen)
    try:
        loading.load_history(session)
    finally:
        gc.callbacks.remove(seen)
        gc.set_threshold(*thresholds)
    assert session.history.loaded and len(session.history.lines) >= 6000
    assert len(passes) <= 2, len(passes)  # saving the cache after the index may meet one or two (582 before)
