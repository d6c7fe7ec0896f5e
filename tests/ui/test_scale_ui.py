"""Review at scale on the real window: the Writers and Clusters panes, the risk column and order, the writer's
line, and settling a cluster with one key (assertions on the YAML and history written)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from plur_desk.app.demo import demo_source
from plur_desk.domain.commands import ApproveDrafts
from plur_desk.ui.common.models import DraftColumn
from plur_desk.ui.main_window import MainWindow
from plur_desk.ui.scale.scale_support import ScaleController

from support.stores import plur
from ui.conftest import engrams_on_disk, human_events

PARAPHRASES = [
    "Run the full test suite before pushing to main",
    "Always run the full test suite before pushing to main",
    "Run the full test suite before you push to main now",
]


@pytest.fixture(autouse=True)
def _lexical(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ScaleController, "semantic_clusters", False)  # word overlap: fast and deterministic


@pytest.fixture(scope="module")
def vectors_of(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo store plus three drafts PLUR itself learned that say the same thing (learned once for the file)."""
    dest = tmp_path_factory.mktemp("paraphrased") / "store"
    shutil.copytree(demo_source(), dest)
    ops = [
        {"op": "learn", "statement": s, "options": {"scope": "project:web", "commitment": "draft"}} for s in PARAPHRASES
    ]
    plur(dest, dest.parent / "node-home", ops)
    return dest


@pytest.fixture
def store_copy(tmp_path: Path, vectors_of: Path) -> Path:
    """A copy of the paraphrased demo store for each test."""
    return Path(shutil.copytree(vectors_of, tmp_path / "store"))


def _scaled(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(
        lambda: window.scale.view is not None and bool(window.scale.risk) and window.scale.settled,
        timeout=20000,
    )


def _learned_ids(window: MainWindow) -> set[str]:
    return {r.id for r in window.drafts.model.rows if r.statement in PARAPHRASES}


def test_writers_pane_lists_writers_sorts_and_filters_the_queue(qtbot, qtmodeltester, window: MainWindow) -> None:
    _scaled(qtbot, window)
    qtbot.keyClick(window, Qt.Key.Key_7, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.currentWidget() is window.writers
    model = window.writers.model
    qtbot.waitUntil(lambda: model.rowCount() >= 3)
    qtmodeltester.check(model, force_py=True)
    labels = [model.index(r, 0).data() for r in range(model.rowCount())]
    assert "agent:codex · plur-core" in labels
    window.writers.table.horizontalHeader().sectionClicked.emit(1)  # Drafts
    counts = [int(model.index(r, 1).data()) for r in range(model.rowCount())]
    assert counts in (sorted(counts), sorted(counts, reverse=True))
    row = next(r for r in range(model.rowCount()) if model.index(r, 0).data() == "agent:codex · plur-core")
    window.writers.table.selectRow(row)
    assert "agent:codex" in window.writers.detail.toPlainText()
    qtbot.keyClick(window.writers.table, Qt.Key.Key_Return)
    assert window.tabs.currentWidget() is window.drafts
    assert window.drafts.model.rows and all(r.writer == "agent:codex" for r in window.drafts.model.rows)
    assert "Showing only drafts by agent:codex" in window.drafts.banner.text()


def test_risk_column_reasons_and_order_toggle(qtbot, window: MainWindow) -> None:
    _scaled(qtbot, window)
    model = window.drafts.model
    column = len(DraftColumn)
    assert model.headerData(column, Qt.Orientation.Horizontal) == "Risk"
    text = model.index(0, column).data()
    assert text and "·" in text
    assert "weight" not in text and "scope x3" in model.index(0, column).data(Qt.ItemDataRole.ToolTipRole)
    before = [r.id for r in model.rows]
    window.drafts.focus_queue()
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_O)
    scores = [window.scale.risk[r.id].risk.score for r in model.rows]
    if window.scale.risk_order:
        assert scores == sorted(scores, reverse=True)
    else:
        assert [r.id for r in model.rows] == sorted(
            before, key=lambda i: (window.session.engram(i) or {}).get("created_at", "")
        )  # type: ignore[union-attr]
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_O)
    assert [r.id for r in model.rows] == before


def test_draft_detail_shows_the_writers_line(qtbot, window: MainWindow) -> None:
    _scaled(qtbot, window)
    window.review.show_current()
    text = window.drafts.detail.toPlainText()
    assert "Writer:" in text and "approved" in text and "rejected" in text


