"""Panes built alone on small hand-written fakes of their workspace and session (tests/support/fakes.py), with the
app's real frozen rows: what each pane lists, renders and hands over, with no store on disk.

The whole-window tests (test_panes.py, test_incremental_views.py) check the same panes against a real store; these
pin down each pane's own part: rows listed exactly as the session gives them, agent text shown as text, what a
change concerns, and the Seen a verdict carries."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from PySide6.QtCore import QAbstractItemModel, QDateTime, Qt, QTimeZone
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from plur_desk.app.review.rows import DraftRow, draft_row
from plur_desk.app.review.validity_rows import ValidityRow, WindowBar
from plur_desk.domain.changes import ChangeSet
from plur_desk.domain.commands import ConfirmTension, ExpireNow, ResolveTension
from plur_desk.domain.seen import Seen, seen_engram
from plur_desk.infra.clock import FixedClock
from plur_desk.ui.history.history_pane import HistoryPane
from plur_desk.ui.review.drafts_pane import DraftsPane
from plur_desk.ui.tensions.tensions_controller import TensionsController
from plur_desk.ui.tensions.tensions_pane import TensionsPane
from plur_desk.ui.validity.validity_controller import ValidityController
from plur_desk.ui.validity.validity_pane import ValidityPane

from support.fakes import (
    FakeHistorySession,
    FakeJobs,
    FakeTensionsSession,
    FakeValiditySession,
    FakeWorkspace,
    Record,
    engram_record,
    tension_record,
)
from support.moments import WINDOW_NOW as NOW

MARKUP = "<b>bold</b> <img src='https://evil.example/x.png'> <a href='https://evil.example/'>link</a>"


def _texts(model: QAbstractItemModel) -> list[list[str]]:
    """Every cell's display text, row by row, as the table shows it."""
    return [
        [str(model.data(model.index(r, c), Qt.ItemDataRole.DisplayRole)) for c in range(model.columnCount())]
        for r in range(model.rowCount())
    ]


def _rendered(html: str) -> str:
    """What a rich-text widget shows of `html` (a tooltip is rendered as rich text when it looks like HTML)."""
    document = QTextDocument()
    document.setHtml(html)
    return document.toPlainText()


def _press(
    qtbot: QtBot, widget: QWidget, key: Qt.Key, modifier: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier
) -> None:
    qtbot.keyClick(widget, key, modifier)  # type: ignore[no-untyped-call]


def _type(qtbot: QtBot, widget: QWidget, text: str) -> None:
    qtbot.keyClicks(widget, text)  # type: ignore[no-untyped-call]


def _links_and_images(document: QTextDocument) -> list[str]:
    """Every link and image the rendered document holds (text from an agent must make none)."""
    found = []
    block = document.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.isAnchor() or fmt.isImageFormat():
                found.append(it.fragment().text())
            it += 1
        block = block.next()
    return found


def _focus(qtbot: QtBot, window: QWidget, widget: QWidget) -> None:
    """Show `window` and give `widget` the keyboard focus (verdict keys are shortcuts of the list itself)."""
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    widget.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is widget)


# -- Tensions --------------------------------------------------------------------------------------------------

A1 = engram_record("ENG-A1", "Deploys run on Fridays")
B1 = engram_record("ENG-B1", "Deploys never run on Fridays")
A2 = engram_record("ENG-A2", "The cache is cleared weekly")
B2 = engram_record("ENG-B2", "The cache is cleared daily")
A3 = engram_record("ENG-A3", "Builds use Node 18")
B3 = engram_record("ENG-B3", "Builds use Node 20")
OUTSIDER = engram_record("ENG-OUT", "Nothing to do with any tension")


def _tension_records() -> list[Record]:
    """Three tensions, deliberately not in id order: the pane lists them as the session gives them."""
    return [
        tension_record("T-2026-1201-003", A2, B2, confidence=0.75, category="temporal"),
        tension_record("T-2026-1201-001", A1, B1, status="confirmed"),
        tension_record("T-2026-1201-002", A3, B3, status="dismissed", reason="same fact"),
    ]


