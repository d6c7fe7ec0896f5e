"""SVG icons from the package, recoloured to the current palette so light and dark themes both work."""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QByteArray, QSize, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication

from plur_desk.resources import RESOURCES


@lru_cache(maxsize=128)
def _svg(name: str) -> str:
    return (RESOURCES / "icons" / f"{name}.svg").read_text(encoding="utf-8")


def icon(name: str, color: QColor | None = None) -> QIcon:
    if color is None:
        palette = QApplication.palette() if QApplication.instance() is not None else QPalette()
        color = palette.color(QPalette.ColorRole.ButtonText)
    data = QByteArray(_svg(name).replace("currentColor", color.name()).encode())
    renderer = QSvgRenderer(data)
    result = QIcon()
    for size in (16, 20, 24, 32, 48):
        pixmap = QPixmap(QSize(size, size))
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        renderer.render(painter)
        painter.end()
        result.addPixmap(pixmap)
    return result


def app_icon() -> QIcon:
    path = RESOURCES / "plur-desk.svg"
    return QIcon(str(path)) if path.is_file() else QIcon()
