"""Table models move to new rows without a reset: removed, inserted and changed rows are signalled as such, so a
view keeps its selection and current row; a new order moves persistent indexes. Checked with qtmodeltester."""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest
from PySide6.QtCore import QItemSelectionModel
from PySide6.QtWidgets import QTableView

from plur_desk.ui.common.jobs import Jobs
from plur_desk.ui.common.models import Column, RowsModel


@dataclass(frozen=True)
class Row:
    id: str
    text: str


COLUMNS = [Column("Id", lambda r: r.id, lambda r: r.id), Column("Text", lambda r: r.text, lambda r: r.text)]


def _model(rows: list[Row]) -> RowsModel[Row]:
    model: RowsModel[Row] = RowsModel(COLUMNS, lambda r: r.id)
    model.set_rows(rows)
    return model


def _watched(qtbot, qtmodeltester, rows: list[Row]) -> tuple[RowsModel[Row], QTableView]:  # type: ignore[no-untyped-def]
    """A model checked by qtmodeltester on every signal, shown in a view."""
    model = _model(rows)
    qtmodeltester.check(model, force_py=True)
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(model)
    return model, view


def _selected(view: QTableView) -> set[str]:
    model = view.model()
    return {model.rows[i.row()].id for i in view.selectionModel().selectedRows()}


@pytest.mark.parametrize("seed", range(6))
def test_updates_keep_selection_and_never_reset(qtbot, qtmodeltester, seed) -> None:
    rng = random.Random(seed)
    rows = [Row(f"E{n:03d}", f"text {n}") for n in range(60)]
    model = _model(rows)
    qtmodeltester.check(model, force_py=True)  # and it watches every signal of the updates below
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(model)
    resets: list[int] = []
    model.modelReset.connect(lambda: resets.append(1))
    flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
    for n in rng.sample(range(60), 8):
        view.selectionModel().select(model.index(n, 0), flags)
    current = rows[rng.randrange(60)].id
    view.selectionModel().setCurrentIndex(
        model.index(model.row_of(current), 0), QItemSelectionModel.SelectionFlag.NoUpdate
    )
    counter = 60
    for step in range(25):
        chosen = _selected(view)
        kept = [r for r in model.rows if rng.random() > 0.15]  # some leave (approved, rejected)
        kept = [Row(r.id, r.text + "!") if rng.random() < 0.1 else r for r in kept]  # some change
        for _ in range(rng.randrange(4)):  # some arrive anywhere
            counter += 1
            kept.insert(rng.randrange(len(kept) + 1), Row(f"N{counter:03d}", "new"))
        if step % 6 == 5:
            kept.sort(key=lambda r: r.text, reverse=bool(step % 2))  # another order
        model.update_rows(kept)
        assert model.rows == kept
        assert [model.index(i, 1).data() for i in range(len(kept))] == [r.text for r in kept]
        assert _selected(view) == chosen & {r.id for r in kept}  # what stayed stays selected
        index = view.currentIndex()
        if current in {r.id for r in kept}:
            assert model.rows[index.row()].id == current
    assert not resets


