"""The actions' SVG icons are drawn at the size they are shown at, when first shown (ui/common/icons.py): a launch
no longer parses 25 SVGs and draws each at five sizes before the first draft. What is drawn is what drawing the
recoloured SVG at that size gives, in every mode, and an icon Qt copies (its engine cloned) keeps working."""

from __future__ import annotations

import gc

from PySide6.QtCore import QByteArray, QSize, Qt
from PySide6.QtGui import QColor, QIcon, QImage, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer

from plur_desk.ui.common import icons


def _drawn_directly(name: str, color: QColor, side: int) -> QImage:
    data = QByteArray(icons._svg(name).replace("currentColor", color.name()).encode())
    pixmap = QPixmap(QSize(side, side))
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    QSvgRenderer(data).render(painter)
    painter.end()
    return pixmap.toImage()


def test_an_icon_is_parsed_and_drawn_only_when_shown_and_once_per_size(qapp, monkeypatch):
    made: list[object] = []

    class Counted(QSvgRenderer):
        def __init__(self, *args: object) -> None:
            super().__init__(*args)
            made.append(self)

    monkeypatch.setattr(icons, "QSvgRenderer", Counted)
    icon = icons.icon("approve")
    assert made == []  # nothing parsed or drawn when the action gets its icon
    first = icon.pixmap(QSize(20, 20))
    assert len(made) == 1 and first.size() == QSize(20, 20)
    assert icon.pixmap(QSize(20, 20)).cacheKey() == first.cacheKey()  # kept, not drawn again
    assert icon.pixmap(QSize(24, 24)).size() == QSize(24, 24)
    assert len(made) == 1  # one parse for every size


def test_what_is_drawn_is_the_recoloured_svg_at_that_size(qapp):
    color = QColor("#123456")
    icon = icons.icon("reject", color)
    for side in (16, 20, 48):
        image = icon.pixmap(QSize(side, side)).toImage()
        assert image == _drawn_directly("reject", color, side).convertToFormat(image.format())
        assert any(image.pixelColor(x, y).alpha() for x in range(side) for y in range(side))


def test_a_disabled_icon_is_the_styles_disabled_look_of_the_drawn_one(qapp):
    icon = icons.icon("undo", QColor("#000000"))
    normal = icon.pixmap(QSize(24, 24)).toImage()
    disabled = icon.pixmap(QSize(24, 24), QIcon.Mode.Disabled).toImage()
    assert disabled.size() == normal.size() and disabled != normal


def test_a_copy_qt_makes_of_an_icon_keeps_drawing_after_collection(qapp):
    icon = icons.icon("search")
    for _ in range(3):
        copy = QIcon(icon)
        copy.addPixmap(icon.pixmap(16))  # a change to a shared icon: Qt clones its engine
        gc.collect()
        assert not copy.pixmap(QSize(20, 20)).isNull()
        del copy
        gc.collect()
    assert not icon.pixmap(QSize(32, 32)).isNull()
