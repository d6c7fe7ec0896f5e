"""The application's style sheet is set once: making the application again (each window a test or the self-check
opens) leaves every live widget's style alone instead of polishing all of them again."""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QApplication, QLabel

from plur_desk.resources import RESOURCES
from plur_desk.ui.app import make_application

from support.qt_events import EventCount


def test_making_the_application_again_polishes_no_live_widget_again(qtbot) -> None:
    app = make_application()
    assert app.styleSheet() == (RESOURCES / "app.qss").read_text(encoding="utf-8")
    label = QLabel("a widget alive before the application is made again")
    qtbot.addWidget(label)
    label.show()
    changes = EventCount(QEvent.Type.StyleChange)
    label.installEventFilter(changes)
    QApplication.instance().setStyleSheet(app.styleSheet() + "\n")  # the probe: a changed sheet does reach it
    assert changes.count > 0
    changes.count = 0
    make_application()  # the sheet differs by a newline: set again, as a changed sheet must be
    assert changes.count > 0 and app.styleSheet() == (RESOURCES / "app.qss").read_text(encoding="utf-8")
    changes.count = 0
    make_application()
    make_application()
    assert changes.count == 0