def _tensions_pane(
    qtbot: QtBot,
    records: list[Record] | None = None,
    engrams: list[Record] | None = None,
    similar: dict[str, list[tuple[str, str, float]]] | None = None,
) -> tuple[TensionsPane, FakeTensionsSession, FakeWorkspace]:
    session = FakeTensionsSession(
        engrams if engrams is not None else [A1, B1, A2, B2, A3, B3, OUTSIDER],
        records if records is not None else _tension_records(),
        NOW,
    )
    workspace = FakeWorkspace(session, FixedClock(NOW), FakeJobs())
    found = similar or {}
    pane = TensionsPane(workspace.as_workspace(), lambda engram_id: found.get(engram_id, []))
    qtbot.addWidget(pane)
    pane.refresh(None)
    return pane, session, workspace


def test_tensions_lists_the_open_tensions_the_session_gives_in_its_order_with_each_columns_text(
    qtbot: QtBot,
) -> None:
    pane, session, _ws = _tensions_pane(qtbot)
    assert session.asked[-1] == ("detected", "confirmed")  # the default filter: open tensions
    assert [r.id for r in pane.model.rows] == ["T-2026-1201-003", "T-2026-1201-001"]  # the dismissed one is not open
    headers = [pane.model.headerData(c, Qt.Orientation.Horizontal) for c in range(pane.model.columnCount())]
    assert headers == ["Status", "Confidence", "Category", "Age", "Left", "Right"]
    assert _texts(pane.model) == [
        ["detected", "0.75", "temporal", "1 d", "The cache is cleared weekly", "The cache is cleared daily"],
        ["confirmed", "0.90", "factual", "1 d", "Deploys run on Fridays", "Deploys never run on Fridays"],
    ]
    assert pane.current_id() == "T-2026-1201-003"  # the first row is selected and shown


def test_tensions_filter_asks_the_session_for_the_chosen_statuses(qtbot: QtBot) -> None:
    pane, session, _ws = _tensions_pane(qtbot)
    pane.filter.setCurrentText("Dismissed")
    assert session.asked[-1] == ("dismissed",)
    assert [r.id for r in pane.model.rows] == ["T-2026-1201-002"]
    pane.filter.setCurrentText("All")
    assert [r.id for r in pane.model.rows] == ["T-2026-1201-003", "T-2026-1201-001", "T-2026-1201-002"]


def test_tensions_detail_shows_agent_markup_as_literal_text_and_loads_nothing(qtbot: QtBot) -> None:
    left = engram_record("ENG-H1", f"Use {MARKUP} always", domain="<i>dom</i>")
    right = engram_record("ENG-H2", "Use plain text always")
    record = tension_record("T-2026-1201-009", left, right, reason=f"judge says {MARKUP}")
    pane, _session, _ws = _tensions_pane(qtbot, [record], [left, right])
    shown = pane.detail.toPlainText()
    assert f"Use {MARKUP} always" in shown  # the statement, every character as written
    assert f"Judge: “judge says {MARKUP}”" in shown
    assert "<i>dom</i>" in shown  # a side's fields too
    assert "Asserted by" in shown and "agent:claude · opus" in shown
    assert _links_and_images(pane.detail.document()) == []  # the markup made no link and no image
    assert pane.detail.blocked == []  # and no resource was asked for


def test_tensions_detail_says_when_a_side_changed_since_detection(qtbot: QtBot) -> None:
    edited = engram_record("ENG-A1", "Deploys run on Thursdays now")
    record = tension_record("T-2026-1201-001", A1, B1)  # the judge saw A1's old statement
    pane, _session, _ws = _tensions_pane(qtbot, [record], [edited, B1])
    shown = pane.detail.toPlainText()
    assert "Deploys run on Fridays" in shown  # what the judge saw, diffed against the other side
    assert "Changed since detection. It now reads: Deploys run on Thursdays now" in shown
    assert shown.count("Changed since detection") == 1  # the unchanged side says nothing