def test_one_key_settles_a_cluster_and_one_undo_takes_it_back(
    qtbot, qtmodeltester, window: MainWindow, store_copy: Path
) -> None:
    _scaled(qtbot, window)
    learned = _learned_ids(window)
    assert len(learned) == 3
    qtbot.keyClick(window, Qt.Key.Key_6, Qt.KeyboardModifier.ControlModifier)
    pane = window.clusters
    qtbot.waitUntil(lambda: pane.model.rowCount() >= 1)
    qtmodeltester.check(pane.model, force_py=True)
    qtmodeltester.check(pane.members, force_py=True)
    row = next(r for r, c in enumerate(pane.model.rows) if {m.id for m in c.members} == learned)
    pane.table.selectRow(row)
    keep = pane.model.rows[row].representative
    assert pane.model.index(row, 0).data() == "×3"
    assert pane.next_step.text() == f"D: approve {keep} and reject 2 other draft(s) as its duplicates"
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(pane.table, Qt.Key.Key_D)
    qtbot.waitUntil(lambda: window.jobs.pending("session") == 0)
    disk = engrams_on_disk(store_copy)
    assert disk[keep]["commitment"] == "decided" and disk[keep]["review"]["by"] == "Grace Tester"
    events = human_events(store_copy)
    assert sorted(str(e["engram_id"]) for e in events) == sorted(learned)  # one event per engram
    for engram_id in learned - {keep}:
        assert disk[engram_id]["status"] == "retired"
        assert disk[engram_id]["review"]["duplicate_of"] == keep
        assert disk[engram_id]["review"]["reason"] == f"duplicate of {keep}"
    qtbot.waitUntil(lambda: not any({m.id for m in c.members} & learned for c in pane.model.rows), timeout=20000)
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.jobs.pending("session") == 0)
    disk = engrams_on_disk(store_copy)
    assert all(disk[i]["status"] == "active" and disk[i]["commitment"] == "draft" for i in learned)


def test_x_takes_a_member_out_of_its_cluster(qtbot, window: MainWindow) -> None:
    _scaled(qtbot, window)
    learned = _learned_ids(window)
    window.navigation.show_clusters()
    pane = window.clusters
    row = next(r for r, c in enumerate(pane.model.rows) if {m.id for m in c.members} == learned)
    pane.table.selectRow(row)
    pane.member_table.selectRow(2)
    out = pane.current_member().id  # type: ignore[union-attr]
    qtbot.keyClick(pane.member_table, Qt.Key.Key_X)
    qtbot.waitUntil(lambda: window.jobs.pending("scale") == 0)
    qtbot.waitUntil(lambda: all(out not in {m.id for m in c.members} for c in pane.model.rows))
    assert not human_events(window.store_path)  # a split writes nothing


def test_bulk_reject_in_risk_order_keeps_its_selection_while_risk_arrives(
    qtbot, window: MainWindow, store_copy: Path
) -> None:
    from ui.conftest import answer_modal

    _scaled(qtbot, window)
    window.scale.risk_order = True
    window.refresh_all()
    model = window.drafts.model
    first, second = model.rows[0].id, model.rows[1].id
    window.drafts.select_id(first)
    window.drafts.table.selectRow(1)  # with Shift: a range of two
    window.drafts.table.selectionModel().select(
        model.index(0, 0),
        window.drafts.table.selectionModel().SelectionFlag.Select
        | window.drafts.table.selectionModel().SelectionFlag.Rows,
    )
    assert set(window.drafts.selected_ids()) == {first, second}
    window.scale.reorder_keeping_selection(list(reversed(model.rows)))  # a new ranking lands meanwhile
    assert [r.id for r in model.rows][-2:] == [second, first]
    assert set(window.drafts.selected_ids()) == {first, second}

    def fill(dialog):  # type: ignore[no-untyped-def]
        if dialog.flagged.count():  # risk order puts flagged drafts first: include them explicitly
            dialog.include.setChecked(True)
        dialog.combo.setCurrentText("not a lesson")
        qtbot.keyClick(dialog.combo.lineEdit(), Qt.Key.Key_Return)

    answer_modal(fill)
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_R)
    disk = engrams_on_disk(store_copy)
    assert disk[first]["status"] == disk[second]["status"] == "retired"
    assert len(human_events(store_copy)) == 2


