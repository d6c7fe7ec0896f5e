"""Counting the events of one type a widget receives (an event filter the test installs)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject


class EventCount(QObject):
    """How many events of `kind` reached the objects it filters."""

    def __init__(self, kind: QEvent.Type) -> None:
        super().__init__()
        self.kind = kind
        self.count = 0

    def eventFilter(self, _watched: QObject, event: QEvent) -> bool:
        if event.type() == self.kind:
            self.count += 1
        return False