def test_a_refresh_that_keeps_the_selection_shows_what_changed_in_it(qtbot: QtBot) -> None:
    """An agent edits a side of the tension on screen: the selection stays on the same row, no selection signal
    fires, and the detail must still show the edit (and the verdict must rest on the new text)."""
    pane, session, _ws = _tensions_pane(qtbot)
    assert pane.current_id() == "T-2026-1201-003"
    session.engrams["ENG-A2"] = engram_record("ENG-A2", "The cache is cleared hourly")
    pane.refresh(ChangeSet(engrams=frozenset({"ENG-A2"})))
    assert pane.current_id() == "T-2026-1201-003"
    assert "Changed since detection. It now reads: The cache is cleared hourly" in pane.detail.toPlainText()
    displayed = pane.displayed()
    assert displayed is not None and displayed[1] == displayed[0].seen


def test_when_the_selected_tension_leaves_the_next_one_is_shown_once(qtbot: QtBot) -> None:
    pane, session, workspace = _tensions_pane(qtbot)
    workspace.jobs.deliver()
    session.records = [r for r in session.records if r["id"] != "T-2026-1201-003"]  # resolved elsewhere
    pane.refresh(ChangeSet(tensions=frozenset({"T-2026-1201-003"})))
    assert pane.current_id() == "T-2026-1201-001"
    assert "Deploys run on Fridays" in pane.detail.toPlainText()
    assert [r.channel for r in workspace.jobs.waiting] == ["tension.similar"]  # read once for the new one


def test_tensions_displayed_is_the_row_as_listed_and_none_once_a_side_reads_differently(qtbot: QtBot) -> None:
    pane, session, _ws = _tensions_pane(qtbot)
    displayed = pane.displayed()
    assert displayed is not None
    row, seen = displayed
    assert row is pane.model.rows[0] and seen == row.seen
    assert {s.id for s in seen.sides} == {row.engram_a, row.engram_b}  # both engrams as shown beside it
    # an agent's edit of a side reaches the session before the list is refreshed; the reviewer moves away and back
    session.engrams[row.engram_a] = engram_record(row.engram_a, "Rewritten by an agent")
    pane.table.selectRow(1)
    pane.table.selectRow(0)
    assert "Rewritten by an agent" in pane.detail.toPlainText()
    assert pane.displayed() is None  # the detail no longer shows the row as listed: no verdict may act on it


def test_tensions_similar_engrams_fill_the_detail_without_the_tensions_own_sides(qtbot: QtBot) -> None:
    similar = {
        "ENG-A2": [("ENG-B2", "its own other side", 0.99), ("ENG-S1", f"near {MARKUP}", 0.81)],
        "ENG-B2": [("ENG-S2", "another near one", 0.72)],
        "ENG-A1": [("ENG-S9", "similar to the second tension", 0.66)],
    }
    pane, _session, workspace = _tensions_pane(qtbot, similar=similar)
    assert workspace.jobs.deliver() >= 1
    shown = pane.detail.toPlainText()
    assert f"0.81 · ENG-S1 “near {MARKUP}”" in shown
    assert "0.72 · ENG-S2 “another near one”" in shown
    assert "0.99" not in shown and "its own other side" not in shown
    assert pane.detail.blocked == []


def test_tensions_similar_engrams_read_for_a_tension_left_behind_are_not_shown_beside_the_next(qtbot: QtBot) -> None:
    similar = {
        "ENG-A2": [("ENG-S1", "similar to the first tension", 0.81)],
        "ENG-A1": [("ENG-S9", "similar to the second tension", 0.66)],
    }
    pane, _session, workspace = _tensions_pane(qtbot, similar=similar)  # the first tension's reads wait
    pane.table.selectRow(1)  # the reviewer moves on before they come back
    assert pane.current_id() == "T-2026-1201-001"
    workspace.jobs.deliver(newest_first=True)  # the first tension's reads arrive last
    shown = pane.detail.toPlainText()
    assert "0.66 · ENG-S9 “similar to the second tension”" in shown
    assert "ENG-S1" not in shown and "Deploys run on Fridays" in shown


