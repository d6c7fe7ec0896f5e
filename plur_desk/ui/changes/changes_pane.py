"""The Changes pane: what agents changed around the draft gate since the watched baseline, grouped by agent session
and writer, each with a word diff of before -> after and the history events behind it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QAbstractItemView, QWidget

from plur_desk.app.review.session import ChangeSet
from plur_desk.ui.built_later import BuiltLater
from plur_desk.ui.common.widgets import SafeBrowser, list_and_detail, plain_label, text_html

if TYPE_CHECKING:  # the detection's modules load with the first decision or the pane's first list, not at launch
    from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem  # made by PySide with the pane's widgets

    from plur_desk.domain.agents.agent_changes import AgentChange

CHANGE_ROLE = Qt.ItemDataRole.UserRole + 1  # a change's row: its key (_key); a group's row: -1
FILL_ROWS = 100  # rows added per turn of the event loop when the tree is built afresh
GROUP_ROLE = Qt.ItemDataRole.UserRole + 2  # a group's row: its name, without the count


def _key(change: AgentChange) -> str:
    return f"{change.target}\0{change.id}"  # detection lists each record once


def _group_key(change: AgentChange) -> tuple[str, str]:
    return (change.session or "(no session)", change.writer)


def _texts(change: AgentChange) -> tuple[str, str]:
    return change.kind.replace("_", " "), change.id + (" · session inferred" if change.session_from else "")


def _in_tree(table: QTreeWidget, item: QTreeWidgetItem) -> bool:
    return item.treeWidget() is table


def _row_after(table: QTreeWidget, item: QTreeWidgetItem | None) -> QTreeWidgetItem | None:
    """The change's row below `item` (or above it, at the very end): where the selection goes when its row leaves."""
    for step in (table.itemBelow, table.itemAbove):
        row = step(item) if item is not None else None
        while row is not None and row.parent() is None:  # a group's row: the change rows are what is decided
            row = step(row)
        if row is not None:
            return row
    return None


def _first_row(table: QTreeWidget) -> QTreeWidgetItem | None:
    top = table.topLevelItem(0)
    return top.child(0) if top is not None else None


def word_diff(before: str, after: str) -> str:
    """Escaped HTML: words taken out struck through, words put in underlined (never colour alone)."""
    import difflib  # with the first change shown, not at launch

    old, new = before.split(" "), after.split(" ")
    out = []
    for op, a1, a2, b1, b2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if op in ("delete", "replace"):
            out.append(f"<s style='color:#b00'>{text_html(' '.join(old[a1:a2]))}</s>")
        if op in ("insert", "replace"):
            out.append(f"<u style='color:#070'>{text_html(' '.join(new[b1:b2]))}</u>")
        if op == "equal":
            out.append(text_html(" ".join(old[a1:a2])))
    return " ".join(out)


def detail_html(change: AgentChange) -> str:
    silent = " <b>silent</b>: no history event records it." if change.silent else ""
    parts = [f"<p><b>{text_html(change.kind)}</b> {text_html(change.id)} by {text_html(change.writer)}"]
    parts.append(f" (session {text_html(change.session)})" if change.session else "")
    parts.append(f" <i>Session {text_html(change.session_from)}.</i>" if change.session_from else "")
    parts.append(f"{silent}</p><table>")
    before, after = change.before or {}, change.after or {}
    for name in change.fields:
        old, new = before.get(name), after.get(name)
        if name == "statement" and isinstance(old, str) and isinstance(new, str):
            shown = word_diff(old, new)
        else:
            shown = f"<s>{text_html(old)}</s> → <u>{text_html(new)}</u>"
        parts.append(f"<tr><td>{text_html(name)}</td><td>{shown}</td></tr>")
    parts.append("</table>")
    if change.also:
        parts.append(f"<p>Also retired by it: {text_html(', '.join(change.also))}</p>")
    if change.events:
        parts.append("<p>Events:</p><ul>")
        for event in change.events:
            parts.append(f"<li>{text_html(event.get('timestamp'))} {text_html(event.get('event'))}</li>")
        parts.append("</ul>")
    return "".join(parts)


