"""Small widget factories shared by the panes."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QAbstractItemModel
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget


def make_table(
    model: QAbstractItemModel,
    name: str,
    accessible: str,
    *,
    multi: bool,
    widths: Sequence[int] = (),
    parent: QWidget | None = None,
) -> QTableView:
    """A row-selecting table over `model`: no vertical header, alternating rows, interactive column widths."""
    table = QTableView(parent)
    table.setObjectName(name)
    table.setAccessibleName(accessible)
    table.setModel(model)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(
        QAbstractItemView.SelectionMode.ExtendedSelection if multi else QAbstractItemView.SelectionMode.SingleSelection
    )
    table.verticalHeader().hide()
    table.setAlternatingRowColors(True)
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    header.setStretchLastSection(True)
    for column, width in enumerate(widths):
        table.setColumnWidth(column, width)
    return table