def test_tensions_concern_a_tension_or_an_engram_on_a_side_of_one_never_an_unrelated_engram(qtbot: QtBot) -> None:
    pane, _session, _ws = _tensions_pane(qtbot)
    assert pane.concerns(ChangeSet(tensions=frozenset({"T-2026-1201-001"})))
    assert pane.concerns(ChangeSet(engrams=frozenset({"ENG-B2"})))  # a side of a listed tension
    assert pane.concerns(ChangeSet(engrams=frozenset({"ENG-OUT", "ENG-A1"})))
    assert not pane.concerns(ChangeSet(engrams=frozenset({"ENG-OUT"})))
    assert not pane.concerns(ChangeSet(events=3))  # history alone
    assert not pane.concerns(ChangeSet())


def test_tensions_confirm_hands_the_session_the_tension_as_rendered_and_only_while_on_screen(qtbot: QtBot) -> None:
    pane, session, workspace = _tensions_pane(qtbot)
    on_screen = {"now": False}
    controller = TensionsController(workspace.as_workspace(), pane, lambda shown: shown is pane and on_screen["now"])
    row = pane.model.rows[0]
    controller.confirm_tension()
    assert session.executed == []  # not on screen: nothing is decided
    on_screen["now"] = True
    controller.confirm_tension()
    assert session.executed == [ConfirmTension(row.seen)]
    (command,) = session.executed
    assert isinstance(command, ConfirmTension)
    assert {s.id: s.expected()["statement"] for s in command.seen.sides} == {
        "ENG-A2": "The cache is cleared weekly",
        "ENG-B2": "The cache is cleared daily",
    }


def test_tensions_keep_right_previews_and_enter_resolves_the_tension_previewed(qtbot: QtBot) -> None:
    pane, session, workspace = _tensions_pane(qtbot)
    TensionsController(workspace.as_workspace(), pane, lambda shown: shown is pane).keep_right()
    row = pane.model.rows[0]
    assert pane.pending == (row.seen, row.engram_b)
    assert pane.preview.isVisibleTo(pane)
    assert "Keep ENG-B2 “The cache is cleared daily”\nand retire ENG-A2 “The cache is cleared weekly”?" in _rendered(
        pane.preview.text()
    )
    _focus(qtbot, pane, pane.table)
    _press(qtbot, pane.table, Qt.Key.Key_Return)
    assert session.executed == [ResolveTension(row.seen, row.engram_b)]
    assert pane.pending is None and not pane.preview.isVisible()


def test_tensions_moving_to_another_tension_drops_the_preview_so_enter_resolves_nothing(qtbot: QtBot) -> None:
    pane, session, workspace = _tensions_pane(qtbot)
    TensionsController(workspace.as_workspace(), pane, lambda shown: shown is pane).keep_left()
    assert pane.pending is not None
    _focus(qtbot, pane, pane.table)
    _press(qtbot, pane.table, Qt.Key.Key_Down)
    assert pane.current_id() == "T-2026-1201-001"
    assert pane.pending is None and not pane.preview.isVisible()
    _press(qtbot, pane.table, Qt.Key.Key_Return)
    assert session.executed == []


# -- Validity --------------------------------------------------------------------------------------------------


def _validity_row(engram_id: str, state: str, valid_from: str, valid_until: str, statement: str) -> ValidityRow:
    temporal = {k: v for k, v in (("valid_from", valid_from), ("valid_until", valid_until)) if v}
    record = engram_record(engram_id, statement, temporal=temporal)
    return ValidityRow(
        engram_id, statement, "project:web", "build", state, valid_from, valid_until, seen_engram(record)
    )


EXPIRED = _validity_row("ENG-V1", "expired", "2026-01-01", "2026-06-30", f"Old rule {MARKUP}")
CURRENT = _validity_row("ENG-V2", "current", "", "2027-12-31", "Current rule")
LATER = _validity_row("ENG-V3", "not_yet_valid", "2027-01-01", "", "Future rule")


def _validity_pane(qtbot: QtBot, rows: list[ValidityRow]) -> tuple[ValidityPane, FakeValiditySession, FakeWorkspace]:
    bars: dict[str, list[WindowBar]] = {
        "ENG-V1": [(EXPIRED.statement, datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 7, 1, tzinfo=UTC), True)],
        "ENG-V2": [(CURRENT.statement, None, datetime(2028, 1, 1, tzinfo=UTC), True)],
    }
    session = FakeValiditySession(rows, bars)
    workspace = FakeWorkspace(session, FixedClock(NOW))
    pane = ValidityPane(workspace.as_workspace())
    qtbot.addWidget(pane)
    pane.refresh(None)
    return pane, session, workspace


