"""The Drafts pane: the queue of drafts, the selected draft's detail, in-place editing, decision buttons."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from operator import attrgetter
from typing import cast

from PySide6.QtCore import QItemSelection, QItemSelectionModel, QItemSelectionRange, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from plur_desk.app.review.rows import DraftRow
from plur_desk.domain.lint import text_flags
from plur_desk.domain.seen import Seen
from plur_desk.ui.common.models import DraftColumn, drafts_model
from plur_desk.ui.common.widgets import (
    SafeBrowser,
    banner_label,
    list_and_detail,
    pane_side,
    plain_label,
    shorten_long_words,
    window_shortcut,
)

_ID = attrgetter("id")


def action_button(action: QAction, key: str, primary: bool = False) -> QPushButton:
    """A button that shows the action's text and key, and follows its enabled state."""
    button = QPushButton(action.icon(), f"{action.text()}   {key}")
    button.setObjectName("primary" if primary else action.objectName().replace(".", "_") + "_button")
    button.setAccessibleName(action.text())
    button.setToolTip(action.toolTip())
    button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
    button.clicked.connect(action.trigger)
    button.setEnabled(action.isEnabled())

    def follow() -> None:  # enabled as the action is; when off, its tooltip says why
        button.setEnabled(action.isEnabled())
        button.setToolTip(action.toolTip())

    action.changed.connect(follow)
    return button


PARAGRAPH = "\u2029"  # how a QTextDocument separates its blocks in raw text
UNEDITABLE = ("\r", "\u2028", PARAGRAPH)  # come back out of the editor as "\n"
EDIT_HINT = "Editing — Ctrl+Return saves, Esc cancels. Then A approves the edited text."
SECRET_HINT = (
    "\nThis statement holds a credential-like string. If you remove it, history records a redacted marker and a "
    "hash, never the secret itself; the app then says where else it may still be."
)
NOTHING_WAITING = "No drafts are waiting. New drafts appear here as soon as an agent writes them."


