"""The search field speaks the query language; bulk actions apply to every result."""

from __future__ import annotations

import shutil

import pytest
from PySide6.QtCore import Qt

from plur_desk.app.demo import demo_source

from ui.conftest import answer_modal, engrams_on_disk, open_window_on


def test_query_filters_the_queue_and_bulk_applies_to_all_results(qtbot, window, store_copy):
    qtbot.waitUntil(lambda: window.finder.is_ready, timeout=20000)
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert window.search.hasFocus()
    qtbot.keyClicks(window.search, "scope:project:web")
    qtbot.waitUntil(
        lambda: window.drafts.model.rowCount() and all(r.scope == "project:web" for r in window.drafts.model.rows),
        timeout=3000,
    )
    ids = [r.id for r in window.drafts.model.rows]
    assert len(ids) >= 3
    window.drafts.focus_queue()
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    assert sorted(window.drafts.selected_ids()) == sorted(ids)

    def confirm(dialog):
        assert str(len(ids)) in dialog.windowTitle()
        if dialog.flagged.count():
            dialog.include.setChecked(True)  # flagged drafts in the batch are included only when ticked
        dialog.combo.setCurrentText("web team conventions, checked")
        qtbot.keyClick(dialog.combo.lineEdit(), Qt.Key.Key_Return)

    answer_modal(confirm)
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    on_disk = engrams_on_disk(store_copy)
    assert all(on_disk[i]["commitment"] == "decided" for i in ids)
    others = [e for e in on_disk.values() if e.get("commitment") == "draft" and e.get("status") == "active"]
    assert others and all(e["scope"] != "project:web" for e in others)


@pytest.mark.cold_vectors  # the window embeds the demo itself, in its worker process, then shows neighbours
def test_detail_shows_similar_engrams_by_cosine_only(qtbot, window):
    qtbot.waitUntil(lambda: window.status_labels["search"].text() == "search: full text + semantic", timeout=60000)
    target = next(r.id for r in window.drafts.model.rows if r.statement == "Use spaces for indentation in every file")
    window.drafts.select_id(target)
    window.review.show_current()
    qtbot.waitUntil(lambda: "cosine similarity" in window.drafts.detail.toPlainText())  # read off the GUI thread
    text = window.drafts.detail.toPlainText()
    assert "Use spaces, never tabs, for indentation in every file" in text
    assert "Looking for similar engrams" not in text  # the placeholder was replaced
    scores = [float(line.split(" · ")[0]) for line in text.splitlines() if " · ENG-" in line]
    assert scores and all(0.0 < s <= 1.0 for s in scores)  # one scale: cosine, never BM25's 5.45


def test_no_similar_engrams_without_the_model(qtbot, window):
    qtbot.waitUntil(lambda: window.finder.is_ready, timeout=20000)
    window.finder.service._embeddings_wanted = False  # as on a machine without the embeddings extra
    window.finder.service._embedder = None
    target = next(r.id for r in window.drafts.model.rows if r.statement == "Use spaces for indentation in every file")
    assert window.finder.similar_to(target) == []
    window.drafts.select_id(target)
    window.review.show_current()
    text = window.drafts.detail.toPlainText()
    assert "Similar engrams" not in text and "Looking for similar engrams" not in text  # nothing promised either


def test_a_held_j_renders_each_draft_at_once_and_fills_in_only_the_last(qtbot, window):
    """Similar engrams and the contradiction check search the whole store: they are read on the read pool, never
    on the GUI thread, and while J is held only the draft the selection stops on gets them (the detail itself,
    what a verdict rests on, is rendered at once for every draft passed)."""
    import threading

    qtbot.waitUntil(lambda: window.status_labels["search"].text() == "search: full text + semantic", timeout=60000)
    qtbot.waitUntil(lambda: window.conflicts.checker() is not None, timeout=20000)
    drafts = window.drafts
    threads: list[str] = []
    similar_to = window.finder.similar_to

    def recording(engram_id):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread().name)
        return similar_to(engram_id)

    window.finder.similar_to = recording  # type: ignore[method-assign]
    filled: list[str | None] = []
    replace = drafts.replace_in_detail

    def counting(old, new, *more):  # type: ignore[no-untyped-def]
        filled.append(drafts.current_id())
        replace(old, new, *more)

    drafts.replace_in_detail = counting  # type: ignore[method-assign]
    drafts.select_row(0)
    drafts.table.setFocus()
    passed = []
    for _ in range(3):
        qtbot.keyClick(drafts.table, Qt.Key.Key_J)
        passed.append(drafts.current_id())
        assert drafts.displayed_seen() is not None and drafts.displayed_seen().id == passed[-1]  # rendered at once
    qtbot.waitUntil(lambda: window.workspace.jobs.pending("reads") == 0 and bool(filled))
    assert filled == [passed[-1]]
    assert threads and threading.main_thread().name not in threads
    text = drafts.detail.toPlainText()
    assert "Looking for similar engrams" not in text and "Checking for contradictions" not in text


