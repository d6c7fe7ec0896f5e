"""Reading the window: WCAG AA contrast computed from the palette the app sets (light and dark), counts on tabs,
the position in the queue, flags that fit and differ by severity, notices out of the queue's way, a queue that
uses a tall screen's height, and the dark mode setting."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QFontMetrics, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from plur_desk.ui.common import theme
from plur_desk.ui.common.models import DraftColumn

AA = 4.5
R = QPalette.ColorRole
ROLE_PAIRS = (
    (R.WindowText, R.Window),
    (R.Text, R.Base),
    (R.Text, R.AlternateBase),
    (R.ButtonText, R.Button),
    (R.HighlightedText, R.Highlight),
    (R.PlaceholderText, R.Base),
    (R.ToolTipText, R.ToolTipBase),
)


@pytest.fixture
def themed():
    """Each test leaves the application's palette and the theme's state as it found them."""
    app = QApplication.instance()
    before, state = QPalette(app.palette()), dict(theme._active)
    yield
    app.setPalette(before)
    theme._active.update(state)


def _hex(color) -> str:
    return color.name()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_text_colour_meets_wcag_aa_in_both_schemes(qtbot, window, themed, scheme):
    assert theme.apply(scheme) == scheme
    palette = QApplication.instance().palette()
    for fg, bg in ROLE_PAIRS:
        ratio = theme.contrast(_hex(palette.color(fg)), _hex(palette.color(bg)))
        assert ratio >= AA, (scheme, fg, bg, round(ratio, 2))
    base, alternate = _hex(palette.color(R.Base)), _hex(palette.color(R.AlternateBase))
    # the provenance labels as the detail renders them (issue 40: #B8B8B8 on white, 2:1)
    window.refresh_all()
    window.review.show_current()
    html = window.drafts._html
    labels = set(re.findall(r"color:(#[0-9a-fA-F]{6})'><b>", html))
    assert labels == {theme.color("muted")}
    assert all(theme.contrast(c, base) >= AA and theme.contrast(c, alternate) >= AA for c in labels)
    # every flag's colour in the queue, on both row backgrounds
    model = window.drafts.model
    colours = {
        _hex(c)
        for r in range(model.rowCount())
        if (c := model.index(r, DraftColumn.FLAGS).data(Qt.ItemDataRole.ForegroundRole)) is not None
    }
    assert len(colours) >= 2
    assert all(theme.contrast(c, base) >= AA and theme.contrast(c, alternate) >= AA for c in colours)
    for name in ("muted", "danger", "warn", "info", "link"):  # and the rest of the scheme's own colours
        assert theme.contrast(theme.color(name), base) >= AA, name


def test_dark_mode_follows_the_desktop_and_has_a_setting(qtbot, window, themed, monkeypatch):
    app = QApplication.instance()
    window.workspace.settings.theme = "system"
    theme.apply("system")
    assert theme.scheme() == theme.system_scheme()
    # the desktop switches to dark (this platform has no desktop theme: its answer is given here, and the signal
    # Qt sends on such a switch is emitted as Qt would)
    monkeypatch.setattr(theme, "system_scheme", lambda: "dark")
    QGuiApplication.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    assert theme.scheme() == "dark" and _hex(app.palette().color(R.Base)) == theme.DARK["base"]
    # the View menu's setting: system -> light (kept even though the desktop is dark) -> dark -> system
    window.qactions["view.theme"].trigger()
    assert window.workspace.settings.theme == "light" and theme.scheme() == "light"
    assert _hex(app.palette().color(R.Window)) == theme.LIGHT["window"]
    QGuiApplication.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    assert theme.scheme() == "light"  # an explicit choice is not overridden by the desktop
    icon = window.qactions["edit.undo"].icon().cacheKey()
    window.qactions["view.theme"].trigger()
    assert window.workspace.settings.theme == "dark" and theme.scheme() == "dark"
    assert window.qactions["edit.undo"].icon().cacheKey() != icon  # drawn again in the dark scheme's text colour
    assert "Theme: dark" in window.statusBar().currentMessage()
    window.workspace.settings_store.flush()
    assert "theme: dark" in window.workspace.settings_store.path.read_text()


def test_tabs_count_what_waits_and_the_queue_says_where_you_are(qtbot, window):
    counts = window.session.counts()
    assert window.tabs.tabText(0) == f"Drafts ({counts['drafts']})"
    assert window.tabs.tabText(1) == f"Tensions ({counts['open_tensions']})"
    total = len(window.drafts.model.rows)
    assert window.drafts.position.text() == f"Draft 1 of {total}"
    qtbot.keyClick(window.drafts.table, Qt.Key.Key_J)
    assert window.drafts.position.text() == f"Draft 2 of {total}"
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.table, Qt.Key.Key_A)
    qtbot.waitUntil(lambda: window.tabs.tabText(0) == f"Drafts ({counts['drafts'] - 1})", timeout=5000)
    assert window.drafts.position.text() == f"Draft 2 of {total - 1}"


def test_flags_fit_their_column_and_differ_by_severity(qtbot, window):
    model, table = window.drafts.model, window.drafts.table
    metrics = QFontMetrics(table.font())
    texts = {}
    for r, row in enumerate(model.rows):
        text = model.index(r, DraftColumn.FLAGS).data()
        texts[row.id] = text
        assert metrics.horizontalAdvance(text) + 12 <= table.columnWidth(DraftColumn.FLAGS), text
    injection = next(i for i, t in texts.items() if "instruction" in t)
    expired = next(i for i, t in texts.items() if "expired" in t)
    assert texts[injection].startswith("⛔") and texts[expired].startswith("⚠")
    colour = {i: model.index(model.row_of(i), DraftColumn.FLAGS).data(Qt.ItemDataRole.ForegroundRole) for i in texts}
    assert colour[injection] != colour[expired]
    clean = next(i for i, t in texts.items() if not t)
    assert colour[clean] is None
    tip = model.index(model.row_of(injection), DraftColumn.FLAGS).data(Qt.ItemDataRole.ToolTipRole)
    assert "instruction-like text" in tip  # the whole flag, where the column shows its short name


def test_notices_never_push_the_queue_down(qtbot, window):
    table = window.drafts.table
    top = table.mapTo(window, QPoint(0, 0)).y()
    window.messages.show("Your reviewer key was created.\nIt lives in the key folder.\nIt was registered in keys.yaml.")
    window.drafts.show_banner("You approved 8 drafts in 3 s.\nReview must not become a reflex.")
    QApplication.processEvents()
    assert window.banner.isVisible() and window.drafts.banner.isVisible()
    assert table.mapTo(window, QPoint(0, 0)).y() == top


def test_the_queue_uses_a_tall_screens_height(qtbot, window):
    table, rows = window.drafts.table, window.drafts.table.verticalHeader().defaultSectionSize()
    window.resize(1920, 1080)
    qtbot.waitUntil(lambda: window.height() == 1080, timeout=5000)
    QApplication.processEvents()
    assert table.viewport().height() // rows >= 16  # was about 11 rows over ~400 px of detail
    window.resize(1366, 768)
    qtbot.waitUntil(lambda: window.height() == 768, timeout=5000)
    QApplication.processEvents()
    assert table.viewport().height() // rows >= 10 and window.drafts.detail.height() >= 200


def test_writers_fit_1366_and_the_shortcut_sheet_shows_where(qtbot, window):
    window.resize(1366, 768)
    qtbot.waitUntil(lambda: window.width() == 1366, timeout=5000)
    window.navigation.show_writers()
    qtbot.waitUntil(lambda: window.writers.built and window.writers.model.rowCount() > 0, timeout=20000)
    QApplication.processEvents()
    assert window.writers.table.horizontalScrollBar().maximum() == 0  # no sideways scrolling
    from plur_desk.ui.common.dialogs import ShortcutSheet

    sheet = ShortcutSheet(window)
    qtbot.addWidget(sheet)
    sheet.show()
    qtbot.waitExposed(sheet)
    table = sheet.table
    assert table.horizontalScrollBar().maximum() == 0
    where = table.horizontalHeader().sectionViewportPosition(2)
    assert where >= 0 and where + table.columnWidth(2) <= table.viewport().width()
    assert table.horizontalHeaderItem(2).text() == "Where"
