"""The Changes pane: what agents changed around the draft gate since the watched baseline, grouped by agent session
and writer, each with a word diff of before -> after and the history events behind it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QAbstractItemView, QSplitter, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from plur_desk.app.review.session import ChangeSet
from plur_desk.ui.common.widgets import SafeBrowser, plain_label, text_html

if TYPE_CHECKING:  # the detection's modules load with the first decision or the pane's first list, not at launch
    from plur_desk.domain.agents.agent_changes import AgentChange

CHANGE_ROLE = Qt.ItemDataRole.UserRole + 1


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


class ChangesPane(QWidget):
    selection_changed = Signal()

    def __init__(self, request_refresh: Callable[[], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("changesPane")
        self._request_refresh = request_refresh
        self._changes: list[AgentChange] = []
        self._stale = False  # changes kept while hidden, not in the tree yet
        self.note = plain_label()
        self.note.setObjectName("changesNote")
        self.note.setWordWrap(True)
        self.table = QTreeWidget()
        self.table.setObjectName("changesList")
        self.table.setAccessibleName("Agent changes, by session and writer")
        self.table.setHeaderLabels(["Change", "Record"])
        self.table.setColumnWidth(0, 200)  # "tension dismissed" whole, with the indentation under its group
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.currentItemChanged.connect(self._show_current)
        self.detail = SafeBrowser()
        self.detail.setObjectName("changeDetail")
        self.detail.setAccessibleName("Change detail")
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.detail)
        layout = QVBoxLayout(self)
        layout.addWidget(self.note)
        layout.addWidget(split)

    def count(self) -> int:
        """The agent changes listed (the Changes tab's count)."""
        return len(self._changes)

    def show_changes(self, changes: list[AgentChange], note: str) -> None:
        """The list grouped by (session, writer); the selection kept on the same change when it is still listed.
        While the pane is hidden only the list is kept: the tree is built when it is shown."""
        self.note.setText(note)
        kept = self.selected_change() if not self._stale else None
        self._changes = changes
        if not self.isVisible():
            self._stale = True
            return
        self._stale = False
        self._build(kept)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self._stale = False
            self._build(None)

    def _build(self, kept: AgentChange | None) -> None:
        """Items made apart, then added at once: a group row spanned or expanded while in the shown tree lays the
        whole tree out again each time (2.6 s of the window's thread for 253 groups)."""
        groups: dict[tuple[str, str], QTreeWidgetItem] = {}
        select = None
        for index, change in enumerate(self._changes):
            key = (change.session or "(no session)", change.writer)
            group = groups.get(key)
            if group is None:
                group = groups[key] = QTreeWidgetItem([f"session {key[0]} · {key[1]}", ""])
                group.setData(0, CHANGE_ROLE, -1)  # a group: its actions apply to every change under it
            if change.session_from:
                group.setToolTip(0, f"Session of {change.id} {change.session_from}")
            record = change.id + (" · session inferred" if change.session_from else "")
            item = QTreeWidgetItem(group, [change.kind.replace("_", " "), record])
            item.setData(0, CHANGE_ROLE, index)
            if kept is not None and (change.id, change.kind) == (kept.id, kept.kind):
                select = item
        for group in groups.values():
            group.setText(0, f"{group.text(0)} ({group.childCount()})")
        self.table.blockSignals(True)
        self.table.clear()
        self.table.addTopLevelItems(list(groups.values()))
        for group in groups.values():
            group.setFirstColumnSpanned(True)  # the session and writer, read whole across the row
        self.table.expandAll()
        self.table.blockSignals(False)
        top = self.table.topLevelItem(0)
        first = select or (top.child(0) if top is not None else None)
        if first is not None:
            self.table.setCurrentItem(first)
        self._show_current()

    def changes(self) -> list[AgentChange]:
        return list(self._changes)

    def selected_group(self) -> list[AgentChange]:
        """The changes under the selected group row (a session and writer); [] when a single change is selected."""
        item = self.table.currentItem()
        if item is None or self._stale or item.data(0, CHANGE_ROLE) != -1:
            return []
        children = (item.child(i) for i in range(item.childCount()))
        indexes = [child.data(0, CHANGE_ROLE) for child in children if child is not None]
        return [self._changes[i] for i in indexes if isinstance(i, int) and 0 <= i < len(self._changes)]

    def selected_change(self) -> AgentChange | None:
        item = self.table.currentItem()
        index = item.data(0, CHANGE_ROLE) if item is not None and not self._stale else None
        return self._changes[index] if isinstance(index, int) and 0 <= index < len(self._changes) else None

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