def test_validity_lists_the_rows_the_session_gives_in_its_order_as_of_the_workspace_clock(qtbot: QtBot) -> None:
    pane, session, _ws = _validity_pane(qtbot, [CURRENT, EXPIRED, LATER])
    assert session.asked[-1] == (NOW, frozenset(), "")
    assert _texts(pane.model) == [
        ["✔ current", "…", "2027-12-31", "project:web", "Current rule"],
        ["✖ expired", "2026-01-01", "2026-06-30", "project:web", f"Old rule {MARKUP}"],
        ["◔ not yet valid", "2027-01-01", "…", "project:web", "Future rule"],
    ]
    assert pane.summary.text() == "△ expiring soon: 0   ✖ expired: 1   ◔ not yet valid: 1   ✔ current: 1"
    tip = pane.model.data(pane.model.index(1, 4), Qt.ItemDataRole.ToolTipRole)
    assert _rendered(tip) == f"Old rule {MARKUP}"  # the tooltip (rich text) shows the markup as text


def test_validity_timeline_shows_the_bars_of_the_selected_engram(qtbot: QtBot) -> None:
    pane, session, _ws = _validity_pane(qtbot, [EXPIRED, CURRENT, LATER])
    assert pane.current_engram_id() == "ENG-V1"
    assert session.bars_asked[-1] == "ENG-V1"
    assert pane.timeline.bars == session.bars["ENG-V1"] and pane.timeline.now == NOW
    pane.table.selectRow(1)
    assert session.bars_asked[-1] == "ENG-V2"
    assert pane.timeline.bars == session.bars["ENG-V2"]


def test_a_refresh_shows_the_selection_once_whether_it_moved_or_stayed(qtbot: QtBot) -> None:
    """The first fill moves the selection (its signal shows it) and a later refresh keeps it (the pane shows it
    again: its row may read differently): either way the detail is rendered and read once, not twice."""
    pane, session, _ws = _validity_pane(qtbot, [EXPIRED, CURRENT, LATER])
    assert session.bars_asked == ["ENG-V1"]
    pane.refresh(None)
    assert session.bars_asked == ["ENG-V1", "ENG-V1"]
    tensions, _t, workspace = _tensions_pane(qtbot)
    assert [r.channel for r in workspace.jobs.waiting] == ["tension.similar"]  # one read of similar engrams
    workspace.jobs.deliver()
    tensions.refresh(None)
    assert [r.channel for r in workspace.jobs.waiting] == ["tension.similar"]


def test_validity_keeps_the_selected_engram_when_the_rows_change(qtbot: QtBot) -> None:
    pane, session, _ws = _validity_pane(qtbot, [EXPIRED, CURRENT, LATER])
    pane.table.selectRow(1)
    assert pane.current_engram_id() == "ENG-V2"
    session.rows = [LATER, CURRENT]  # another order, one row gone
    pane.refresh(ChangeSet(engrams=frozenset({"ENG-V1"})))
    assert [r.id for r in pane.model.rows] == ["ENG-V3", "ENG-V2"]
    assert pane.current_engram_id() == "ENG-V2"


def test_validity_search_as_of_and_show_engram_are_what_the_session_is_asked(qtbot: QtBot) -> None:
    pane, session, _ws = _validity_pane(qtbot, [EXPIRED, CURRENT])
    pane.apply_search("rule")
    assert session.asked[-1] == (NOW, frozenset(), "rule")
    pane.follow_now.setChecked(False)  # look at another moment than now
    moment = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
    pane.as_of.setDateTime(QDateTime.fromSecsSinceEpoch(int(moment.timestamp()), QTimeZone.utc()))
    assert session.asked[-1] == (moment, frozenset(), "rule")
    session.rows = [EXPIRED, CURRENT, LATER]
    pane.show_engram("ENG-V3")  # brought here from elsewhere to be given a window
    assert session.asked[-1] == (moment, frozenset({"ENG-V3"}), "rule")
    assert pane.current_engram_id() == "ENG-V3"


