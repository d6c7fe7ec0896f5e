"""The drafts queue, tension and validity rows kept by id give exactly the rows a rebuild from scratch gives,
through decisions, undo, tension outcomes, PLUR rewriting the file and the clock moving on."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from plur_desk.app.review.bootstrap import open_session
from plur_desk.app.review.queries import SORTS, next_change
from plur_desk.app.review.rows import draft_row
from plur_desk.app.review.session import ReviewSession
from plur_desk.app.review.validity_rows import ValidityRows, window_bars
from plur_desk.domain.commands import (
    ApproveDrafts,
    ConfirmTension,
    DismissTension,
    EditStatement,
    ExpireNow,
    RejectDrafts,
)
from plur_desk.domain.engram_view import is_draft
from plur_desk.infra.clock import FixedClock, parse_instant
from plur_desk.store.lists.yaml_dump import dump_engrams_document, dump_tensions_document

from support.moments import NOW


def _engram(i: int, **extra: object) -> dict[str, object]:
    e: dict[str, object] = {
        "id": f"ENG-2026-11-{i:02d}-001",
        "version": 2,
        "status": "active",
        "type": "behavioral",
        "scope": "project:web" if i % 2 else "global",
        "statement": f"Statement number {i}",
        "commitment": "draft",
        "created_at": f"2026-11-{i:02d}T10:00:00.000Z",
        "content_hash": f"{i % 9}" * 64,  # 10..18 repeat 1..9: the same content asserted twice
    }
    e.update(extra)
    return e


@pytest.fixture
def session(tmp_path) -> ReviewSession:
    root = tmp_path / "store"
    root.mkdir()
    engrams = [_engram(i) for i in range(1, 19)]
    learned = "2026-11-01T00:00:00.000Z"
    engrams[2]["temporal"] = {"learned_at": learned, "valid_until": "2026-12-03"}  # expires tomorrow: the clock alone
    engrams[3]["temporal"] = {"learned_at": learned, "valid_from": "2026-12-05"}  # changes these rows
    engrams[4]["commitment"] = "decided"
    engrams[17]["created_at"] = "2026-12-02T11:30:00.000Z"  # 30 minutes old: its age ticks to an hour
    (root / "engrams.yaml").write_text(dump_engrams_document({"engrams": engrams}))
    tension = {
        "id": "T-2026-1201-001",
        "engram_a": "ENG-2026-11-01-001",
        "engram_b": "ENG-2026-11-05-001",
        "statement_a": "Statement number 1",
        "statement_b": "Statement number 5",
        "confidence": 0.9,
        "reason": "conflict",
        "detected_at": "2026-12-01T10:00:00.000Z",
        "status": "detected",
        "resolved_by": None,
        "resolved_at": None,
        "category": "factual",
    }
    (root / "tensions.yaml").write_text(dump_tensions_document([tension]))
    return open_session(root, "Ada Reviewer", clock=FixedClock(NOW), use_cache=False)


def _rebuilt(session: ReviewSession, sort: str = "age", descending: bool = False):
    """Every draft derived afresh, as session.queue.rows() did before the queue kept them."""
    now = session.now()
    rows = [
        draft_row(e, now, session.open_tension_ids(), session.verdicts.rejected_verdicts())
        for e in session.all_engrams()
        if is_draft(e)
    ]
    return sorted(rows, key=SORTS[sort], reverse=descending)


def _as_read(rows):
    """Rows as a person reads them: the age in whole hours under a day, else whole days (the queue derives a
    row again when that changes, not every second)."""
    return [replace(r, age_days=int(r.age_days * 24) if r.age_days < 1 else 24 + int(r.age_days)) for r in rows]


def _same(session: ReviewSession) -> None:
    for sort in ("age", "statement", "scope", "flags"):
        for descending in (False, True):
            assert _as_read(session.queue.rows(sort, descending)) == _as_read(_rebuilt(session, sort, descending))
    assert session.counts()["drafts"] == len(_rebuilt(session))


def test_the_queue_follows_every_decision_and_undo(session: ReviewSession) -> None:
    _same(session)
    first = session.queue.rows()[0]
    assert "in tension" in first.flags
    session.execute(ApproveDrafts(tuple(session.writes.seen([first.id]))))
    _same(session)
    # a rejection flags the draft with the same content as "rejected before"
    session.execute(RejectDrafts(tuple(session.writes.seen(["ENG-2026-11-02-001"])), "wrong"))
    twin = next(r for r in session.queue.rows() if r.id == "ENG-2026-11-11-001")
    assert twin.rejected_before is not None
    _same(session)
    session.undo()
    twin = next(r for r in session.queue.rows() if r.id == "ENG-2026-11-11-001")
    assert twin.rejected_before is None
    _same(session)
    session.redo()
    _same(session)
    session.undo()  # the rejection
    session.undo()  # the approval: the draft is back, still in tension
    assert "in tension" in session.queue.rows()[0].flags
    _same(session)
    session.execute(DismissTension(session.writes.seen_tension("T-2026-1201-001")))
    assert "in tension" not in next(r for r in session.queue.rows() if r.id == first.id).flags
    _same(session)
    session.execute(EditStatement(session.writes.seen(["ENG-2026-11-08-001"])[0], "An edited statement"))
    session.execute(ExpireNow(tuple(session.writes.seen(["ENG-2026-11-09-001"]))))
    _same(session)


def test_the_clock_alone_changes_rows_when_it_should(session: ReviewSession) -> None:
    _same(session)
    clock = session.clock
    assert isinstance(clock, FixedClock)
    young = next(r for r in session.queue.rows() if r.id == "ENG-2026-11-18-001")
    clock.advance(40 * 60)  # over the hour: the age reads differently
    assert next(r for r in session.queue.rows() if r.id == "ENG-2026-11-18-001").age_days > 1 / 24 > young.age_days
    _same(session)
    clock.advance(2 * 86400)  # ENG-…-03 expires, ENG-…-04 is still not valid
    flags = {r.id: r.flags for r in session.queue.rows()}
    assert "expired" in flags["ENG-2026-11-03-001"]
    _same(session)
    clock.advance(3 * 86400)  # ENG-…-04 opens
    assert "not yet valid" not in next(r for r in session.queue.rows() if r.id == "ENG-2026-11-04-001").flags
    _same(session)


def test_a_rewritten_file_is_compared_by_identity_then_value(session: ReviewSession) -> None:
    _same(session)
    engrams = [_engram(i) for i in range(1, 19)]
    engrams[6]["statement"] = "PLUR rewrote this one"
    engrams[7]["commitment"] = "decided"  # PLUR approved another: it leaves the queue
    engrams.append(_engram(19))  # and a new draft arrived
    (session.store.root / "engrams.yaml").write_text(dump_engrams_document({"engrams": engrams}))
    change = session.reload_if_changed()
    assert change.engrams
    ids = [r.id for r in session.queue.rows()]
    assert "ENG-2026-11-08-001" not in ids and "ENG-2026-11-19-001" in ids
    _same(session)


def test_next_change_is_the_earliest_moment_a_row_reads_differently() -> None:
    engram = {"temporal": {"valid_until": "2026-12-20"}}
    born = parse_instant("2026-12-02T11:30:00.000Z")
    assert next_change(engram, born, NOW) == datetime(2026, 12, 2, 12, 30, tzinfo=UTC)  # age: one hour
    old = parse_instant("2026-11-01T10:00:00.000Z")
    assert next_change(engram, old, NOW) == datetime(2026, 12, 3, 10, 0, tzinfo=UTC)  # age: the next day
    soon = datetime(2026, 12, 6, 23, 59, 59, 999000, tzinfo=UTC)  # 14 days before the window closes
    assert next_change(engram, old, datetime(2026, 12, 6, 11, 0, tzinfo=UTC)) == soon


def test_validity_rows_follow_the_records(session: ReviewSession) -> None:
    rows = ValidityRows(lambda: session._engrams)
    before = {r.id: r.state for r in rows.rows(NOW)}
    assert before == {"ENG-2026-11-03-001": "expiring_soon", "ENG-2026-11-04-001": "not_yet_valid"}
    session.execute(ExpireNow(tuple(session.writes.seen(["ENG-2026-11-09-001"]))))
    after = {r.id: r.state for r in rows.rows(NOW + timedelta(seconds=1))}
    assert after["ENG-2026-11-09-001"] == "expired"
    assert [r.id for r in rows.rows(NOW, extra=["ENG-2026-11-10-001"], search="number 10")] == ["ENG-2026-11-10-001"]


def test_tension_rows_follow_records_engrams_and_the_clock(session: ReviewSession) -> None:
    from plur_desk.app.review.rows import tension_row

    def fresh(statuses=("detected", "confirmed", "dismissed", "resolved")):
        now = session.now()
        rows = [
            tension_row(t, now, [session.engram(str(t.get(k))) for k in ("engram_a", "engram_b")])
            for t in session.all_tensions()
            if t.get("status", "detected") in statuses
        ]
        return sorted(rows, key=lambda r: r.detected_at)

    all_statuses = ("detected", "confirmed", "dismissed", "resolved")
    assert session.tensions(all_statuses) == fresh()
    session.execute(EditStatement(session.writes.seen(["ENG-2026-11-01-001"])[0], "One side edited"))
    assert session.tensions(all_statuses) == fresh()  # the row carries both engrams as seen: re-derived
    session.execute(ConfirmTension(session.writes.seen_tension("T-2026-1201-001")))
    assert session.tensions() == fresh(("detected", "confirmed"))
    assert session.tensions(("dismissed",)) == []
    clock = session.clock
    assert isinstance(clock, FixedClock)
    clock.advance(86400)
    assert session.tensions(all_statuses) == fresh()  # a day later the age reads differently


def test_window_bars_show_the_engram_beside_the_active_windows_of_its_domain() -> None:
    window = {"temporal": {"valid_from": "2026-01-01", "valid_until": "2026-12-31"}}
    records = [
        _engram(1, domain="billing", **window),
        _engram(2, domain="billing"),  # no window: no bar
        _engram(3, domain="billing", status="retired", **window),  # not injected: no bar
        _engram(4, domain="search", **window),  # another domain
        *(_engram(i, domain="billing", **window) for i in range(5, 20)),
    ]
    asked = _engram(2, domain="billing")
    bars = window_bars(records, asked)
    assert len(bars) == 12
    assert bars[0][0] == "Statement number 1"
    assert bars[1] == ("Statement number 2", None, None, True)  # its own row, windowless, in store order
    assert [b[0] for b in bars[2:4]] == ["Statement number 5", "Statement number 6"]
    assert bars[0][1] == datetime(2026, 1, 1, tzinfo=UTC)
    assert not any(b[3] for b in bars[2:])
    assert window_bars(records, _engram(30)) == []  # no domain: only its own row, and it is not in the list
    assert window_bars([*records[:4], _engram(30)], _engram(30))[0][3]


def test_changed_since_names_exactly_the_rows_that_changed(session: ReviewSession) -> None:
    """What a list kept by id relies on: between two generations, the rows that left are `gone` and every row that
    is new or another object is `derived` (a list holding the old rows less `gone` holds the new rows exactly
    when `derived` is empty)."""
    assert session.queue.changed_since(0) is None  # rows of no generation: the queue cannot say
    start, _rows = session.queue.rows_at()
    steps = [
        lambda: session.execute(ApproveDrafts(tuple(session.writes.seen([session.queue.rows()[0].id])))),
        lambda: session.execute(ApproveDrafts(tuple(session.writes.seen([r.id for r in session.queue.rows()[2:5]])))),
        lambda: session.execute(
            RejectDrafts(tuple(session.writes.seen(["ENG-2026-11-02-001"])), "wrong")
        ),  # its twin is flagged
        session.undo,
        session.undo,  # the three approved come back
        lambda: session.clock.advance(40 * 60),  # type: ignore[attr-defined]  # an age ticks to the next hour
        lambda: session.execute(EditStatement(session.writes.seen(["ENG-2026-11-08-001"])[0], "An edited statement")),
        lambda: session.execute(DismissTension(session.writes.seen_tension("T-2026-1201-001"))),
        lambda: session.queue.rows("statement", True),  # another order: no row changed
    ]
    history = [session.queue.rows_at()]
    for step in steps:
        step()
        history.append(session.queue.rows_at())
        for generation, rows in history:  # from every earlier generation, not just the last
            now_at, now_rows = history[-1]
            changes = session.queue.changed_since(generation)
            assert changes is not None and changes.generation == now_at
            old, new = {r.id: r for r in rows}, {r.id: r for r in now_rows}
            assert changes.gone & old.keys() == old.keys() - new.keys() and changes.gone.isdisjoint(new)
            assert changes.derived == {i for i, r in new.items() if old.get(i) is not r}
    assert history[-1][0] == history[-2][0]  # the new order changed no row
    assert history[1][0] > start and session.queue.changed_since(history[-1][0] + 1) is None


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"temporal": "not a mapping", "tags": ["a", ["b", "c"]], "rationale": "why"},
        {"temporal": {"valid_from": "2027-01-01"}, "relations": {"superseded_by": ["ENG-2026-11-02-001"]}},
        {"temporal": {"valid_until": "2026-11-01"}, "relations": {"superseded_by": []}, "domain": None},
        {"relations": {"superseded_by": "ENG-x"}, "scope": "project:x", "type": "procedural"},
    ],
)
def test_a_row_rests_on_the_fingerprint_the_write_compares_and_flags_by_the_views_rules(extra) -> None:
    """The queue builds its rows from plain functions of the record (not a view per draft): what a decision on
    the row carries is exactly what the write path compares, and the flags read as the view's rules say."""
    from plur_desk.domain.engram_view import EngramView
    from plur_desk.domain.review import engram_fingerprint

    engram = {"id": "ENG-2026-11-01-001", "statement": "Deploys freeze on Friday", "status": "active"}
    engram |= {"commitment": "draft", "created_at": "2026-11-01T10:00:00.000Z", **extra}
    row = draft_row(engram, NOW, set(), {})
    assert dict(row.seen.fingerprint) == engram_fingerprint(engram)
    view = EngramView(engram)
    assert ("superseded" in row.flags) == bool(view.superseded_by)
    outside = view.window.state(NOW)
    assert [f for f in row.flags if f in ("expired", "not yet valid")] == (
        [outside.replace("_", " ")]
        if outside in ("expired", "not_yet_valid") and "temporal" in extra and isinstance(extra["temporal"], dict)
        else []
    )
    assert row.age_days == draft_row(engram, NOW, set(), {}, parse_instant(engram["created_at"])).age_days
