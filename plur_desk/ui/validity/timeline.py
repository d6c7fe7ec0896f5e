"""The Validity pane's timeline: one bar per window of engrams about the same subject, over a dated axis."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from PySide6.QtCore import QEvent, QPoint, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetrics, QHelpEvent, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QToolTip, QWidget

from plur_desk.domain.lint import reveal
from plur_desk.ui.common.widgets import tooltip_text

Bar = tuple[str, datetime | None, datetime | None, bool]  # statement, opens, closes, selected
ROW, TOP, AXIS = 24, 12, 30
_STEPS = (1, 3, 6, 12, 24, 60, 120)  # months between axis ticks


def axis_ticks(lo: datetime, hi: datetime, pixels: float, spacing: float = 90.0) -> list[tuple[datetime, str]]:
    """First-of-month ticks between lo and hi, as many as fit `pixels` at one per `spacing` pixels at most."""
    months = max(1, (hi.year - lo.year) * 12 + hi.month - lo.month)
    step = next((s for s in _STEPS if months / s <= max(1.0, pixels / spacing)), _STEPS[-1])
    index = lo.year * 12 + lo.month - 1
    index += -index % step
    ticks: list[tuple[datetime, str]] = []
    while True:
        moment = datetime(index // 12, index % 12 + 1, 1, tzinfo=UTC)
        if moment > hi:
            return ticks
        if moment >= lo:
            ticks.append((moment, moment.strftime("%Y" if step >= 12 else "%Y-%m")))
        index += step


@dataclass(frozen=True)
class Layout:
    left: float  # where the bars start; labels fill the space before it
    width: float
    lo: datetime
    hi: datetime

    def x(self, moment: datetime | None, default: float) -> float:
        span = (self.hi - self.lo).total_seconds() or 1.0
        return default if moment is None else self.left + self.width * (moment - self.lo).total_seconds() / span


class Timeline(QWidget):
    """Bars with their statements (elided only when they do not fit; the tooltip has the whole text) and dates."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("validityTimeline")
        self.setAccessibleName("Validity timeline")
        self.setMinimumHeight(120)
        self.bars: list[Bar] = []
        self.now = datetime.now(UTC)

    def set_bars(self, bars: list[Bar], now: datetime) -> None:
        self.bars, self.now = bars, now
        self.setMinimumHeight(TOP + ROW * len(bars) + AXIS + 8)
        self.update()

    def layout_(self) -> Layout:
        moments = [m for _, a, b, _ in self.bars for m in (a, b) if m] + [self.now]
        lo, hi = min(moments) - timedelta(days=30), max(moments) + timedelta(days=30)
        metrics = QFontMetrics(self.font())
        widest = max((metrics.horizontalAdvance(reveal(label)) for label, *_ in self.bars), default=0)
        left = min(max(160.0, widest + 16.0), max(160.0, self.width() * 0.45))
        return Layout(left, max(50.0, self.width() - left - 20.0), lo, hi)

    def label_text(self, label: str) -> str:
        """The statement as drawn: whole when it fits the label column, else elided with '…'."""
        metrics = QFontMetrics(self.font())
        return metrics.elidedText(reveal(label), Qt.TextElideMode.ElideRight, int(self.layout_().left - 8))

    def paintEvent(self, event: QPaintEvent) -> None:
        if not self.bars:
            return
        painter = QPainter(self)
        palette = self.palette()
        layout = self.layout_()
        painter.setPen(palette.color(QPalette.ColorRole.Text))
        for i, (label, start, end, selected) in enumerate(self.bars):
            y = TOP + i * ROW
            painter.drawText(QRectF(4, y, layout.left - 8, 20), Qt.AlignmentFlag.AlignVCenter, self.label_text(label))
            x0, x1 = layout.x(start, layout.left), layout.x(end, layout.left + layout.width)
            color = palette.color(QPalette.ColorRole.Highlight) if selected else QColor(120, 140, 170)
            painter.fillRect(QRectF(x0, y + 4, max(2.0, x1 - x0), 12), color)
            if start is None:
                painter.drawText(QRectF(x0 - 2, y, 12, 20), Qt.AlignmentFlag.AlignVCenter, "‹")
            if end is None:
                painter.drawText(QRectF(x1 - 8, y, 12, 20), Qt.AlignmentFlag.AlignVCenter, "›")
        self._paint_axis(painter, layout)
        painter.end()

    def _paint_axis(self, painter: QPainter, layout: Layout) -> None:
        axis_y = TOP + ROW * len(self.bars) + 4
        text = self.palette().color(QPalette.ColorRole.Text)
        painter.setPen(text)
        painter.drawLine(int(layout.left), axis_y, int(layout.left + layout.width), axis_y)
        for moment, label in axis_ticks(layout.lo, layout.hi, layout.width):
            tx = layout.x(moment, layout.left)
            painter.drawLine(int(tx), axis_y, int(tx), axis_y + 4)
            box = QRectF(tx - 40, axis_y + 5, 80, 16)
            box.moveLeft(min(max(box.left(), 0.0), self.width() - box.width()))  # whole, even at the edges
            painter.drawText(box, Qt.AlignmentFlag.AlignHCenter, label)
        pen = QPen(text)
        pen.setStyle(Qt.PenStyle.DashLine)
        painter.setPen(pen)
        nx = layout.x(self.now, layout.left)
        painter.drawLine(int(nx), 4, int(nx), axis_y)
        as_of = f"as of {self.now:%Y-%m-%d}"
        room = QFontMetrics(self.font()).horizontalAdvance(as_of) + 6
        if nx + room < self.width():
            painter.drawText(QRectF(nx + 3, axis_y - 16, room, 16), Qt.AlignmentFlag.AlignLeft, as_of)
        else:  # no room on the right of the line: write it on the left
            painter.drawText(QRectF(nx - room - 3, axis_y - 16, room, 16), Qt.AlignmentFlag.AlignRight, as_of)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            row = self.bar_at(event.pos())
            if row >= 0:
                QToolTip.showText(event.globalPos(), tooltip_text(self.bars[row][0]), self)
            else:
                QToolTip.hideText()
            return True
        return super().event(event)

    def bar_at(self, point: QPoint) -> int:
        row = (point.y() - TOP) // ROW
        return row if point.y() >= TOP and 0 <= row < len(self.bars) else -1