class ChangesPane(BuiltLater, QWidget):
    """The agent changes found, grouped; its widgets are built after the first draft is shown (ui/built_later.py):
    a list found before that is kept and put in the tree when it is shown."""

    selection_changed = Signal()

    def __init__(self, request_refresh: Callable[[], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("changesPane")
        self._request_refresh = request_refresh
        self._changes: list[AgentChange] = []
        self._by_key: dict[str, AgentChange] = {}
        self._items: dict[str, QTreeWidgetItem] = {}  # key -> its row, while the tree is built
        self._groups: dict[tuple[str, str], QTreeWidgetItem] = {}
        self._shown: dict[str, tuple[tuple[str, str], tuple[str, str]]] = {}  # key -> (its group, its row's texts)
        self._stale = False  # changes kept while hidden, not in the tree yet
        self._pending: list[tuple[tuple[str, str], list[AgentChange]]] = []  # groups still to add, last first
        self._filling = 0  # the build under way (a newer one stops the older's remaining turns)
        self._note = ""
        self.build_later()  # the widgets: on first use (ui/built_later.py)

    def _build(self) -> None:
        from PySide6.QtWidgets import QTreeWidget  # its classes are made with the widgets, not at launch

        self.note = plain_label(self._note)
        self.note.setObjectName("changesNote")
        self.note.setWordWrap(True)
        self.table = QTreeWidget()
        self.table.setObjectName("changesList")
        self.table.setAccessibleName("Agent changes, by session and writer")
        self.table.setHeaderLabels(["Change", "Record"])
        self.table.setColumnWidth(0, 200)  # "tension dismissed" whole, with the indentation under its group
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.detail = SafeBrowser()
        self.detail.setObjectName("changeDetail")
        self.detail.setAccessibleName("Change detail")
        list_and_detail(self, self.table, self.detail, above=[self.note])

    def _connect(self) -> None:
        self.table.currentItemChanged.connect(self._show_current)

    def count(self) -> int:
        """The agent changes listed (the Changes tab's count)."""
        return len(self._changes)

    def show_changes(self, changes: list[AgentChange], note: str) -> None:
        """The list grouped by (session, writer); the selection kept on the same change when it is still listed.
        While the pane is hidden only the list is kept: the tree is built when it is shown."""
        self._note = note
        self._changes = changes
        self._by_key = {_key(c): c for c in changes}
        if self.built:
            self.note.setText(note)
        if not self.built or not self.isVisible():
            self._stale = True
            return
        if self._stale or not self._items or self._pending:
            self._stale = False
            self._rebuild()
        else:
            self._update()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)  # builds the widgets the first time (ui/built_later.py)
        if self._stale:
            self._stale = False
            self._rebuild()

    def _item(self, change: AgentChange, group: QTreeWidgetItem) -> QTreeWidgetItem:
        from PySide6.QtWidgets import QTreeWidgetItem  # made by _build, which runs first

        texts = _texts(change)
        item = QTreeWidgetItem(list(texts))
        key = _key(change)
        item.setData(0, CHANGE_ROLE, key)
        if change.session_from:
            group.setToolTip(0, f"Session of {change.id} {change.session_from}")
        self._items[key] = item
        self._shown[key] = (_group_key(change), texts)
        return item

    def _group(self, key: tuple[str, str], made: dict[tuple[str, str], QTreeWidgetItem]) -> QTreeWidgetItem:
        from PySide6.QtWidgets import QTreeWidgetItem  # made by _build, which runs first

        group = self._groups.get(key) or made.get(key)
        if group is None:
            group = made[key] = QTreeWidgetItem([f"session {key[0]} · {key[1]}", ""])
            group.setData(0, CHANGE_ROLE, -1)  # a group: its actions apply to every change under it
            group.setData(0, GROUP_ROLE, f"session {key[0]} · {key[1]}")
        return group

    def _rebuild(self) -> None:
        """The tree built afresh, a few whole groups (about FILL_ROWS rows) a turn of the event loop: all 500 rows
        at once held the window's thread 23 ms, 395 ms of wall time at load 25. A group goes in whole, so its row
        always decides every change under it."""
        self.table.blockSignals(True)
        self.table.clear()
        self.table.blockSignals(False)
        self._items, self._groups, self._shown = {}, {}, {}
        grouped: dict[tuple[str, str], list[AgentChange]] = {}
        for change in self._changes:
            grouped.setdefault(_group_key(change), []).append(change)
        self._pending = list(reversed(grouped.items()))
        self._filling += 1
        self._fill(self._filling)

    def _fill(self, filling: int) -> None:
        """Items made apart, then added at once: a group row spanned or expanded while in the shown tree lays the
        whole tree out again each time (2.6 s of the window's thread for 253 groups)."""
        if filling != self._filling:
            return  # a newer list is being built
        made: dict[tuple[str, str], QTreeWidgetItem] = {}
        rows = 0
        while self._pending and rows < FILL_ROWS:
            key, changes = self._pending.pop()
            group = self._group(key, made)
            group.addChildren([self._item(change, group) for change in changes])
            rows += len(changes)
        first = not self._groups
        self.table.blockSignals(True)
        self._add_groups(made)
        self.table.blockSignals(False)
        if first:
            row = _first_row(self.table)
            if row is not None:
                self.table.setCurrentItem(row)
            self._show_current()
        if self._pending:
            QTimer.singleShot(0, lambda: self._fill(filling))

    def _add_groups(self, made: dict[tuple[str, str], QTreeWidgetItem]) -> None:
        for group in made.values():
            group.setText(0, f"{group.data(0, GROUP_ROLE)} ({group.childCount()})")
        self.table.addTopLevelItems(list(made.values()))
        for group in made.values():
            group.setFirstColumnSpanned(True)  # the session and writer, read whole across the row
            group.setExpanded(True)
        self._groups.update(made)

    def _drop_gone(self) -> set[tuple[str, str]]:
        """Rows whose change left the list (or moved to another group) taken out, the others' texts brought up to
        date; returns the groups that lost a row. What each row shows is compared as kept (`_shown`), without asking
        Qt for 500 rows' texts."""
        touched: set[tuple[str, str]] = set()
        for key, (group_key, texts) in list(self._shown.items()):
            change = self._by_key.get(key)
            if change is not None and _group_key(change) == group_key:
                now = _texts(change)
                if now != texts:
                    item = self._items[key]
                    item.setText(0, now[0])
                    item.setText(1, now[1])
                    self._shown[key] = (group_key, now)
                continue
            item = self._items.pop(key)
            del self._shown[key]
            self._groups[group_key].removeChild(item)
            touched.add(group_key)
        return touched

    def _update(self) -> None:
        """The shown tree brought to the new list in place: only the rows that left, came or changed are touched (a
        decision takes one row off 500, where building all 500 again held the window's thread 20-30 ms, 300-460 ms
        of wall time on a loaded machine). The selection stays on its change, or moves to the row after it."""
        table = self.table
        current = table.currentItem()
        after = _row_after(table, current)
        table.blockSignals(True)
        touched = self._drop_gone()
        made: dict[tuple[str, str], QTreeWidgetItem] = {}
        for change in self._changes:
            if _key(change) not in self._items:
                gk = _group_key(change)
                group = self._group(gk, made)
                group.addChild(self._item(change, group))
                touched.add(gk)
        for gk in touched:
            emptied = self._groups.get(gk)
            if emptied is not None and emptied.childCount() == 0:
                table.takeTopLevelItem(table.indexOfTopLevelItem(emptied))
                del self._groups[gk]
        self._add_groups(made)
        for gk in touched & self._groups.keys():
            kept = self._groups[gk]
            kept.setText(0, f"{kept.data(0, GROUP_ROLE)} ({kept.childCount()})")
        if current is None or not _in_tree(table, current):
            target = after if after is not None and _in_tree(table, after) else _first_row(table)
            if target is not None:
                table.setCurrentItem(target)
        table.blockSignals(False)
        self._show_current()

    def changes(self) -> list[AgentChange]:
        return list(self._changes)

    def selected_group(self) -> list[AgentChange]:
        """The changes under the selected group row (a session and writer); [] when a single change is selected."""
        item = self.table.currentItem() if self.built else None
        if item is None or self._stale or item.data(0, CHANGE_ROLE) != -1:
            return []
        children = (item.child(i) for i in range(item.childCount()))
        keys = [child.data(0, CHANGE_ROLE) for child in children if child is not None]
        return [self._by_key[k] for k in keys if isinstance(k, str) and k in self._by_key]

    def selected_change(self) -> AgentChange | None:
        item = self.table.currentItem() if self.built else None
        key = item.data(0, CHANGE_ROLE) if item is not None and not self._stale else None
        return self._by_key.get(key) if isinstance(key, str) else None

    def _show_current(self, *_args: object) -> None:
        change, group = self.selected_change(), self.selected_group()
        if group:
            kinds = sorted({c.kind for c in group})
            shown = f"<p>{len(group)} changes: {text_html(', '.join(kinds))}. A or R decides them all (asked once).</p>"
        else:
            shown = detail_html(change) if change is not None else ""
        self.detail.setHtml(shown)
        self.selection_changed.emit()

    # -- what navigation asks of a pane --------------------------------------------------------------------

    def refresh(self, _change: ChangeSet | None) -> None:
        self._request_refresh()

    @staticmethod
    def concerns(change: ChangeSet) -> bool:
        return bool(change.engrams or change.tensions or change.reloaded)

    def apply_search(self, text: str) -> None:
        del text  # the list is short and grouped: no search of its own

    def focus_queue(self) -> None:
        self.table.setFocus(Qt.FocusReason.OtherFocusReason)

    def has_selection(self) -> bool:
        return self.selected_change() is not None or bool(self.selected_group())

    def current_engram_id(self) -> str | None:
        change = self.selected_change()
        return change.id if change is not None and change.target == "engram" else None
