"""A pane and its controller are built from their collaborators alone, with no main window: the pane shows and
emits intent, the controller acts only on what the pane displays and only while it counts as on screen."""

from __future__ import annotations

import threading

from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from plur_desk.app.review.bootstrap import open_session
from plur_desk.app.settings import Settings, SettingsStore
from plur_desk.infra.clock import FixedClock
from plur_desk.ui.app import make_application
from plur_desk.ui.messages import Messages
from plur_desk.ui.tensions.tensions_controller import TensionsController
from plur_desk.ui.tensions.tensions_pane import TensionsPane
from plur_desk.ui.validity.validity_controller import ValidityController
from plur_desk.ui.validity.validity_pane import ValidityPane
from plur_desk.ui.workspace import Workspace

from ui.conftest import NOW, engrams_on_disk, human_events, tensions_on_disk


def _workspace(qtbot, store_copy, tmp_path) -> tuple[Workspace, QWidget]:
    make_application()
    host = QWidget()
    qtbot.addWidget(host)
    messages = Messages(QLabel(host), QStatusBar(host), host)
    settings = Settings(reviewer_name="Grace Tester")
    ws = Workspace(
        SettingsStore(tmp_path / "settings.yaml"),
        settings,
        "Grace Tester",
        FixedClock(NOW),
        messages,
        tmp_path / "cache",
        host,
    )
    ws.session = open_session(store_copy, "Grace Tester", clock=FixedClock(NOW))
    ws.store_path = store_copy
    return ws, host


def test_tensions_pane_and_controller_without_a_window(qtbot, store_copy, tmp_path):
    ws, host = _workspace(qtbot, store_copy, tmp_path)
    asked: list[str] = []
    pane = TensionsPane(ws, lambda engram_id: asked.append(engram_id) or [], host)
    on_screen = {"now": False}
    controller = TensionsController(ws, pane, lambda shown: shown is pane and on_screen["now"])
    changed: list[object] = []
    pane.selection_changed.connect(lambda: changed.append(True))
    pane.refresh(None)
    detected = next(i for i, r in enumerate(pane.model.rows) if r.status == "detected")
    pane.table.selectRow(detected)
    row, _seen = pane.displayed()
    assert row.status == "detected" and changed  # shown, and said so
    qtbot.waitUntil(lambda: bool(asked), timeout=5000)  # and similar engrams were asked for (on the read pool)
    before = tensions_on_disk(store_copy)[row.id]
    controller.confirm_tension()  # the pane is not on screen: nothing is decided
    ws.jobs.wait(lane="session")
    assert tensions_on_disk(store_copy)[row.id] == before and human_events(store_copy) == []
    on_screen["now"] = True
    with qtbot.waitSignal(ws.applied, timeout=10000):
        controller.confirm_tension()
    assert tensions_on_disk(store_copy)[row.id]["status"] == "confirmed"
    (event,) = human_events(store_copy)
    assert row.id in str(event)


def test_validity_pane_and_controller_without_a_window(qtbot, store_copy, tmp_path):
    ws, host = _workspace(qtbot, store_copy, tmp_path)
    pane = ValidityPane(ws, host)
    on_screen = {"now": False}
    controller = ValidityController(ws, pane, lambda shown: shown is pane and on_screen["now"])
    pane.refresh(None)
    current = next(i for i, r in enumerate(pane.model.rows) if r.state in ("current", "expiring_soon"))
    pane.table.selectRow(current)
    target = pane.current_row()
    assert target is not None and pane.selected_rows() == [target]
    controller.expire_now()  # not on screen: nothing is decided
    ws.jobs.wait(lane="session")
    assert human_events(store_copy) == []
    on_screen["now"] = True
    with qtbot.waitSignal(ws.applied, timeout=10000):
        controller.expire_now()
    until = engrams_on_disk(store_copy)[target.id]["temporal"]["valid_until"]
    assert until != target.valid_until and until.startswith(NOW.strftime("%Y-%m-%d"))  # ends now
    assert [e["engram_id"] for e in human_events(store_copy)] == [target.id]


def test_tensions_pane_reads_similar_engrams_off_the_gui_thread(qtbot, store_copy, tmp_path):
    """The detail is shown at once; similar engrams (a product with every vector) are read on the read pool and
    filled in only while the same tension is shown: a read for a tension passed over is never shown."""
    ws, host = _workspace(qtbot, store_copy, tmp_path)
    release = threading.Event()
    threads: list[threading.Thread] = []

    def similar(engram_id: str) -> list[tuple[str, str, float]]:
        threads.append(threading.current_thread())
        release.wait(10)
        return [("ENG-SIMILAR-" + engram_id, f"A statement much like {engram_id}", 0.91)]

    pane = TensionsPane(ws, similar, host)
    pane.refresh(None)
    assert len(pane.model.rows) >= 2
    pane.table.selectRow(0)
    first = pane.current()
    assert pane.displayed() is not None and "much like" not in pane.detail.toHtml()  # shown without waiting
    pane.table.selectRow(1)  # moved on before the first read finished
    second = pane.current()
    assert first is not None and second is not None and first.id != second.id
    release.set()
    qtbot.waitUntil(lambda: "much like" in pane.detail.toPlainText(), timeout=5000)
    ws.jobs.wait()
    qtbot.wait(50)
    text = pane.detail.toPlainText()
    assert f"much like {second.engram_a}" in text and f"much like {second.engram_b}" in text
    assert threads and all(t is not threading.main_thread() for t in threads)
    if {first.engram_a, first.engram_b} - {second.engram_a, second.engram_b}:
        assert all(
            f"much like {e}" not in text for e in {first.engram_a, first.engram_b} - {second.engram_a, second.engram_b}
        )
    assert pane.displayed() is not None and pane.displayed()[0].id == second.id  # the verdict still acts on it