def test_next_step_names_the_approved_engram() -> None:
    from plur_desk.app.scale.clusters import Cluster, Member
    from plur_desk.ui.scale.clusters_pane import next_step

    cluster = Cluster(
        "ENG-2026-12-01-001",
        (
            Member("ENG-2026-12-01-001", "Use tabs", "project:web", False, "representative", 1.0),
            Member("ENG-2026-12-01-002", "Use tabs!", "project:web", True, "content_hash", 1.0),
            Member("ENG-2026-12-01-003", "Tabs are used", "project:web", True, "similar to ENG-2026-12-01-001", 0.9),
        ),
        ("ENG-2026-12-01-001",),
    )
    assert next_step(cluster) == "D: reject all 2 drafts as duplicates of ENG-2026-12-01-001 (already approved)"


def test_a_decision_in_risk_order_ranks_nothing_again_and_computes_once_the_reviewer_pauses(
    qtbot, window: MainWindow
) -> None:
    """After an approve the risk-ordered queue is the last ranking without the decided draft: no draft is assessed
    or sorted again on the GUI thread (only what changed leaves), the reviewer's selection moves to the next draft,
    and the store-wide computation runs once the change is in, not for a search typed afterwards."""
    _scaled(qtbot, window)
    window.scale.risk_order = True
    window.refresh_all()
    before = [r.id for r in window.drafts.model.rows]
    view = window.scale.view
    assert view is not None
    assessed: list[int] = []
    risk_rows = view.risk_rows
    view.risk_rows = lambda rows, *a: (assessed.append(len(rows)), risk_rows(rows, *a))[1]  # type: ignore[method-assign]
    window.drafts.select_id(before[0])
    window.drafts.table.setFocus()
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    assert [r.id for r in window.drafts.model.rows] == before[1:]
    assert window.drafts.current_id() == before[1]
    assert assessed == []
    computed: list[int] = []
    refresh_from = view.refresh_from
    view.refresh_from = lambda *a, **k: (computed.append(1), refresh_from(*a, **k))[1]  # type: ignore[method-assign]
    qtbot.waitUntil(lambda: bool(computed) and window.jobs.pending("scale") == 0, timeout=20000)
    window.search.setText("test suite")
    window.apply_search()
    window.search.clear()
    window.apply_search()
    qtbot.wait(1500)  # longer than the pause the computation waits for
    assert computed == [1]