def test_validity_is_concerned_by_any_engram_and_by_nothing_else() -> None:
    assert ValidityPane.concerns(ChangeSet(engrams=frozenset({"ENG-unrelated"})))
    assert not ValidityPane.concerns(ChangeSet(tensions=frozenset({"T-2026-1201-001"}), events=4))
    assert not ValidityPane.concerns(ChangeSet())


def test_validity_expire_now_carries_the_selected_rows_as_listed(qtbot: QtBot) -> None:
    pane, session, workspace = _validity_pane(qtbot, [EXPIRED, CURRENT, LATER])
    controller = ValidityController(workspace.as_workspace(), pane, lambda shown: shown is pane)
    pane.table.selectRow(1)
    pane.table.selectionModel().select(
        pane.model.index(2, 0),
        pane.table.selectionModel().SelectionFlag.Select | pane.table.selectionModel().SelectionFlag.Rows,
    )
    assert pane.selected_rows() == [CURRENT, LATER]
    controller.expire_now()
    assert session.executed == [ExpireNow((CURRENT.seen, LATER.seen))]


# -- Drafts (the pane takes no collaborator: the review controller hands it rows and detail) --------------------


def _draft(engram_id: str, statement: str, created: str, **extra: object) -> DraftRow:
    record = engram_record(engram_id, statement, commitment="draft", created_at=created, **extra)
    return draft_row(record, NOW, {"ENG-D2"}, {})


D1 = _draft("ENG-D1", "First line\nsecond line", "2026-11-29T15:00:00.000Z", type="procedural")
D2 = _draft(
    "ENG-D2",
    "Deploys run on Fridays",
    "2026-12-02T03:00:00.000Z",
    scope="global",
    sources=[{"session_id": "sess-old"}, {"session_id": None}, {"session_id": "sess-new"}],
)
D3 = _draft("ENG-D3", "Builds use Node 20", "2026-12-02T14:59:00.000Z", domain="ci")
D4 = _draft("ENG-D4", "The cache is cleared weekly", "2026-12-01T15:00:00.000Z")


def _drafts_pane(qtbot: QtBot, rows: list[DraftRow]) -> DraftsPane:
    pane = DraftsPane()
    qtbot.addWidget(pane)
    pane.set_rows(rows)
    return pane


def test_drafts_lists_the_rows_in_the_queues_order_with_each_columns_text(qtbot: QtBot) -> None:
    pane = _drafts_pane(qtbot, [D1, D2, D3])
    assert [r.id for r in pane.model.rows] == ["ENG-D1", "ENG-D2", "ENG-D3"]  # the queue's order, not sorted again
    assert _texts(pane.model) == [
        ["", "First line ⏎ second line", "project:web", "build", "procedural", "3 d", "agent:claude · opus", ""],
        [
            "⚠ in tension",
            "Deploys run on Fridays",
            "global",
            "build",
            "behavioral",
            "12 h",
            "agent:claude · opus",
            "sess-new",
        ],
        ["", "Builds use Node 20", "project:web", "ci", "behavioral", "just now", "agent:claude · opus", ""],
    ]
    assert pane.current_id() == "ENG-D1"
    assert not pane.empty.isVisibleTo(pane)


def test_drafts_a_decided_row_leaves_and_the_next_one_is_selected_without_a_reset(qtbot: QtBot) -> None:
    pane = _drafts_pane(qtbot, [D1, D2, D3, D4])
    pane.select_row(1)
    resets: list[int] = []
    pane.model.modelReset.connect(lambda: resets.append(1))
    after = pane.id_after(["ENG-D2"])
    assert after == "ENG-D3"
    pane.drop_rows(["ENG-D2"], keep=after)
    assert [r.id for r in pane.model.rows] == ["ENG-D1", "ENG-D3", "ENG-D4"]
    assert pane.current_id() == "ENG-D3" and pane.selected_ids() == ["ENG-D3"]
    assert not resets


