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


def test_an_early_open_is_the_same_first_step_and_its_unlock_questions_go_to_the_window(tmp_path) -> None:
    store = tmp_path / "store"
    shutil.copytree(demo_source(), store)
    early = loading.EarlyOpen(store, "Ada Reviewer", None)
    asked: list[str] = []
    session, reasons, _notice = early.take(lambda reason: asked.append(reason) or True)()
    assert session.reviewer.name == "Ada Reviewer" and session.root == store.resolve() and reasons == []
    drafts = open_session(store, "Ada Reviewer", load_history=False, use_cache=False).counts()["drafts"]
    assert drafts > 0 and session.counts()["drafts"] == drafts
    assert session.keys is not None and session.keys.ask_unlock is not None
    assert session.keys.ask_unlock("the keyring is locked") is True and asked == ["the keyring is locked"]


def test_an_unlock_question_asked_before_the_window_takes_the_open_waits_for_it(tmp_path, monkeypatch) -> None:
    """The keyring's question needs the window: asked earlier, it is put to the window once there is one, not
    answered "no" (which would refuse a decision the reviewer never saw questioned)."""

    import threading
    import time

    asking = threading.Event()

    def asks_at_once(path, reviewer, clock, ask_unlock):  # type: ignore[no-untyped-def]
        asking.set()
        return ask_unlock("the keyring is locked"), reviewer, path

    monkeypatch.setattr(loading, "open_drafts", asks_at_once)
    early = loading.EarlyOpen(tmp_path, "Ada Reviewer", None)
    assert asking.wait(10)
    time.sleep(0.05)  # (the question is put before the window takes the open)
    asked: list[str] = []
    assert early.take(lambda reason: asked.append(reason) or True)() == (True, "Ada Reviewer", tmp_path)
    assert asked == ["the keyring is locked"]


def test_a_failed_early_open_is_raised_to_the_window(tmp_path) -> None:
    from plur_desk.infra.errors import NotAPlurStore

    early = loading.EarlyOpen(tmp_path / "nothing here", "Ada Reviewer", None)
    wait = early.take(lambda _reason: False)
    try:
        wait()
    except NotAPlurStore:
        pass
    else:
        raise AssertionError("the early open's failure was not raised")
