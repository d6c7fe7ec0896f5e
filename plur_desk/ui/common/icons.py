"""SVG icons from the package, recoloured to the current palette so light and dark themes both work.

An icon is drawn at the size it is shown at, the first time it is shown there (`_SvgEngine`): a launch made 25
icons, each parsed and drawn at five sizes (125 renders, ~50 M instructions of the window's build) before the
first draft could be shown, where the toolbar and the queue's buttons show a few of them at one size each.
"""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QByteArray, QRect, QSize, Qt
from PySide6.QtGui import QColor, QIcon, QIconEngine, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication, QStyleOption
from shiboken6 import Shiboken

from plur_desk.resources import RESOURCES

# Copies Qt made of an icon's engine (`clone`, when a shared icon is changed) stay referenced here until Qt deletes
# them: PySide hands a returned engine to Qt without keeping its Python half alive (a crash on the next paint).
_CLONES: list[QIconEngine] = []


@lru_cache(maxsize=128)
def _svg(name: str) -> str:
    return (RESOURCES / "icons" / f"{name}.svg").read_text(encoding="utf-8")


class _SvgEngine(QIconEngine):
    """One recoloured SVG, drawn at each size (and device pixel ratio) the first time it is asked for, then kept.
    A disabled or selected look is made from the drawn one by the style, as Qt does for an icon of pixmaps."""

    def __init__(self, data: bytes) -> None:
        super().__init__()
        self._data = data
        self._renderer: QSvgRenderer | None = None
        self._drawn: dict[tuple[int, int, float, QIcon.Mode], QPixmap] = {}

    def clone(self) -> QIconEngine:
        _CLONES[:] = [kept for kept in _CLONES if Shiboken.isValid(kept)]  # those Qt deleted are let go
        copy = _SvgEngine(self._data)
        _CLONES.append(copy)
        return copy

    def key(self) -> str:
        return "plur_desk_svg"

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        painter.drawPixmap(rect, self.scaledPixmap(rect.size(), mode, state, painter.device().devicePixelRatioF()))

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        return self.scaledPixmap(size, mode, state, 1.0)

    def scaledPixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State, scale: float) -> QPixmap:
        key = (size.width(), size.height(), scale, mode)
        drawn = self._drawn.get(key)
        if drawn is None:
            drawn = self._drawn[key] = self._draw(size, mode, scale)
        return drawn

    def _draw(self, size: QSize, mode: QIcon.Mode, scale: float) -> QPixmap:
        if mode != QIcon.Mode.Normal:
            normal = self.scaledPixmap(size, QIcon.Mode.Normal, QIcon.State.Off, scale)
            option = QStyleOption()
            option.palette = QApplication.palette()
            return QApplication.style().generatedIconPixmap(mode, normal, option)
        if self._renderer is None:
            self._renderer = QSvgRenderer(QByteArray(self._data))
        side = max(1, round(min(size.width(), size.height()) * scale))
        pixmap = QPixmap(QSize(side, side))
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        self._renderer.render(painter)
        painter.end()
        pixmap.setDevicePixelRatio(scale)
        return pixmap


def icon(name: str, color: QColor | None = None) -> QIcon:
    if color is None:
        palette = QApplication.palette() if QApplication.instance() is not None else QPalette()
        color = palette.color(QPalette.ColorRole.ButtonText)
    return QIcon(_SvgEngine(_svg(name).replace("currentColor", color.name()).encode()))


def app_icon() -> QIcon:
    path = RESOURCES / "plur-desk.svg"
    return QIcon(str(path)) if path.is_file() else QIcon()
