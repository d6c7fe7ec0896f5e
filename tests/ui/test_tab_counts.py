"""Counts on every tab that has work waiting (issue 40), kept up to date after decisions, undo and reloads."""

from __future__ import annotations

from PySide6.QtCore import Qt

from ui.conftest import wait_loaded

ATTENTION = ("expired", "expiring_soon")


def _tabs(window) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {name: window.tabs.tabText(i) for i, name in enumerate(window.panes)}


def _windows_to_look(window) -> int:  # type: ignore[no-untyped-def]
    """What the Validity pane lists as needing a look, read the pane's own way (every window, on this thread)."""
    session = window.session
    return sum(1 for r in session.validity.rows(session.now()) if r.state in ATTENTION)


def _settled(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: window.jobs.pending("session") == 0 and window.scale.view is not None, timeout=20000)
    qtbot.waitUntil(lambda: window.tab_counts._validity is not None, timeout=10000)


def test_every_tab_with_work_waiting_says_how_much(qtbot, window):
    _settled(qtbot, window)
    counts, tabs = window.session.counts(), _tabs(window)
    assert tabs["drafts"] == f"Drafts ({counts['drafts']})"
    assert tabs["tensions"] == f"Tensions ({counts['open_tensions']})"
    looks = _windows_to_look(window)
    assert looks > 0 and tabs["validity"] == f"Validity ({looks})"
    assert tabs["clusters"] == f"Clusters ({len(window.scale.view.clusters())})"
    assert tabs["changes"] == f"Changes ({window.changes.count()})"
    assert tabs["history"] == "History" and tabs["writers"] == "Writers"  # records, not work waiting
    assert tabs["conflicts"] == "Conflicts"  # not scanned yet: no number that would mean nothing
    qtbot.waitUntil(
        lambda: window.conflicts.service is not None and window.jobs.pending("conflicts") == 0, timeout=20000
    )
    window.qactions["view.conflicts"].trigger()
    pane = window.conflicts_pane
    qtbot.waitUntil(lambda: pane.found is not None and window.jobs.pending("conflicts") == 0, timeout=30000)
    found = len(pane.found)
    assert found > 0 and _tabs(window)["conflicts"] == f"Conflicts ({found})"
    pane.table.setFocus()
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(pane.table, Qt.Key.Key_N)  # an answer: the pair leaves, the count follows
    qtbot.waitUntil(lambda: _tabs(window)["conflicts"] == f"Conflicts ({found - 1})", timeout=5000)
    assert _tabs(window)["tensions"] == f"Tensions ({window.session.counts()['open_tensions']})"


def test_the_validity_count_follows_a_decision_its_undo_and_a_reload(qtbot, window, store_copy):
    _settled(qtbot, window)
    session = window.session
    current = next(r for r in session.validity.rows(session.now()) if r.state == "current")
    looks = _windows_to_look(window)
    assert _tabs(window)["validity"] == f"Validity ({looks})"
    window.qactions["view.validity"].trigger()
    window.validity.show_engram(current.id)
    window.validity.table.setFocus()
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.validity.table, Qt.Key.Key_X)  # expire now
    window.qactions["view.drafts"].trigger()  # the Validity pane hidden: its count still follows
    qtbot.waitUntil(lambda: _tabs(window)["validity"] == f"Validity ({looks + 1})", timeout=10000)
    assert _windows_to_look(window) == looks + 1
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        window.qactions["edit.undo"].trigger()
    qtbot.waitUntil(lambda: _tabs(window)["validity"] == f"Validity ({looks})", timeout=10000)
    # an agent reopens an expired window (a date written by hand in engrams.yaml): read on the next reload
    expired = next(r for r in session.validity.rows(session.now()) if r.state == "expired" and r.valid_until)
    engrams = store_copy / "engrams.yaml"
    text = engrams.read_text(encoding="utf-8")
    assert text.count(f'valid_until: "{expired.valid_until}"') == 1
    engrams.write_text(text.replace(f'valid_until: "{expired.valid_until}"', 'valid_until: "2030-06-30"'), "utf-8")
    window.qactions["file.reload"].trigger()
    wait_loaded(qtbot, window)
    qtbot.waitUntil(lambda: _windows_to_look(window) == looks - 1, timeout=10000)
    qtbot.waitUntil(lambda: _tabs(window)["validity"] == f"Validity ({looks - 1})", timeout=10000)
    # and an agent's change the window finds by itself (a quiet reload, not asked for)
    soon = next(r for r in session.validity.rows(session.now()) if r.state == "expiring_soon" and r.valid_until)
    text = engrams.read_text(encoding="utf-8")
    engrams.write_text(text.replace(f'valid_until: "{soon.valid_until}"', 'valid_until: "2031-01-01"', 1), "utf-8")
    with qtbot.waitSignal(window.opener.reloaded, timeout=10000) as reloaded:
        window.opener.reload_quiet()
    assert reloaded.args[1] is False and soon.id in reloaded.args[0].engrams
    qtbot.waitUntil(lambda: _tabs(window)["validity"] == f"Validity ({looks - 2})", timeout=10000)
    assert _windows_to_look(window) == looks - 2


def test_another_store_has_no_conflicts_count_before_its_own_scan(qtbot, window, tmp_path):
    import shutil

    from plur_desk.app.demo import demo_source

    qtbot.waitUntil(
        lambda: window.conflicts.service is not None and window.jobs.pending("conflicts") == 0, timeout=20000
    )
    window.qactions["view.conflicts"].trigger()
    pane = window.conflicts_pane
    qtbot.waitUntil(lambda: pane.found is not None and window.jobs.pending("conflicts") == 0, timeout=30000)
    assert _tabs(window)["conflicts"] == f"Conflicts ({len(pane.found)})" and pane.found
    window.qactions["view.drafts"].trigger()
    other = tmp_path / "other"
    shutil.copytree(demo_source(), other, ignore=shutil.ignore_patterns(".plur-desk"))
    (other / "engrams.yaml").write_text(
        (other / "engrams.yaml").read_text("utf-8").replace("every Thursday afternoon", "every Friday afternoon"),
        "utf-8",
    )  # the demo's one likely contradiction is not in this store
    window.open_path(other)
    wait_loaded(qtbot, window)
    assert _tabs(window)["conflicts"] == "Conflicts" and pane.found is None  # the pairs of the store left are gone
    qtbot.waitUntil(
        lambda: window.conflicts.service is not None and window.jobs.pending("conflicts") == 0, timeout=20000
    )
    window.qactions["view.conflicts"].trigger()
    qtbot.waitUntil(lambda: pane.found is not None and window.jobs.pending("conflicts") == 0, timeout=30000)
    assert all(c.key != ":".join(sorted(("ENG-2026-12-02-022", "ENG-2026-12-02-026"))) for c in pane.found)
    assert _tabs(window)["conflicts"] == f"Conflicts ({len(pane.found)})"
