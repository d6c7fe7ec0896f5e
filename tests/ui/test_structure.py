"""The window's shape: actions run explicit handlers checked against the action table; no attribute of ours hides
one of Qt's; the reviewer's sort of the queue survives decisions and reloads (driven by the real header and keys)."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil

import pytest
from PySide6.QtCore import QObject, QPoint, Qt

import plur_desk.ui
from plur_desk.ui.actions import ACTIONS, check_handlers
from plur_desk.ui.common.models import DraftColumn

from ui.conftest import human_events

# Qt virtuals we override on purpose (models, events, resource loading); any other shared name hides Qt's own.
QT_OVERRIDES = {
    "index",
    "rowCount",
    "columnCount",
    "data",
    "multiData",
    "headerData",
    "canFetchMore",
    "fetchMore",
    "event",
    "eventFilter",
    "closeEvent",
    "showEvent",
    "paintEvent",
    "loadResource",
    "staticMetaObject",
    "accept",  # QDialog's virtual slot: BulkDialog refuses an answer in a late question's first moments
}


def test_the_handler_map_matches_the_action_table(window):
    handlers = window.action_handlers()
    check_handlers(handlers)  # what the window ran at start-up, run again here
    assert set(handlers) == {spec.id for spec in ACTIONS}
    missing = dict(handlers)
    missing.pop("review.approve")
    with pytest.raises(ValueError, match=r"missing \['review.approve'\]"):
        check_handlers(missing)
    with pytest.raises(ValueError, match=r"extra \['review.unknown'\]"):
        check_handlers({**handlers, "review.unknown": lambda: None})
    with pytest.raises(ValueError, match="cannot be called"):
        check_handlers({**handlers, "review.approve": "approve_selected"})  # type: ignore[dict-item]


def test_each_action_triggers_its_own_handler(qtbot, window):
    """The QAction for an id runs the callable the map gives for that id (no name lookup in between)."""
    window.qactions["view.history"].trigger()
    assert window.tabs.currentWidget() is window.history
    window.qactions["view.tensions"].trigger()
    assert window.tabs.currentWidget() is window.tensions
    window.qactions["view.drafts"].trigger()
    assert window.tabs.currentWidget() is window.drafts


def _ui_classes() -> list[type]:
    classes = []
    for info in pkgutil.walk_packages(plur_desk.ui.__path__, "plur_desk.ui."):
        module = importlib.import_module(info.name)
        for cls in vars(module).values():
            if inspect.isclass(cls) and cls.__module__ == module.__name__ and issubclass(cls, QObject):
                classes.append(cls)
    return classes


def _own_names(cls: type) -> set[str]:
    """Methods and `self.x = …` attributes that our own classes in `cls`'s MRO define."""
    names: set[str] = set()
    for base in cls.__mro__:
        if not base.__module__.startswith("plur_desk."):
            continue
        names |= set(vars(base))
        for node in ast.walk(ast.parse(inspect.getsource(base).strip())):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name)
                and node.value.id == "self"
            ):
                names.add(node.attr)
    return {n for n in names if not n.startswith("__")}


def test_no_attribute_of_ours_hides_one_of_qt():
    """`self.actions` hid QWidget.actions() and `DraftsPane.move` hid QWidget.move: Qt calls them too."""
    hidden = []
    for cls in _ui_classes():
        qt_names = set().union(*(set(dir(b)) for b in cls.__mro__ if b.__module__.startswith(("PySide6", "shiboken"))))
        hidden += [f"{cls.__module__}.{cls.__name__}.{n}" for n in sorted((_own_names(cls) & qt_names) - QT_OVERRIDES)]
    assert not hidden, hidden
    assert len(_ui_classes()) > 20  # the walk really saw the panes, dialogs and models


def _click_header(qtbot, window, column: int) -> None:
    header = window.drafts.table.horizontalHeader()
    x = header.sectionViewportPosition(column) + header.sectionSize(column) // 2
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, header.height() // 2))


