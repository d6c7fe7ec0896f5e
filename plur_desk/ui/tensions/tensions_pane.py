"""The Tensions pane: open contradictions side by side, a word diff, and the four outcomes (keys C, D, 1/2, T)."""

from __future__ import annotations

import re
from collections.abc import Callable

from PySide6.QtCore import QItemSelectionModel, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QWidget

from plur_desk.app.review.rows import TensionRow
from plur_desk.app.review.session import ChangeSet
from plur_desk.domain.engram_view import EngramView
from plur_desk.domain.seen import Seen, seen_tension
from plur_desk.ui.built_later import BuiltLater
from plur_desk.ui.common.models import tensions_model
from plur_desk.ui.common.widgets import SafeBrowser, list_and_detail, make_table, pane_side, text_html, window_shortcut
from plur_desk.ui.review.detail import SIMILAR_TITLE
from plur_desk.ui.review.drafts_pane import action_button
from plur_desk.ui.workspace import Workspace

Similar = Callable[[str], list[tuple[str, str, float]]]

E = text_html  # stored text: escaped, hidden characters revealed
_TOKENS = re.compile(r"\s+|\S+")
FILTERS = {
    "Open (detected, confirmed)": ("detected", "confirmed"),
    "Detected": ("detected",),
    "Confirmed": ("confirmed",),
    "Dismissed": ("dismissed",),
    "Resolved": ("resolved",),
    "All": ("detected", "confirmed", "dismissed", "resolved"),
}


def word_diff(left: str, right: str) -> tuple[str, str]:
    """HTML of both statements with the differing words struck (left) and underlined (right), not colour alone.

    Whitespace runs are tokens of their own, so the unchanged text shows exactly as stored (tabs, double spaces).
    """
    import difflib  # on first use: not needed before the first draft

    a, b = _TOKENS.findall(left), _TOKENS.findall(right)
    out_a, out_b = [], []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        left_words, right_words = "".join(a[i1:i2]), "".join(b[j1:j2])
        if op == "equal":
            out_a.append(E(left_words))
            out_b.append(E(right_words))
            continue
        if left_words:
            out_a.append(f"<s style='background:#f4c7c3; color:#5b0f0b'>{E(left_words)}</s>")
        if right_words:
            out_b.append(f"<u style='background:#c6efce; color:#0b4d1c'><b>{E(right_words)}</b></u>")
    return "".join(out_a), "".join(out_b)


def _similar_slot(side: int) -> str:
    """Where a side's similar engrams go in the detail once they are read (1 left, 2 right)."""
    return f"<!--similar {side}-->"


def _similar_html(similar: list[tuple[str, str, float]]) -> str:
    if not similar:
        return ""
    lines = "<br>".join(f"{score:.2f} · {E(other)} “{E(text)}”" for other, text, score in similar[:3])
    return f"<p><b>{E(SIMILAR_TITLE)}</b><br>{lines}</p>"


