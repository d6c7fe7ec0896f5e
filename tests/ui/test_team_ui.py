"""Team review in the window: the Team Disagreements list settles a disagreement, Sync with Team converges."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from plur_desk.app.demo import demo_source
from plur_desk.app.review.bootstrap import open_session
from plur_desk.app.settings import Settings, SettingsStore
from plur_desk.app.team.sync import run_sync
from plur_desk.domain.commands import ApproveDrafts, RejectDrafts
from plur_desk.infra.clock import FixedClock
from plur_desk.ui.app import make_application
from plur_desk.ui.main_window import MainWindow
from plur_desk.ui.review.detail import engram_html

from support.plain_team import two_clones
from ui.conftest import engrams_on_disk


@pytest.fixture
def clones(tmp_path: Path) -> tuple[Path, Path, str]:
    ann, bob = two_clones(
        tmp_path, lambda ann: shutil.copytree(demo_source(), ann, dirs_exist_ok=True), ("engrams.yaml", "tensions.yaml")
    )
    shutil.copytree(ann / "history", bob / "history")
    first = open_session(ann, "Ann", load_history=False, use_cache=False)
    draft = sorted(r.id for r in first.queue.rows())[0]
    first.execute(ApproveDrafts(tuple(first.writes.seen([draft]))))
    (_s := open_session(bob, "Bob", load_history=False, use_cache=False)).execute(
        RejectDrafts(tuple(_s.writes.seen([draft])), "only true for the web tier")
    )
    for store in (ann, bob, ann):
        assert run_sync(store).error is None
    return ann, bob, draft


def test_team_dialog_settles_a_disagreement_and_syncs(qtbot, clones, tmp_path) -> None:
    ann, bob, draft = clones
    make_application()
    earlier = FixedClock(datetime.now(UTC) - timedelta(days=1))  # a clock behind the teammates': settling still works
    win = MainWindow(SettingsStore(tmp_path / "settings.yaml"), Settings(reviewer_name="Ann"), "Ann", earlier)
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.store_opened, timeout=60000):  # the whole store, not just the drafts
        win.open_path(ann)
    qtbot.waitUntil(lambda: win.session is not None and win.jobs.pending("session") == 0, timeout=20000)

    win.qactions["team.disagreements"].trigger()
    dialog = win.team.dialog
    assert dialog is not None and dialog.isVisible()
    assert dialog.list.count() == 1
    assert draft in dialog.list.item(0).text() and "Bob rejected" in dialog.list.item(0).text()
    assert dialog.keep_approval.isEnabled() and not dialog.winner_a.isVisible()

    detail = engram_html(win.session, draft)
    assert "Team decisions" in detail and "Bob</b> rejected" in detail and "Ann</b> approved" in detail
    assert "Team disagreement on this engram" in detail
    dialog.keep_approval.click()
    qtbot.waitUntil(lambda: dialog.list.count() == 0 and win.jobs.pending("session") == 0, timeout=20000)
    assert engrams_on_disk(ann)[draft]["status"] == "active"
    assert "No team disagreements" in dialog.heading.text()

    dialog.sync.click()
    qtbot.waitUntil(lambda: "Converged" in dialog.report.toPlainText(), timeout=30000)
    assert "Went out: Ann approved" in dialog.report.toPlainText()
    assert run_sync(bob).exit_code == 0  # Bob receives the settlement; nothing waits any more
    assert engrams_on_disk(bob)[draft] == engrams_on_disk(ann)[draft]
    win.close()


def test_a_disagreement_is_settled_only_on_the_text_the_list_shows(qtbot, clones, tmp_path) -> None:
    """The list shows each disagreement with its statement; a teammate's rewrite read in since (a sync, a reload)
    while the list still shows the old text refuses the settlement: nothing written, the engram as it was."""
    from support.sessions import rewrite_statement

    ann, _bob, draft = clones
    make_application()
    win = MainWindow(SettingsStore(tmp_path / "settings.yaml"), Settings(reviewer_name="Ann"), "Ann")
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.store_opened, timeout=60000):
        win.open_path(ann)
    qtbot.waitUntil(lambda: win.session is not None and win.jobs.pending("session") == 0, timeout=20000)
    win.qactions["team.disagreements"].trigger()
    dialog = win.team.dialog
    statement = str(win.session.engram(draft)["statement"])
    assert f"{draft}: {statement}" in dialog.list.item(0).text()

    rewrite_statement(ann, draft, "Rewritten by a teammate, arrived with a sync")
    win.session.reload_if_changed()  # the session has read it; the list is not shown again yet
    before = engrams_on_disk(ann)[draft]
    errors: list[str] = []
    win.messages.error_shown.connect(errors.append)
    dialog.keep_approval.click()
    qtbot.waitUntil(lambda: bool(errors), timeout=10000)
    assert f"{draft} changed since you looked (statement" in errors[0], errors
    qtbot.waitUntil(lambda: win.jobs.pending("session") == 0, timeout=10000)
    assert engrams_on_disk(ann)[draft] == before
    win.close()
