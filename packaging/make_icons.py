"""Renders the application icon's PNG sizes from the SVG master (resources/icons/plur-desk.svg).

QT_QPA_PLATFORM=offscreen python packaging/make_icons.py
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ROOT = Path(__file__).resolve().parent.parent
SIZES = (16, 24, 32, 48, 64, 128, 256)
APP_ID = "dev.plurdesk.PlurDesk"


def main() -> None:
    QGuiApplication([])
    renderer = QSvgRenderer(str(ROOT / "resources" / "icons" / "plur-desk.svg"))
    for size in SIZES:
        image = QImage(QSize(size, size), QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        out = ROOT / "resources" / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
        out.parent.mkdir(parents=True, exist_ok=True)
        image.save(str(out))
    print("icons written")


if __name__ == "__main__":
    main()