class TensionsPane(BuiltLater, QWidget):
    """Shows tensions; the verdicts are the tensions controller's (it reads `displayed()` and `pending`)."""

    selection_changed = Signal()  # another tension is shown (or none)
    commit_requested = Signal()  # Enter while a resolution preview waits

    def __init__(self, workspace: Workspace, similar_to: Similar, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("tensionsPane")
        self.workspace = workspace
        self._similar_to = similar_to
        self.model = tensions_model(self)
        self.pending: tuple[Seen, str] | None = None  # (tension as shown, winner) awaiting Enter
        self.shown: Seen | None = None  # the tension the detail shows, with both engrams, as rendered
        self._search = ""
        self._html = ""  # the detail as rendered (similar engrams are filled in when read)
        self._updating = False  # a refresh is replacing the rows and selecting: it shows the selection once, after
        self.build_later()  # the widgets: on first use (ui/built_later.py)

    def _build(self) -> None:
        self.filter = QComboBox()
        self.filter.setObjectName("tensionFilter")
        self.filter.setAccessibleName("Show tensions")
        self.filter.addItems(list(FILTERS))
        self.table = make_table(self.model, "tensionsTable", "Tensions", multi=False, widths=(90, 90, 90, 80, 330))
        self.table.horizontalHeader().sectionClicked.connect(self._sort)
        self.table.horizontalHeader().setSortIndicatorShown(True)
        self.preview = QLabel()
        self.preview.setObjectName("banner")
        self.preview.setWordWrap(True)
        self.preview.setAccessibleName("Resolution preview")
        self.preview.hide()
        self.detail = SafeBrowser()
        self.detail.setObjectName("tensionDetail")
        self.detail.setAccessibleName("Tension details")
        self.detail.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.buttons = QHBoxLayout()
        top = QHBoxLayout()
        top.addWidget(QLabel("Show:"))
        top.addWidget(self.filter)
        top.addStretch(1)
        detail = pane_side(self.preview, (self.detail, 1), self.buttons, margins=(8, 0, 0, 0))
        list_and_detail(self, pane_side(top, self.table), detail, stretch=(2, 3))
        # Enter commits a previewed resolution only while the list itself has the focus (as every verdict key), and
        # never while a dialog is open: the Return that answers a dismiss or split dialog retired an engram
        self._commit = window_shortcut("Return", self.table, self.commit_requested.emit)
        self._commit_enter = window_shortcut("Enter", self.table, self.commit_requested.emit)
        self._cancel = window_shortcut("Escape", self.table, self.cancel_pending)
        self._preview_keys(False)

    def _sort(self, column: int) -> None:
        descending = self.table.horizontalHeader().sortIndicatorOrder() == Qt.SortOrder.DescendingOrder
        self.model.sorted_by(column, descending)
        self._select(0)

    def _preview_keys(self, live: bool) -> None:
        """Enter and Esc belong to the pane only while a resolution preview waits; otherwise to whoever has them."""
        for shortcut in (self._commit, self._commit_enter, self._cancel):
            shortcut.setEnabled(live)

    def _connect(self) -> None:
        self.filter.currentIndexChanged.connect(lambda _i: self.refresh(None))
        self.table.selectionModel().selectionChanged.connect(self._selection_moved)

    def add_buttons(self, actions: dict[str, QAction]) -> None:
        for action_id, key in (
            ("tension.confirm", "C"),
            ("tension.dismiss", "D"),
            ("tension.keep_left", "1"),
            ("tension.keep_right", "2"),
            ("tension.split", "T"),
        ):
            self.buttons.addWidget(action_button(actions[action_id], key))
        self.buttons.addStretch(1)

    # -- rows ----------------------------------------------------------------------------------------------

    def refresh(self, change: ChangeSet | None) -> None:
        session = self.workspace.session
        if session is None:
            return
        keep = self.current_id()
        rows = session.tensions(FILTERS[self.filter.currentText()])
        words = self._search.lower().split()
        if words:
            rows = [
                r for r in rows if all(w in f"{r.id} {r.statement_a} {r.statement_b} {r.reason}".lower() for w in words)
            ]
        self._updating = True  # a row that left, or the selection below, moves it: shown once, after
        try:
            self.model.update_rows(self.model.in_user_order(rows))  # changed rows only: selection and scroll stay
            row = self.model.row_of(keep) if keep else -1
            self._select(row if row >= 0 else 0)
        finally:
            self._updating = False
        self._selected()  # moved or not: a selection that stayed may read differently now

    def concerns(self, change: ChangeSet) -> bool:
        """A tension changed, or an engram on a side of one (its row shows the engram's statement and state)."""
        session = self.workspace.session
        return bool(change.tensions) or (session is not None and session.tensions_name_any(change.engrams))

    def apply_search(self, text: str) -> None:
        self._search = text
        self.refresh(None)

    def _select(self, row: int) -> None:
        if not self.model.rows:
            searched = f" and the search “{E(self._search.strip())}”" if self._search.strip() else ""
            self.detail.setHtml(f"<p>No tensions to show with this filter{searched}.</p>")
            return
        row = max(0, min(row, len(self.model.rows) - 1))
        index = self.model.index(row, 0)
        self.table.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        )

    def current(self) -> TensionRow | None:
        index = self.table.currentIndex()
        return self.model.rows[index.row()] if index.isValid() and index.row() < len(self.model.rows) else None

    def current_id(self) -> str | None:
        row = self.current()
        return row.id if row else None

    def has_selection(self) -> bool:
        return self.current() is not None

    def current_engram_id(self) -> str | None:
        row = self.current()
        return row.engram_a if row else None

    def focus_queue(self) -> None:
        self.table.setFocus()

    # -- detail --------------------------------------------------------------------------------------------

    def _selection_moved(self, *_: object) -> None:
        if not self._updating:
            self._selected()

    def _selected(self) -> None:
        self.cancel_pending()
        self.shown = None
        session, row = self.workspace.session, self.current()
        if session is None:
            return
        record = session.tension(row.id) if row is not None else None
        if row is not None:
            self._html = self._detail_html(row)
            self.detail.setHtml(self._html)
            self._read_similar(row)
        else:
            self.workspace.jobs.cancel("tension.similar")
        if row is not None and record is not None:
            self.shown = seen_tension(record, [session.engram(row.engram_a), session.engram(row.engram_b)])
        self.selection_changed.emit()  # with no tension shown, its buttons are disabled

    def displayed(self) -> tuple[TensionRow, Seen] | None:
        """The current tension and what the detail rendered of it, or None when the detail does not show the row
        as listed (a verdict must not act then)."""
        row, shown = self.current(), self.shown
        if self.workspace.session is None or row is None or shown is None or shown != row.seen:
            return None
        return row, shown

    def _side(self, side: int, engram_id: str, snapshot: str, diffed: str) -> str:
        session = self.workspace.session
        assert session is not None
        engram = session.engram(engram_id)
        if engram is None:
            return (
                f"<p><b>{E(engram_id)}</b> is no longer in the store.</p><p style='white-space:pre-wrap'>{diffed}</p>"
            )
        view = EngramView(engram)
        current = view.statement
        warnings = []
        if view.retired:
            warnings.append("already retired")
        if view.superseded:
            warnings.append("superseded by " + ", ".join(view.superseded_by))
        outside = view.outside_window(session.now())
        if outside is not None:
            warnings.append(outside.replace("_", " "))
        writer, model, _runtime = view.attribution
        window_text = view.window
        rows = [
            ("Id", engram_id),
            ("Created", view.created),
            ("Scope", view.scope),
            ("Domain", view.domain),
            ("Asserted by", writer + (f" · {model}" if model else "")),
            ("Commitment", view.commitment),
            ("Status", view.status),
            (
                "Validity",
                f"{window_text.valid_from or '…'} → {window_text.valid_until or '…'}"
                if window_text.present
                else "always",
            ),
        ]
        table = "".join(f"<tr><td><b>{E(k)}</b>&nbsp;&nbsp;</td><td>{E(v)}</td></tr>" for k, v in rows)
        changed = (
            ""
            if current == snapshot
            else (
                f"<p style='white-space:pre-wrap'><i>Changed since detection.</i> It now reads: "
                f"<b>{E(current)}</b><br>The judge saw the text above.</p>"
            )
        )
        warn = "".join(f"<p>⚠ <b>{E(w)}</b></p>" for w in warnings)
        return (
            f"<p style='font-size:14pt; white-space:pre-wrap'>{diffed}</p>{changed}{warn}<table>{table}</table>"
            f"{_similar_slot(side)}"
        )

    def _read_similar(self, row: TensionRow) -> None:
        """Similar engrams of both sides (a product with every vector, or an embedding) are read on the read pool
        and fill the detail when they arrive, if it still shows this tension; a newer selection makes the read
        stale, so moving through the list never waits for it."""
        similar_to, sides = self._similar_to, (row.engram_a, row.engram_b)

        def read() -> list[list[tuple[str, str, float]]]:
            return [[s for s in similar_to(side) if s[0] not in sides] for side in sides]

        html = self._html
        self.workspace.jobs.read("tension.similar", read, lambda found: self._similar_read(row, html, found))

    def _similar_read(self, row: TensionRow, html: str, found: object) -> None:
        assert isinstance(found, list)
        current = self.current()
        if current is None or current.id != row.id or self._html is not html:
            return
        filled = html
        for side, similar in enumerate(found, start=1):
            if similar:
                filled = filled.replace(_similar_slot(side), _similar_html(similar), 1)
        if filled != html:
            self._html = filled
            self.detail.setHtml(filled)

    def _detail_html(self, row: TensionRow) -> str:
        left, right = word_diff(row.statement_a, row.statement_b)
        return (
            f"<p style='white-space:pre-wrap'><b>{E(row.id)}</b> — {E(row.status)}, {E(row.category)}, confidence {row.confidence:.2f}"
            f"<br>Judge: “{E(row.reason)}”</p>"
            "<table width='100%' cellspacing='6'><tr>"
            f"<td width='50%' valign='top'><h3>1 · Left</h3>{self._side(1, row.engram_a, row.statement_a, left)}</td>"
            f"<td width='50%' valign='top'><h3>2 · Right</h3>{self._side(2, row.engram_b, row.statement_b, right)}</td>"
            "</tr></table><p><small>Struck words appear only on the left, underlined words only on the right."
            "</small></p>"
        )

    # -- the resolution preview (Keep Left / Keep Right, then Enter) ----------------------------------------

    def show_preview(self, seen: Seen, winner: str, loser: str, statements: tuple[str, str] = ("", "")) -> None:
        """What the resolution does, in the statements' own words (ids alone say nothing to a reader)."""
        self.pending = (seen, winner)
        kept, retired = (f" “{E(t)}”" if t else "" for t in statements)
        self.preview.setText(
            f"Keep <b>{E(winner)}</b>{kept}<br>and retire <b>{E(loser)}</b>{retired}?<br>"
            "<b>Enter</b> commits, <b>Esc</b> cancels. Undo with Ctrl+Z."
        )
        self.preview.show()
        self._preview_keys(True)

    def cancel_pending(self) -> None:
        self.pending = None
        self.preview.hide()
        self._preview_keys(False)