def test_drafts_a_verdict_rests_on_the_detail_only_while_it_shows_the_row_as_listed(qtbot: QtBot) -> None:
    pane = _drafts_pane(qtbot, [D1, D2])
    assert pane.displayed_seen() is None  # nothing rendered yet
    pane.show_detail("<p>First line</p>", D1, D1.seen)
    assert pane.displayed_seen() == D1.seen and pane.shows(D1)
    edited = _draft("ENG-D1", "First line, edited by an agent", "2026-11-29T15:00:00.000Z")
    pane.set_rows([edited, D2])  # the row reads differently now; its detail was not rendered again
    assert pane.current_id() == "ENG-D1"
    assert pane.displayed_seen() is None
    # a detail rendered from the session's newer engram than the row listed: no verdict on either
    newer = engram_record("ENG-D2", "Deploys run on Thursdays", commitment="draft")
    pane.select_row(1)
    pane.show_detail("<p>Deploys run on Thursdays</p>", D2, seen_engram(newer))
    assert pane.current_id() == "ENG-D2" and pane.displayed_seen() is None


def test_drafts_saving_an_edit_hands_over_the_engram_as_it_was_when_editing_began(qtbot: QtBot) -> None:
    pane = _drafts_pane(qtbot, [D2])
    saved: list[tuple[Seen, str]] = []
    pane.edit_saved.connect(lambda seen, text: saved.append((seen, text)))
    _focus(qtbot, pane, pane.table)
    pane.start_edit(D2.seen, D2.statement)
    assert pane.editing and pane.editor.isVisible()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is pane.editor)
    _type(qtbot, pane.editor, "Deploys run on Thursdays")  # replaces the selected text
    _press(qtbot, pane.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert saved == [(D2.seen, "Deploys run on Thursdays")]
    assert not pane.editing and not pane.editor.isVisible()


def test_drafts_an_edit_saved_unchanged_decides_nothing(qtbot: QtBot) -> None:
    pane = _drafts_pane(qtbot, [D2])
    saved: list[object] = []
    cancelled: list[int] = []
    pane.edit_saved.connect(lambda *args: saved.append(args))
    pane.edit_cancelled.connect(lambda: cancelled.append(1))
    _focus(qtbot, pane, pane.table)
    pane.start_edit(D2.seen, D2.statement)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is pane.editor)
    _press(qtbot, pane.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert saved == [] and cancelled == [1]


@pytest.mark.parametrize("separator", ["\r", "\u2028", "\u2029"])
def test_drafts_a_statement_the_editor_cannot_keep_is_not_opened_for_editing(qtbot: QtBot, separator: str) -> None:
    pane = _drafts_pane(qtbot, [D2])
    pane.start_edit(D2.seen, f"one{separator}two")
    assert not pane.editing and not pane.editor.isVisibleTo(pane)
    assert pane.banner.isVisibleTo(pane) and "cannot keep" in pane.banner.text()


def test_drafts_an_empty_search_result_quotes_the_query_as_plain_text(qtbot: QtBot) -> None:
    pane = _drafts_pane(qtbot, [D1])
    pane.set_rows([], query=MARKUP)
    assert pane.empty.isVisibleTo(pane)
    assert pane.empty.textFormat() == Qt.TextFormat.PlainText  # a label that never reads its text as HTML
    assert f"The search “{MARKUP}” matched none" in pane.empty.text()
    pane.set_rows([D1, D2])
    assert not pane.empty.isVisibleTo(pane) and pane.current_id() == "ENG-D1"


def test_drafts_statement_tooltip_shows_markup_as_text(qtbot: QtBot) -> None:
    row = _draft("ENG-D9", f"Approve {MARKUP} now", "2026-12-01T15:00:00.000Z")
    pane = _drafts_pane(qtbot, [row])
    tip = pane.model.data(pane.model.index(0, 1), Qt.ItemDataRole.ToolTipRole)
    assert _rendered(tip) == f"Approve {MARKUP} now"


# -- History ---------------------------------------------------------------------------------------------------

HOSTILE_ENGRAM = engram_record("ENG-H1", f"Rule {MARKUP}")
EDITED: Record = {
    "event": "engram_updated",
    "engram_id": "ENG-H1",
    "timestamp": "2026-12-02T13:00:00.000Z",
    "data": {"action": "annotate", "reason": f"because {MARKUP}"},
    "actor": {"asserted_by": "agent:claude"},
    "_month": "2026-12",
    "_line": 7,
}
APPROVED: Record = {
    "event": "engram_reviewed",
    "engram_id": "ENG-B1",
    "timestamp": "2026-12-01T10:00:00.000Z",
    "data": {"action": "approve"},
    "actor": {"kind": "human", "asserted_by": "Ada"},
}
RETIRED: Record = {
    "event": "engram_updated",
    "engram_id": "ENG-OUT",
    "timestamp": "2026-11-30T09:30:00.000Z",
    "data": {"field": "status", "from": "active", "to": "retired"},
    "actor": {"asserted_by": "agent:claude"},
}


def _history_pane(qtbot: QtBot) -> tuple[HistoryPane, FakeHistorySession]:
    session = FakeHistorySession([EDITED, APPROVED, RETIRED], [HOSTILE_ENGRAM, B1, OUTSIDER])
    workspace = FakeWorkspace(session, FixedClock(NOW))
    pane = HistoryPane(workspace.as_workspace())
    qtbot.addWidget(pane)
    pane.refresh(None)
    return pane, session


def test_history_lists_the_events_in_the_order_given_with_an_unsigned_human_claim_said_so(qtbot: QtBot) -> None:
    pane, session = _history_pane(qtbot)
    assert _texts(pane.model) == [
        [
            "2026-12-02 13:00:00",
            "unknown kind · agent:claude",
            "engram_updated",
            "ENG-H1",
            "annotate · " + f"because {MARKUP}"[:77] + "…",  # a long part is cut, the others whole
        ],
        ["2026-12-01 10:00:00", "human (UNSIGNED human claim) · Ada", "engram_reviewed", "ENG-B1", "approve"],
        ["2026-11-30 09:30:00", "unknown kind · agent:claude", "engram_updated", "ENG-OUT", "status: active → retired"],
    ]
    assert pane.count.text() == "3 events"
    assert [pane.type_filter.itemText(i) for i in range(pane.type_filter.count())] == [
        "all events",
        "engram_reviewed",
        "engram_updated",
    ]
    assert session.history.asked[-1].empty  # no filter was set
    assert pane.current_engram_id() == "ENG-H1"


def test_history_detail_shows_the_event_and_the_engram_now_as_text(qtbot: QtBot) -> None:
    pane, _session = _history_pane(qtbot)
    shown = pane.detail.toPlainText()
    assert "history/2026-12.jsonl, line 7" in shown
    assert f"Engram now: Rule {MARKUP} (active, decided)" in shown
    assert f'"reason": "because {MARKUP}"' in shown  # the event as JSON, every character as written
    assert "_month" not in shown and "_line" not in shown  # the pane's own bookkeeping is not part of the event
    assert _links_and_images(pane.detail.document()) == [] and pane.detail.blocked == []
    pane.table.selectRow(1)
    assert "UNSIGNED human claim: carries no signature" in pane.detail.toPlainText()


def test_history_is_concerned_by_new_events_or_the_selected_events_engram_only(qtbot: QtBot) -> None:
    pane, _session = _history_pane(qtbot)
    assert pane.concerns(ChangeSet(events=1))
    assert pane.concerns(ChangeSet(engrams=frozenset({"ENG-H1"})))  # the engram the selected event names
    assert not pane.concerns(ChangeSet(engrams=frozenset({"ENG-OUT"})))  # listed, but not selected
    assert not pane.concerns(ChangeSet(tensions=frozenset({"T-2026-1201-001"})))


def test_history_timeline_of_an_engram_clears_every_other_filter(qtbot: QtBot) -> None:
    pane, session = _history_pane(qtbot)
    pane.reviewer.setText("Ada")
    pane.since.setText("2026-12-01")
    pane.actor_filter.setCurrentText("human")
    pane.show_engram("ENG-OUT")
    asked = session.history.asked[-1]
    assert asked.engram_id == "ENG-OUT"
    assert not (asked.reviewer or asked.since or asked.actor_kinds or asked.types or asked.text)
    assert [e["engram_id"] for e in pane.model.events] == ["ENG-OUT"]
    assert pane.count.text() == "1 event"