class DraftsPane(QWidget):
    selection_changed = Signal()
    edit_saved = Signal(object, str)  # (Seen of the engram as it was when editing began, new text)
    edit_cancelled = Signal()
    sort_requested = Signal(int, bool)

    def __init__(self, parent: QWidget | None = None, window_busy: Callable[[], None] | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("draftsPane")
        self._window_busy = window_busy  # (the window's `Jobs.window_busy`: its jobs step aside for the repaint)
        self.model = drafts_model(self)
        self._editing_id: str | None = None
        self._edit_seen: Seen | None = None
        self._edit_original = ""
        self._after: tuple[str | None, int] = (None, -1)  # the last row `id_after` named, and where it was
        self._quiet = False  # while the model moves to new rows
        self._html = ""  # the detail as last rendered (before anything appended)
        self._shown: tuple[DraftRow, Seen] | None = None  # the row the detail shows, and that engram as rendered
        self.search_hint = ""  # why the search finds nothing at all, when a filter is the reason
        self._build()
        self._connect()

    # -- construction --------------------------------------------------------------------------------------

    def _build(self) -> None:
        self.table = QTableView(self)
        self.table.setObjectName("draftsTable")
        self.table.setAccessibleName("Drafts waiting for review")
        self.table.setModel(self.model)
        # The header asks, for each section it paints, whether that whole column is selected: row by row through
        # the model (8,000 calls into Python per repaint with 500 rows selected, each waiting for the interpreter
        # lock while a worker runs Python). Rows are selected whole here and a header click sorts, so the header
        # gets a selection model of its own that nothing selects (its sections are never drawn as selected).
        self.table.horizontalHeader().setSelectionModel(QItemSelectionModel(self.model, self.table))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.setSortingEnabled(False)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(28)
        header = self.table.horizontalHeader()
        header.setSectionsClickable(True)
        header.setSortIndicatorShown(True)
        header.setSortIndicator(DraftColumn.AGE, Qt.SortOrder.AscendingOrder)  # the queue's order: oldest first
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(DraftColumn.STATEMENT, QHeaderView.ResizeMode.Stretch)
        for column, width in (
            (DraftColumn.FLAGS, 170),
            (DraftColumn.SCOPE, 150),
            (DraftColumn.DOMAIN, 110),
            (DraftColumn.TYPE, 105),
            (DraftColumn.AGE, 80),
            (DraftColumn.WRITER, 160),
            (DraftColumn.SESSION, 120),
        ):
            self.table.setColumnWidth(column, width)

        self.empty = plain_label(NOTHING_WAITING)
        self.empty.setObjectName("emptyDrafts")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        self.empty.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.empty.hide()

        self.banner = banner_label()
        self.banner.setObjectName("banner")
        self.banner.setWordWrap(True)
        self.banner.setAccessibleName("Notice")
        self.banner.hide()

        self.detail = SafeBrowser(self)
        self.detail.setObjectName("draftDetail")
        self.detail.setAccessibleName("Draft details")
        self.detail.setOpenExternalLinks(False)
        self.detail.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.editor = QPlainTextEdit(self)
        self.editor.setObjectName("statementEditor")
        self.editor.setAccessibleName("Edit statement")
        self.editor.setPlaceholderText("Statement")
        self.editor.hide()
        self.edit_hint = QLabel(EDIT_HINT)
        self.edit_hint.setObjectName("editHint")
        self.edit_hint.setWordWrap(True)
        self.edit_hint.hide()

        self.position = plain_label()  # "Draft 3 of 11": where the reviewer is in the queue
        self.position.setObjectName("queuePosition")
        self.position.setAccessibleName("Position in the queue")
        self.buttons = QHBoxLayout()
        self.buttons.setSpacing(8)

        # under the queue: a notice never moves the rows the reviewer reads
        queue = pane_side(self.table, self.empty, self.banner)
        detail = pane_side(self.edit_hint, (self.editor, 1), (self.detail, 3), self.buttons, margins=(0, 6, 0, 0))
        # the queue takes the height a tall screen adds (about 20 rows at 1080 px); the detail keeps a readable share
        self.splitter = list_and_detail(self, queue, detail, stretch=(3, 2))
        self.splitter.setObjectName("draftsSplitter")

        self._save = window_shortcut("Ctrl+Return", self.editor, self._save_edit)  # never a dialog's key
        self._cancel = window_shortcut("Escape", self.editor, self.cancel_edit)

    def _connect(self) -> None:
        self.table.selectionModel().selectionChanged.connect(self._selection_moved)
        self.table.horizontalHeader().sectionClicked.connect(self._header_clicked)

    def _selection_moved(self, *_: object) -> None:
        self.show_position()
        if not self._quiet:
            if self._window_busy is not None:
                self._window_busy()  # the detail and the repaint come first, the draft's extras after (infra/window_first.py)
            self.selection_changed.emit()

    def add_buttons(self, buttons: list[QPushButton]) -> None:
        for button in buttons:
            self.buttons.addWidget(button)
        self.buttons.addStretch(1)
        self.buttons.addWidget(self.position)

    # -- rows and selection --------------------------------------------------------------------------------

    def set_rows(self, rows: list[DraftRow], keep: str | None = None, query: str = "") -> None:
        """Replace the queue, keeping (or moving to) the row with id `keep`, else the current one.

        `query` is the search that narrowed `rows`, so an empty result says the search matched nothing.
        """
        rows = self.in_view_order(rows)
        self._moving_rows(lambda: self.model.update_rows(rows), keep, query)

    def drop_rows(self, ids: Collection[str], keep: str | None = None, query: str = "") -> None:
        """Take the rows with these ids out of the list (drafts decided), keeping (or moving to) the row with id
        `keep`: the others keep their order, which is the order a new set of rows without them gets (the queue's
        order, the reviewer's sort and the search narrow and sort each row by itself)."""
        self._moving_rows(lambda: self.model.remove_ids(ids, near=self.current_row()), keep, query)

    def _moving_rows(self, update: Callable[[], None], keep: str | None, query: str) -> None:
        keep = keep or self.current_id()
        before = (self.current_id(), self.selected_ids())
        self._quiet = True  # Qt re-announces the selection while rows around it go; it is said once below
        try:
            update()  # removed, inserted, changed rows only: selection and scroll stay
        finally:
            self._quiet = False
        rows = self.model.rows
        if self._shown is not None and self._shown[0] is not self.current():
            self._shown = None  # the detail no longer shows the current row exactly as listed
        query = shorten_long_words(query.strip())
        hint = f" {shorten_long_words(self.search_hint)}" if query and self.search_hint else ""
        self.empty.setText(
            f"The search “{query}” matched none of the drafts waiting for review.{hint} Clear the search field "
            "(Ctrl+F) to see the whole queue."
            if query
            else NOTHING_WAITING
        )
        self.empty.setVisible(not rows)  # the list stays: hiding it would hand its keyboard focus to another widget
        self.show_position()
        row = self.current_row() if keep == self.current_id() else self.model.row_of(keep) if keep else -1
        if rows and (row < 0 or row != self.current_row() or not self._row_selected(row)):
            self.select_row(row if row >= 0 else 0)
        elif (self.current_id(), self.selected_ids()) != before:
            self.selection_changed.emit()

    def show_position(self) -> None:
        total, row, picked = len(self.model.rows), self.current_row(), len(self._selected_numbers())
        text = f"Draft {row + 1} of {total}" if 0 <= row < total else (f"{total} drafts" if total else "")
        self.position.setText(text + (f" · {picked} selected" if picked > 1 else ""))

    def _row_selected(self, row: int) -> bool:
        return self.table.selectionModel().isRowSelected(row)

    def select_row(self, row: int) -> None:
        if not self.model.rows:
            return
        row = max(0, min(row, len(self.model.rows) - 1))
        index = self.model.index(row, DraftColumn.STATEMENT)
        self.table.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        )
        self.table.scrollTo(index)

    def select_also(self, rows: list[int]) -> None:
        """Add `rows` to the selection in one change (said once): one at a time, each was a selection change that
        drew the detail again, ~10 ms a row, seconds for a multi-selection of hundreds kept across a new order."""
        if not rows:
            return
        selection, last = QItemSelection(), self.model.columnCount() - 1
        rows = sorted(set(rows))
        start = prev = rows[0]
        for row in [*rows[1:], -1]:
            if row != prev + 1:
                selection.select(self.model.index(start, 0), self.model.index(prev, last))
                start = row
            prev = row
        before = self.selected_ids()
        self._quiet = True
        try:
            self.table.selectionModel().select(selection, QItemSelectionModel.SelectionFlag.Select)
        finally:
            self._quiet = False
        if self.selected_ids() != before:
            self.selection_changed.emit()

    def select_id(self, engram_id: str) -> bool:
        after, near = self._after
        rows = self.model.rows
        if after == engram_id and near < len(rows) and rows[near].id == engram_id:
            row = near  # the row `id_after` just named, still in its place: no pass over the list
        else:
            row = self.model.row_of(engram_id)
        if row >= 0:
            self.select_row(row)
        return row >= 0

    def select_first_of(self, ids: Sequence[str]) -> str | None:
        """The first of `ids` still listed, selected; None when none is."""
        found = next((i for i in ids if self.model.row_of(i) >= 0), None)
        return found if found is not None and self.select_id(found) else None

    def current_row(self) -> int:
        index = self.table.currentIndex()
        return index.row() if index.isValid() else -1

    def current_id(self) -> str | None:
        row = self.current_row()
        return self.model.rows[row].id if 0 <= row < len(self.model.rows) else None

    def current_engram_id(self) -> str | None:
        return self.current_id()

    def current(self) -> DraftRow | None:
        row = self.current_row()
        return self.model.rows[row] if 0 <= row < len(self.model.rows) else None

    def selected_rows(self) -> list[DraftRow]:
        shown = self.model.rows
        out = [shown[r] for r in self._selected_numbers() if r < len(shown)]
        current = self.current()
        return out or ([current] if current is not None else [])

    def selected_ids(self) -> list[str]:
        shown = self.model.rows
        ids = [shown[r].id for r in self._selected_numbers() if r < len(shown)]  # the rows, not a call each
        current = self.current_id()
        return ids or ([current] if current else [])

    def _selected_numbers(self) -> list[int]:
        """The rows wholly selected, in order, read from the selection's ranges: a few calls per range, where
        `selectedRows()` asks the model's rowCount and columnCount about every selected row (19,000 calls into
        Python for 500 rows, each waiting for the interpreter lock while a worker runs Python: 150-370 ms of the
        window's time per call during a bulk approval's contradiction check). A range that is not whole rows
        (this list never makes one) is left to `selectedRows()`, whose answer this is."""
        model = self.table.selectionModel()
        last = self.model.columnCount() - 1
        rows: set[int] = set()
        for part in cast(Iterable[QItemSelectionRange], model.selection()):  # a QList at run time
            if part.left() != 0 or part.right() != last:
                return sorted({i.row() for i in model.selectedRows()})
            rows.update(range(part.top(), part.bottom() + 1))
        return sorted(rows)

    def id_after(self, ids: list[str]) -> str | None:
        """The draft that should be selected once `ids` leave the queue (the next one, else the previous)."""
        gone = set(ids)
        rows = self.model.rows
        # a verdict is on the selected rows (else the current one): found there, no pass over the list
        positions = self.model.positions_of(gone, self._selected_numbers() or [self.current_row()])
        if not positions:
            return self.current_id()
        for n in range(positions[-1] + 1, len(rows)):
            if rows[n].id not in gone:
                self._after = (rows[n].id, n)
                return rows[n].id
        for n in range(positions[0] - 1, -1, -1):
            if rows[n].id not in gone:
                self._after = (rows[n].id, n)
                return rows[n].id
        return None

    def step_selection(self, step: int) -> None:
        self.select_row(self.current_row() + step)

    def in_view_order(self, rows: list[DraftRow]) -> list[DraftRow]:
        """`rows` (in the queue's order) as the list shows them: sorted by the reviewer's column when one was
        clicked (ties by id, `RowsModel.in_user_order`), so the sort survives every decision and reload."""
        return self.model.in_user_order(rows)

    def _header_clicked(self, column: int) -> None:
        header = self.table.horizontalHeader()
        descending = header.sortIndicatorOrder() == Qt.SortOrder.DescendingOrder
        self.model.sorted_by(column, descending)
        self.sort_requested.emit(column, descending)
        self.select_row(0)

    def follow_queue_order(self, column: int) -> None:
        """Back to the queue's own order (age or risk), shown by `column`'s indicator; the reviewer's sort is
        dropped."""
        self.model.user_sort = None
        self.table.horizontalHeader().setSortIndicator(column, Qt.SortOrder.AscendingOrder)

    def queue_order_column(self, column: int) -> None:
        """The queue's order is now `column`'s: the indicator says so unless the reviewer sorted by a column."""
        if self.model.user_sort is None:
            self.table.horizontalHeader().setSortIndicator(column, Qt.SortOrder.AscendingOrder)

    def focus_queue(self) -> None:
        self.table.setFocus(Qt.FocusReason.OtherFocusReason)

    # -- detail and editing --------------------------------------------------------------------------------

    def show_detail(self, html: str, row: DraftRow | None = None, seen: Seen | None = None) -> None:
        """Render the detail of `row`; `seen` is that engram exactly as this rendering used it."""
        self.detail.setHtml(html)
        self._html = html
        self._shown = (row, seen) if row is not None and seen is not None else None

    def replace_in_detail(self, old: str, new: str, *more: tuple[str, str]) -> None:
        """Replace parts of the rendered detail (results that arrived later) in one rendering, keeping the scroll
        position."""
        html = self._html
        for before, after in ((old, new), *more):
            html = html.replace(before, after, 1)
        if html == self._html:
            return
        bar = self.detail.verticalScrollBar()
        position = bar.value()
        self._html = html
        self.detail.setHtml(html)
        bar.setValue(position)

    def shows(self, row: DraftRow) -> bool:
        """True when the detail was rendered from this very row (rows are re-derived only when they change)."""
        return self._shown is not None and self._shown[0] is row

    def displayed_seen(self) -> Seen | None:
        """What a verdict on the current row rests on, or None when the detail does not show that row as listed."""
        row = self.current()
        if self._shown is None or row is None:
            return None
        shown_row, seen = self._shown
        if shown_row.id != row.id or seen.fingerprint != row.fingerprint:
            return None
        return seen

    @property
    def editing(self) -> bool:
        return self._editing_id is not None

    def has_unsaved_edit(self) -> bool:
        return self._editing_id is not None and self._editor_text() != self._edit_original

    def _editor_text(self) -> str:
        """The editor's text with every character as typed or shown: toPlainText() would turn a no-break space
        into a space; the raw text keeps it and marks the editor's own line breaks with U+2029."""
        return self.editor.document().toRawText().replace(PARAGRAPH, "\n")

    def start_edit(self, seen: Seen, statement: str) -> None:
        if any(c in statement for c in UNEDITABLE):
            # the editor would hand these back as plain line breaks: a save would change text nobody touched
            self.show_banner(
                "This statement holds a carriage return or a Unicode line or paragraph separator, which the "
                "editor cannot keep as it is. Edit it in engrams.yaml, or approve or reject it as it stands."
            )
            return
        engram_id = seen.id
        self._edit_seen = seen
        self._editing_id = engram_id
        self._edit_original = statement
        self.editor.setPlainText(statement)
        self.edit_hint.setText(EDIT_HINT + (SECRET_HINT if "credential-like string" in text_flags(statement) else ""))
        self.editor.show()
        self.edit_hint.show()
        self.editor.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.editor.selectAll()

    def _save_edit(self) -> None:
        if self._editing_id is None or self._edit_seen is None:
            return
        seen, text = self._edit_seen, self._editor_text()
        if text == self._edit_original:  # saved without a change: nothing was decided, nothing is written
            self.cancel_edit()
            return
        self._end_edit()
        self.edit_saved.emit(seen, text)

    def cancel_edit(self) -> None:
        if self._editing_id is not None:
            self._end_edit()
            self.edit_cancelled.emit()

    def _end_edit(self) -> None:
        self._editing_id = self._edit_seen = None
        self.editor.hide()
        self.edit_hint.hide()
        self.focus_queue()

    def add_under_queue(self, widget: QWidget) -> None:
        """A question or notice of its own under the queue, below the banner: it never moves the rows."""
        left = self.banner.parentWidget()
        layout = left.layout() if left is not None else None
        assert isinstance(layout, QVBoxLayout)
        layout.insertWidget(layout.indexOf(self.banner) + 1, widget)

    def show_banner(self, text: str) -> None:
        self.banner.setText(shorten_long_words(text))
        self.banner.setVisible(bool(text))