def test_a_query_s_answer_is_read_off_the_window_s_thread_and_the_list_stays_as_it_was_meanwhile(qtbot, window):
    import threading

    qtbot.waitUntil(lambda: window.finder.is_ready, timeout=20000)
    service = window.finder.service
    real, gate, asked_on = service.all_ids, threading.Event(), []

    def gated(text):  # type: ignore[no-untyped-def]
        asked_on.append(threading.current_thread())
        assert gate.wait(10)
        return real(text)

    service.all_ids = gated
    whole = [r.id for r in window.drafts.model.rows]
    window.navigation.focus_search()
    qtbot.keyClicks(window.search, "scope:project:web")
    qtbot.keyClick(window.search, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: bool(asked_on), timeout=5000)
    assert [r.id for r in window.drafts.model.rows] == whole  # not narrowed by a guess while the answer is read
    assert window.finder.searching() and window.status_labels["search"].text() == "searching…"
    window.finder._progress.changed.emit("embedding 1/2")  # the index moves on meanwhile: the list is still unnarrowed
    assert window.status_labels["search"].text() == "searching…"
    gate.set()
    qtbot.waitUntil(lambda: not window.finder.searching(), timeout=5000)
    rows = window.drafts.model.rows
    assert rows and len(rows) < len(whole) and all(r.scope == "project:web" for r in rows)
    assert threading.main_thread() not in asked_on
    assert window.status_labels["search"].text() == "embedding 1/2"  # the index's newest state, once answered


@pytest.mark.parametrize("risk_order", [False, True])
def test_a_query_lists_the_queue_once_when_its_answer_is_in_in_the_whole_queue_s_order(qtbot, window, risk_order):
    """Typing lists nothing while the answer is read (the list stays as it is); the answer lists the queue once,
    narrowed before it is put in order: the rows it keeps in the order they have in the whole queue."""
    import threading

    qtbot.waitUntil(lambda: window.finder.is_ready and window.scale.view is not None, timeout=20000)
    qtbot.waitUntil(lambda: window.jobs.pending("scale") == 0 and window.jobs.pending("session") == 0, timeout=20000)
    if risk_order != bool(window.scale.risk_order):
        window.scale.toggle_risk_order()
    whole = [r.id for r in window.drafts.model.rows]
    service = window.finder.service
    real, gate = service.all_ids, threading.Event()
    service.all_ids = lambda text: (gate.wait(10), real(text))[1]
    listed: list[int] = []
    set_rows = window.drafts.set_rows
    window.drafts.set_rows = lambda *a, **k: (listed.append(1), set_rows(*a, **k))[1]
    window.navigation.focus_search()
    qtbot.keyClicks(window.search, "scope:project:web")
    qtbot.keyClick(window.search, Qt.Key.Key_Return)
    qtbot.waitUntil(window.finder.searching, timeout=5000)
    qtbot.wait(200)
    assert listed == []  # asked; nothing listed for the asking
    gate.set()
    qtbot.waitUntil(lambda: not window.finder.searching() and bool(listed), timeout=5000)
    qtbot.wait(100)
    kept = [r.id for r in window.drafts.model.rows]
    assert listed == [1]
    assert kept and len(kept) < len(whole)
    assert kept == [i for i in whole if i in set(kept)]  # the whole queue's order, narrowed


def test_a_writer_typed_without_its_prefix_finds_it_and_a_filter_that_matches_nothing_says_why(qtbot, window):
    qtbot.waitUntil(lambda: window.finder.is_ready, timeout=20000)
    window.search.setText("by:claude-code")
    window.apply_search()
    qtbot.waitUntil(
        lambda: (
            window.drafts.model.rowCount() and all(r.writer.endswith("claude-code") for r in window.drafts.model.rows)
        ),
        timeout=5000,
    )
    window.search.setText("by:gemini")
    window.apply_search()
    qtbot.waitUntil(lambda: "writers here:" in window.drafts.empty.text(), timeout=5000)
    said = window.drafts.empty.text()
    assert "matched none of the drafts" in said and "by:gemini matches no engram in this store" in said
    assert "agent:claude-code" in said
    assert window.statusBar().currentMessage().startswith("Search: by:gemini matches no engram")


def test_opening_another_store_stops_the_embedding_of_the_one_left(qtbot, tmp_path, monkeypatch):
    """The index's lane runs one job at a time: the store opened next must not wait behind the whole embedding of
    the one left (minutes on a big store). The worker here is a stand-in that never ends on its own (the real one
    embeds the demo in half a second, too fast to be caught running); the embedding job reads its output as the
    real one's."""
    import subprocess
    import sys

    from plur_desk.index import embed_worker

    started: list[subprocess.Popen[bytes]] = []

    def endless(*_args: object, **_kwargs: object) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], stdout=subprocess.PIPE)
        started.append(proc)
        return proc

    monkeypatch.setattr(embed_worker, "start", endless)
    first, other = (
        shutil.copytree(demo_source(), tmp_path / name, ignore=shutil.ignore_patterns(".plur-desk"))
        for name in ("first", "other")
    )
    window = open_window_on(qtbot, tmp_path, first)
    qtbot.waitUntil(lambda: len(started) == 1, timeout=20000)
    left = window.finder.service
    window.open_path(other)
    qtbot.waitUntil(lambda: started[0].poll() is not None, timeout=10000)  # killed, not left to run
    qtbot.waitUntil(lambda: window.finder.is_ready and window.finder.service is not left, timeout=20000)
    assert window.finder.service.session.root == other.resolve()