def test_a_month_replaced_while_risk_is_computed_is_read_again_not_an_unexpected_error(
    qtbot, window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ledger reads the history lines from their month files: a month an agent or a git pull replaced after
    the window took its snapshot is not an unexpected error, the risk is computed again once the poll has the
    history read again."""
    from plur_desk.app.scale.review_at_scale import ScaleView

    _scaled(qtbot, window)
    errors: list[str] = []
    monkeypatch.setattr(window.workspace.messages, "error", lambda text, *_a, **_k: errors.append(text))
    stale: list[bool] = []
    real = ScaleView.refresh_from
    monkeypatch.setattr(ScaleView, "refresh_from", lambda view, *a: (real(view, *a), stale.append(view.stale))[0])
    session = window.session
    assert session is not None
    draft = window.drafts.model.rows[0].id
    held, schedule = [True], window.scale.schedule
    monkeypatch.setattr(window.scale, "schedule", lambda: None if held[0] else schedule())
    window.scale._timer.stop()  # no computation until the one below
    with qtbot.waitSignal(window.changes_applied, timeout=10000):  # a line the ledger has not read yet
        window.workspace.change(lambda: session.execute(ApproveDrafts(tuple(session.writes.seen([draft])))))
    qtbot.waitUntil(lambda: window.jobs.pending("session") == 0 and window.jobs.pending("scale") == 0, timeout=20000)
    assert window.scale.view is not None and window.scale.view.ledger.fed < len(session.history.lines)
    held[0] = False
    path = session.history.log.month_files()[-1]
    replaced = path.with_suffix(".new")
    replaced.write_bytes(path.read_bytes().replace(b"Grace Tester", b"Grace Testor"))
    replaced.replace(path)  # a git pull: a new file in its place
    window.scale._compute()  # the lines are taken now, before the poll sees the new file
    qtbot.waitUntil(lambda: len(stale) >= 2 and not stale[-1] and window.jobs.pending("scale") == 0, timeout=40000)
    assert stale[0] and not errors
    assert window.scale.view is not None and window.scale.view.ledger.fed == len(session.history.lines)


def test_a_multi_selection_kept_across_a_new_order_is_announced_once(qtbot, window: MainWindow) -> None:
    """Each row re-selected one at a time was a selection change that drew the detail again: seconds of a
    frozen window for a selection of hundreds when a new ranking landed."""
    _scaled(qtbot, window)
    model, drafts = window.drafts.model, window.drafts
    assert len(model.rows) >= 6
    drafts.select_row(0)
    drafts.table.selectAll()
    chosen = set(drafts.selected_ids())
    assert len(chosen) == len(model.rows)
    said, drawn = [], []
    drafts.selection_changed.connect(lambda: said.append(1))
    real_show = drafts.show_detail
    drafts.show_detail = lambda *a, **k: (drawn.append(1), real_show(*a, **k))  # type: ignore[method-assign]
    window.scale.reorder_keeping_selection(list(reversed(model.rows)))
    assert set(drafts.selected_ids()) == chosen
    assert len(said) <= 2 and len(drawn) <= 2


def test_rows_added_to_a_selection_are_announced_once(qtbot, window: MainWindow) -> None:
    """What a new ranking does when the order it brings lost the reviewer's multi-selection: all its rows back in
    one selection change (row by row, each drew the detail again)."""
    drafts = window.drafts
    assert len(drafts.model.rows) >= 6
    drafts.select_row(0)
    said, drawn = [], []
    drafts.selection_changed.connect(lambda: said.append(1))
    real_show = drafts.show_detail
    drafts.show_detail = lambda *a, **k: (drawn.append(1), real_show(*a, **k))  # type: ignore[method-assign]
    drafts.select_also([1, 2, 4, 5])
    assert set(drafts.selected_ids()) == {drafts.model.rows[i].id for i in (0, 1, 2, 4, 5)}
    assert drafts.current_id() == drafts.model.rows[0].id
    assert len(said) == 1 and len(drawn) <= 1
    drafts.select_also([1, 2])  # already selected: nothing to say
    assert len(said) == 1


def test_a_large_selection_keeps_its_place_until_it_ends(qtbot, window: MainWindow, monkeypatch) -> None:
    """A new risk order waits while more than KEEP_PLACE_ABOVE rows are selected (moving hundreds of selected
    rows took the window a second and moved them from under the reviewer's eyes), and comes once it ends."""
    from plur_desk.ui.scale import scale_support

    _scaled(qtbot, window)
    monkeypatch.setattr(scale_support, "KEEP_PLACE_ABOVE", 3)
    drafts, model = window.drafts, window.drafts.model
    before = [r.id for r in model.rows]
    assert len(before) >= 6
    drafts.select_row(0)
    drafts.table.selectAll()
    window.scale.reorder_keeping_selection(list(reversed(model.rows)))
    assert [r.id for r in model.rows] == before and len(drafts.selected_ids()) == len(before)
    window.scale.order_drafts = lambda rows: list(reversed(rows))  # type: ignore[method-assign]
    drafts.select_row(2)  # the selection ends: the order held back comes
    qtbot.waitUntil(lambda: [r.id for r in model.rows] == before[::-1], timeout=5000)
    assert drafts.current_id() == before[2]


def test_new_risk_values_never_fill_a_list_a_search_left_empty(qtbot, window: MainWindow) -> None:
    """A search that matched nothing leaves the queue empty; the scale view's next result reorders the rows shown,
    it does not bring back every draft under a query that matches none of them."""
    _scaled(qtbot, window)
    qtbot.waitUntil(lambda: window.finder.is_ready, timeout=20000)
    window.navigation.focus_search()
    qtbot.keyClicks(window.search, "zzzqqq-no-such-words")
    qtbot.keyClick(window.search, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not window.finder.searching() and window.drafts.model.rowCount() == 0, timeout=10000)
    window.scale.apply()  # as when a new ledger, clusters and risk arrive
    assert window.drafts.model.rowCount() == 0
    assert window.search.text() == "zzzqqq-no-such-words"


def test_a_new_scale_view_waits_for_a_write_under_way_before_the_window_applies_it(qtbot, window: MainWindow) -> None:
    """Applying a view reorders the whole queue and lists two panes on the window's thread; beside a bulk
    approval's write that stalled the window 80-140 ms. A view computed while a write runs is applied after it."""
    import threading

    _scaled(qtbot, window)
    scale = window.scale
    applied: list[str] = []
    original = scale._ordered  # the first step of applying a view, in one turn or in steps
    scale._ordered = lambda: (applied.append("applied"), original())[1]  # type: ignore[method-assign]
    release = threading.Event()
    window.workspace.jobs.submit(lambda: release.wait(10), lambda _r: None)  # a write under way
    qtbot.waitUntil(lambda: window.jobs.pending("session") == 1)
    scale._done(scale.view)  # a view computed meanwhile
    qtbot.wait(300)
    assert applied == []  # not beside the write
    release.set()
    qtbot.waitUntil(lambda: applied == ["applied"], timeout=5000)  # once it is done


def test_a_view_applied_in_steps_never_brings_back_a_row_decided_between_them(qtbot, window: MainWindow) -> None:
    """A view arriving by itself is shown in turns of the event loop (its order of the rows listed; the list in that
    order; the panes), so keys and paints come between. A row that left the list between two turns (a decision's
    result) stays gone: the order is made again from the list as it is now."""
    _scaled(qtbot, window)
    scale, drafts = window.scale, window.drafts
    qtbot.waitUntil(lambda: window.jobs.pending("session") == 0 and not scale._step_timer.isActive())
    scale._apply_when_quiet()  # the first turn: the view's order of the rows listed now
    assert scale._staged is not None
    gone, keep = drafts.model.rows[0].id, drafts.model.rows[1].id
    drafts.set_rows([r for r in drafts.model.rows if r.id != gone], keep=keep)  # as a decision's result does
    qtbot.waitUntil(lambda: scale._staged is None and not scale._step_timer.isActive(), timeout=5000)
    listed = [r.id for r in drafts.model.rows]
    assert gone not in listed
    assert listed == [r.id for r in drafts.in_view_order(scale.order_drafts(list(drafts.model.rows)))]
    assert drafts.current_id() == keep


def test_after_opening_another_store_no_cluster_of_the_store_left_is_listed_or_settled(
    qtbot, window: MainWindow, store_copy: Path, tmp_path: Path
) -> None:
    """The scale view is computed per store: until the new store's is, Clusters and Writers list nothing and a
    cluster key writes nothing (a view of the store left listed its clusters, and D settled them in that store)."""
    _scaled(qtbot, window)
    assert window.scale.view is not None and window.scale.view.clusters()
    other = tmp_path / "other"
    shutil.copytree(demo_source(), other)
    left, opened = len(human_events(store_copy)), len(human_events(other))
    window.scale._timer.setInterval(60_000)  # the new store's view is not computed during this test
    window.open_path(other)
    qtbot.waitUntil(lambda: window.session is not None and window.session.root == other, timeout=20000)
    window.navigation.show_clusters()
    qtbot.wait(50)
    assert window.scale.view is None
    assert window.clusters.model.rows == [] and window.writers.model.rows == []
    assert not window.scale.risk  # nor a risk value of the store left beside this store's drafts
    window.scale.settle_cluster()
    qtbot.wait(300)
    qtbot.waitUntil(lambda: window.jobs.pending("session") == 0, timeout=20000)
    assert len(human_events(store_copy)) == left and len(human_events(other)) == opened


def test_a_writer_filter_does_not_carry_over_to_another_store(qtbot, window: MainWindow, tmp_path: Path) -> None:
    _scaled(qtbot, window)
    qtbot.keyClick(window, Qt.Key.Key_7, Qt.KeyboardModifier.ControlModifier)
    model = window.writers.model
    qtbot.waitUntil(lambda: model.rowCount() >= 3)
    window.writers.table.selectRow(next(r for r in range(model.rowCount()) if "codex" in model.index(r, 0).data()))
    qtbot.keyClick(window.writers.table, Qt.Key.Key_Return)
    assert "Showing only drafts by" in window.drafts.banner.text()
    other = tmp_path / "other"
    shutil.copytree(demo_source(), other)
    window.open_path(other)
    qtbot.waitUntil(lambda: window.session is not None and window.session.root == other, timeout=20000)
    qtbot.waitUntil(lambda: window.jobs.pending("session") == 0, timeout=20000)
    assert window.scale.writer_filter is None and window.drafts.banner.text() == ""
    assert {r.id for r in window.drafts.model.rows} == {r.id for r in window.session.queue.rows()}