def _statements(window) -> list[str]:
    return [r.statement.lower() for r in window.drafts.model.rows]


def test_the_reviewers_sort_survives_a_decision_and_a_reload(qtbot, window, store_copy):
    header = window.drafts.table.horizontalHeader()
    assert header.sortIndicatorSection() == DraftColumn.AGE
    _click_header(qtbot, window, DraftColumn.STATEMENT)
    assert header.sortIndicatorSection() == DraftColumn.STATEMENT
    order = header.sortIndicatorOrder()
    before = _statements(window)
    assert before == sorted(before, reverse=order == Qt.SortOrder.DescendingOrder)
    assert before != [r.statement.lower() for r in window.session.queue.rows()]  # the age order differs
    window.drafts.select_row(0)
    decided = window.drafts.current_id()
    window.drafts.focus_queue()
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    assert [e["engram_id"] for e in human_events(store_copy)] == [decided]
    after = _statements(window)
    assert len(after) == len(before) - 1
    assert after == sorted(after, reverse=order == Qt.SortOrder.DescendingOrder)  # not back to age order
    assert header.sortIndicatorSection() == DraftColumn.STATEMENT
    window.opener.reload()
    qtbot.waitUntil(lambda: window.jobs.pending("session") == 0, timeout=10000)
    assert _statements(window) == after
    _click_header(qtbot, window, DraftColumn.STATEMENT)  # a second click flips the order, and it stays flipped
    flipped = _statements(window)
    assert flipped == list(reversed(after)) or flipped == sorted(after, reverse=order != Qt.SortOrder.DescendingOrder)
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_O)  # risk/age order: the queue's order again, said by the header
    assert header.sortIndicatorSection() in (DraftColumn.AGE, len(DraftColumn))
    assert _statements(window) != flipped


def test_timeline_and_validity_of_the_selected_engram_open_their_panes(qtbot, window):
    engram_id = window.drafts.current_id()
    window.qactions["history.timeline"].trigger()
    assert window.tabs.currentWidget() is window.history
    assert window.history.engram.text() == engram_id
    assert {e.get("engram_id") for e in window.history.model.events} <= {engram_id}
    window.qactions["view.drafts"].trigger()
    window.qactions["validity.open"].trigger()
    assert window.tabs.currentWidget() is window.validity
    assert window.validity.current_engram_id() == engram_id


def test_the_rest_of_a_store_loads_once_the_hidden_panes_are_built(qtbot, tmp_path, store_copy, monkeypatch):
    """Built beside the rest's unpacking, the hidden panes' calls into Qt each waited for the interpreter behind
    it (a warm 50,000-engram launch stalled 150-380 ms): the rest starts after them, and the first store still
    loads whole."""
    from plur_desk.app.review import loading
    from plur_desk.ui.built_later import BuiltLater

    from ui.conftest import grace_window, wait_loaded

    win = grace_window(qtbot, tmp_path)
    seen: list[list[bool]] = []
    parse_rest = loading.parse_rest

    def recorded(session):  # type: ignore[no-untyped-def]
        seen.append([p.built for p in win.panes.values() if isinstance(p, BuiltLater)])
        return parse_rest(session)

    monkeypatch.setattr(loading, "parse_rest", recorded)
    win.open_path(store_copy)
    wait_loaded(qtbot, win)
    qtbot.waitUntil(lambda: win.session is not None and win.session.fully_loaded, timeout=20000)
    assert seen and all(seen[0]) and len(seen[0]) >= 4  # Tensions, Validity, Clusters, Writers at least
    other = tmp_path / "other"
    import shutil

    shutil.copytree(store_copy, other)
    win.open_path(other)  # the panes exist now: the next store's rest starts at once
    qtbot.waitUntil(lambda: len(seen) == 2, timeout=20000)
    wait_loaded(qtbot, win)
    qtbot.waitUntil(lambda: win.session is not None and win.session.fully_loaded, timeout=20000)
