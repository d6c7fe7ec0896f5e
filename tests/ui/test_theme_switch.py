"""A theme switch with a detail on screen: every widget already shown takes the new palette at once (issue 40),
its label colours checked against that palette at WCAG AA."""

from __future__ import annotations

import re

import pytest
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from plur_desk.ui.common import theme

AA = 4.5
R = QPalette.ColorRole


@pytest.fixture
def themed():
    app = QApplication.instance()
    before, state = QPalette(app.palette()), dict(theme._active)
    yield
    app.setPalette(before)
    theme._active.update(state)


def _labels(html: str) -> set[str]:
    return set(re.findall(r"color:(#[0-9a-fA-F]{6})'><b>", html))


def _banner_background(label) -> str:  # type: ignore[no-untyped-def]
    image = label.grab().toImage()
    return image.pixelColor(image.width() - 4, image.height() // 2).name()


def _switch_to(window, scheme: str) -> None:  # type: ignore[no-untyped-def]
    while theme.scheme() != scheme or window.workspace.settings.theme != scheme:
        window.qactions["view.theme"].trigger()


@pytest.mark.parametrize(("first", "then"), [("light", "dark"), ("dark", "light")])
def test_a_detail_on_screen_takes_the_new_palette_at_once(qtbot, window, themed, first, then):
    _switch_to(window, first)
    window.review.show_current()
    window.messages.show("A notice on screen before the switch")
    window.drafts.show_banner("A banner in the drafts pane")
    QApplication.processEvents()
    assert _labels(window.drafts._html) == {theme.color("muted")}
    before_banner = _banner_background(window.banner)

    _switch_to(window, then)  # View > Switch Theme, nothing else: no selection moves, no pane is shown again

    palette = QApplication.instance().palette()
    base, alternate = palette.color(R.Base).name(), palette.color(R.AlternateBase).name()
    labels = _labels(window.drafts._html)
    assert labels == {theme.SCHEMES[then]["muted"]}, labels
    assert all(theme.contrast(c, base) >= AA and theme.contrast(c, alternate) >= AA for c in labels)
    for banner in (window.banner, window.drafts.banner):  # notices drawn on the new scheme's background
        assert banner.isVisible()
        assert _banner_background(banner) == alternate, banner.objectName()
        text = banner.palette().color(R.WindowText).name()
        assert theme.contrast(text, alternate) >= AA
    assert _banner_background(window.banner) != before_banner


def test_a_pane_hidden_at_the_switch_shows_the_new_palette_when_shown(qtbot, window, themed):
    _switch_to(window, "light")
    window.drafts.show_banner("A banner in the drafts pane")
    window.qactions["view.tensions"].trigger()  # the drafts pane (and its notice) hidden
    _switch_to(window, "dark")
    qtbot.wait(100)  # the hidden panes are polished again a turn each
    window.qactions["view.drafts"].trigger()
    QApplication.processEvents()
    assert window.drafts.banner.isVisible()
    assert _banner_background(window.drafts.banner) == theme.DARK["alternate"]
    assert _labels(window.drafts._html) == {theme.DARK["muted"]}