@pytest.mark.parametrize("seed", range(4))
def test_decided_rows_leaving_are_only_removed(qtbot, qtmodeltester, seed) -> None:
    """After a decision the queue is the same rows less the decided ones: only removals are signalled, selection
    and current row stay; anything else (a row changed, one arriving, another order) still takes the full diff."""
    rng = random.Random(seed)
    rows = [Row(f"E{n:03d}", f"text {n}") for n in range(80)]
    model, view = _watched(qtbot, qtmodeltester, rows)
    signals: list[str] = []
    for name in ("rowsInserted", "dataChanged", "layoutChanged", "modelReset"):
        getattr(model, name).connect(lambda *_a, name=name: signals.append(name))
    model.rowsRemoved.connect(lambda *_a: signals.append("rowsRemoved"))
    current = rows[rng.randrange(80)].id
    view.selectionModel().setCurrentIndex(
        model.index(model.row_of(current), 0), QItemSelectionModel.SelectionFlag.NoUpdate
    )
    while len(model.rows) > 3:
        signals.clear()
        leaving = set(rng.sample([r.id for r in model.rows if r.id != current], rng.randrange(1, 4)))
        kept = [r for r in model.rows if r.id not in leaving]
        model.update_rows(kept)
        assert model.rows == kept and model.rows is not kept
        assert set(signals) == {"rowsRemoved"}
        assert model.rows[view.currentIndex().row()].id == current
        assert [model.index(i, 0).data() for i in range(len(kept))] == [r.id for r in kept]
    changed = [Row(model.rows[0].id, "changed"), *model.rows[1:]]  # an equal id, a new row object
    signals.clear()
    model.update_rows(changed)
    assert model.rows == changed and "dataChanged" in signals and "rowsRemoved" not in signals


def test_jobs_drop_a_result_a_newer_request_made_stale(qtbot) -> None:
    pool = Jobs(threads=2)
    shown: list[object] = []
    gate_open = []

    def slow() -> str:
        while not gate_open:  # released once the newer request is in
            pass
        return "old"

    pool.read("detail", slow, shown.append)
    pool.read("detail", lambda: "new", shown.append)
    qtbot.waitUntil(lambda: shown == ["new"])
    gate_open.append(True)
    qtbot.waitUntil(lambda: pool.pending() == 0)
    assert shown == ["new"]
    assert pool.dropped == 1
    pool.read("search", lambda: "kept", shown.append)  # another channel is not affected
    qtbot.waitUntil(lambda: pool.pending() == 0)
    assert shown == ["new", "kept"]
    pool.wait()


def test_a_search_keeping_a_scattered_few_resets_once(qtbot, qtmodeltester) -> None:
    """Narrowing 2,000 rows to 100 scattered ones and back: each run of rows removed or inserted updated the whole
    view (100-180 ms at 10,000 drafts); past RESET_ABOVE runs one reset does it, with the same rows after."""
    from plur_desk.ui.common import models

    rows = [Row(f"E{n:04d}", f"text {n}") for n in range(2000)]
    model, _view = _watched(qtbot, qtmodeltester, rows)
    seen: list[str] = []
    model.modelReset.connect(lambda: seen.append("reset"))
    model.rowsRemoved.connect(lambda *_: seen.append("removed"))
    model.rowsInserted.connect(lambda *_: seen.append("inserted"))
    few = rows[::20]
    assert len(few) == 100 and models.RESET_ABOVE < 100
    model.update_rows(few)
    assert model.rows == few and seen == ["reset"]
    model.update_rows(rows)
    assert model.rows == rows and seen == ["reset", "reset"]
    seen.clear()
    model.update_rows(rows[:10] + rows[30:])  # one run: removed as such, the view keeps its place
    assert seen == ["removed"]


@pytest.mark.parametrize("seed", range(40))
def test_rows_taken_out_near_the_selection_are_the_rows_a_scan_takes_out(qtbot, qtmodeltester, seed) -> None:
    """`remove_ids(ids, near=…)` looks next to the selection first (a decision's rows are there); the rows left are
    exactly those without any of the ids, wherever they are, duplicates of an id included."""
    rng = random.Random(seed)
    n = rng.randint(1, 300)
    ids = [f"E{k}" for k in range(n)]
    if seed % 5 == 0:
        ids[rng.randrange(n)] = ids[rng.randrange(n)]  # an id twice (a hand-edited store): every one goes
    rows = [Row(i, f"t{k}") for k, i in enumerate(ids)]
    model, _view = _watched(qtbot, qtmodeltester, rows)
    gone = set(rng.sample(ids, rng.randint(0, min(n, 70))))
    near = rng.choice([-1, rng.randrange(n)])
    model.remove_ids(gone, near=near)
    assert model.rows == [r for r in rows if r.id not in gone]
