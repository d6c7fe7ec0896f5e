"""Search in the window: the index is built and embeddings computed in the background; the field speaks the
query language; the detail panels show similar engrams. Everything works without it while it is not ready."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QLabel, QLineEdit

from plur_desk.domain.changes import ChangeSet
from plur_desk.infra.memory import keep_loaded_objects
from plur_desk.ui.common.jobs import INDEX
from plur_desk.ui.workspace import Workspace

if TYPE_CHECKING:  # the index's modules (tantivy, numpy) load when it is first built, off the GUI thread
    from plur_desk.app.search.store_search import SearchService

DEBOUNCE_MS = 150
Similar = Callable[[str], list[tuple[str, str, float]]]  # engram id -> (id, statement, cosine) of its nearest
SEARCHING = "searching…"


class _Progress(QObject):
    changed = Signal(str)


class SearchController(QObject):
    """Owns the search field's timing and the search service of the open store."""

    ready = Signal()  # the index is built: detail panels can show similar engrams
    apply_requested = Signal()  # the query (debounced, or at once on Enter) applies to the pane on screen
    leave_requested = Signal()  # Enter, Down or Esc in the field: back to the pane's list
    embedded = Signal()  # the embedding of the store ended: its vectors are in the shared cache

    def __init__(self, workspace: Workspace, field: QLineEdit, status: QLabel) -> None:
        super().__init__(workspace)
        self.workspace = workspace
        self.field = field
        self._status = status
        self.service: SearchService | None = None
        self.is_ready = False
        self.cache_root: Path | None = None  # where the index and vectors go (tests use their own)
        self.timer = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._version = 0  # the index's changes seen: an answer is for one query and one version
        self._asked: tuple[str, int] | None = None  # the query whose answer is being read
        self._answer: tuple[tuple[str, int], set[str]] | None = None  # the last answer, and its query
        self._ready_text = ""  # the index's state, shown when no query's answer is awaited
        self.hint: tuple[str, str] | None = None  # (query, why it found nothing) for the last empty answer
        self._progress = _Progress(self)
        self._progress.changed.connect(self._show_status)
        workspace.changes.subscribe(self._changed, deferred=True)  # the index after the lists' repaint
        field.textChanged.connect(lambda _t: self.timer.start())
        self.timer.timeout.connect(self.apply_requested.emit)
        field.returnPressed.connect(self._to_results)
        for key, slot in (("Down", self._to_results), ("Escape", self.leave_requested.emit)):
            shortcut = QShortcut(QKeySequence(key), field, slot)
            shortcut.setContext(Qt.ShortcutContext.WidgetShortcut)

    def text(self) -> str:
        return self.field.text()

    def _to_results(self) -> None:
        if self.timer.isActive():
            self.timer.stop()
            self.apply_requested.emit()
        self.leave_requested.emit()

    @Slot(str)
    def _show_status(self, text: str) -> None:
        """The index's state. While a query's answer is awaited the label keeps saying "searching…" (the list is not
        narrowed yet): the index's newest state is shown once the answer is in."""
        self._ready_text = text
        if self._status.text() != SEARCHING:
            self._status.setText(text)

    def reset(self) -> None:
        """Another store is being opened: this one's index is dropped, and no answer from it is awaited. Its
        embedding stops (what it wrote is kept for the next opening): the index's lane runs one job at a time, and
        the new store's index waited behind the old store's whole embedding (minutes at 50,000 statements)."""
        self.stop()
        self.service, self.is_ready = None, False
        self._status.setText(self._ready_text)
        self._index_changed(another=True)

    def _index_changed(self, another: bool = False) -> None:
        """The index moved on: answers are asked again; `another` index: the last answer is not shown either."""
        self._version += 1
        self._asked = None
        if another:
            self._answer = None

    def start(self) -> None:
        session = self.workspace.session
        if session is None:
            return
        root = self.cache_root or self.workspace.cache_root
        progress = self._progress

        def build() -> SearchService:
            from plur_desk.app.search.store_search import SearchService

            service = SearchService(session, root)
            progress.changed.emit("indexing…")
            service.sync(lambda n, total: progress.changed.emit(f"indexing {n:,}/{total:,}"))
            service.embedder()  # the model is loaded here, never on the GUI thread
            keep_loaded_objects()  # the index's maps: lasting objects, kept out of the idle passes
            return service

        # on the index's lane: index and embedding work never waits behind, or blocks, a write
        self.workspace.jobs.submit(build, self._built, self._failed, lane=INDEX, same_store=True)

    def _built(self, service: object) -> None:
        from plur_desk.app.search.store_search import SearchService

        assert isinstance(service, SearchService)  # (for the open store: `same_store`)
        self.service, self.is_ready = service, True
        self._index_changed(another=True)
        progress = self._progress
        if service.semantic_available:
            progress.changed.emit("search ready · computing embeddings…")
            self.workspace.jobs.submit(
                lambda: service.embed_missing(lambda n, t: progress.changed.emit(f"embedding {n:,}/{t:,}")),
                self._embedded,
                self._failed,
                lane=INDEX,
            )
        else:
            self._show_status("search: full text (semantic search unavailable: model not installed)")
        if self.field.text():
            self.apply_requested.emit()
        self.ready.emit()

    def _embedded(self, _count: object) -> None:
        self._show_status("search: full text + semantic")
        self.embedded.emit()

    def _failed(self, error: Exception) -> None:
        self.is_ready = False
        self._show_status(f"search unavailable: {error}")

    def stop(self) -> None:
        """On close: the embedding process is stopped (its finished parts are kept: the next start resumes)."""
        if self.service is not None:
            self.service.stop_embedding()

    def _changed(self, change: ChangeSet) -> None:
        if change.by_reviewer and change.engrams:
            self.after_change(change.engrams, False)
        elif change.read_again:  # the files read again: the index follows them whole
            self.after_change(change.engrams, True)

    def after_change(self, changed_ids: Iterable[str], reloaded: bool) -> None:
        service = self.service
        if service is None:
            return
        ids = set(changed_ids)
        job = service.sync if reloaded else (lambda: service.sync_ids(ids))
        self.workspace.jobs.submit(job, lambda _n: self._synced(service), self._failed, lane=INDEX)

    def _synced(self, service: SearchService) -> None:
        if service is not self.service:
            return
        self._index_changed()
        if self.field.text():
            self.apply_requested.emit()

    def matching_ids(self, text: str) -> set[str] | None:
        """Every engram the query matches (all results, not a page), or None when search is not ready.

        The answer is read on the read pool (at 50,000 engrams a broad query returns tens of thousands of documents
        to fetch: 300 ms on the window's thread per keystroke). Until this query's answer for the index as it is
        now comes back, the last answer is given, so the list stays as it was ("searching…" in the status bar;
        before any answer None, with `searching()` true), and the query is applied again when it comes."""
        service = self.service
        if not self.is_ready or service is None or not text.strip():
            return None
        key = (text, self._version)
        if self._answer is not None and self._answer[0] == key:
            return self._answer[1]
        if self._asked != key:
            self._asked = key
            ignored = service.ignored_parts(text)
            if ignored:
                self.workspace.messages.status("Search: " + "; ".join(ignored), 8000)
            self._status.setText(SEARCHING)
            self.workspace.jobs.read(
                "search.matching",
                lambda: service.all_ids(text),
                lambda ids: self._answered(key, service, ids),
                self._read_failed,
                one_at_a_time=True,
            )
        return self._answer[1] if self._answer is not None else None

    def searching(self) -> bool:
        """True while the field's query waits for its answer (the list shows the last one meanwhile)."""
        key = (self.field.text(), self._version)
        return self._asked == key and (self._answer is None or self._answer[0] != key)

    def _answered(self, key: tuple[str, int], service: SearchService, ids: object) -> None:
        if service is not self.service or key[1] != self._version:
            return  # for another store's index, or for the index before a change: asked again meanwhile
        assert isinstance(ids, set)
        self._answer = (key, ids)
        self._searched()
        self.apply_requested.emit()
        if not ids:  # why nothing: a filter that matches no engram at all is named (read on the pool as well)
            self.workspace.jobs.read("search.hint", lambda: service.filter_hint(key[0]), self._hinted)

    def _hinted(self, hint: object) -> None:
        if hint and self.field.text() == (self._answer[0][0] if self._answer else None):
            self.hint = (self.field.text(), str(hint))
            self.workspace.messages.status(f"Search: {hint}", 10000)
            self.apply_requested.emit()  # the pane's "matched nothing" note takes the hint too

    def hint_for(self, query: str) -> str:
        return self.hint[1] if self.hint is not None and self.hint[0] == query else ""

    def _read_failed(self, error: Exception) -> None:
        self._asked = None
        self._searched()
        self.workspace.messages.status(f"Search failed: {error}", 8000)

    def _searched(self) -> None:
        self._status.setText(self._ready_text)

    def similar_reader(self) -> Similar | None:
        """`similar_to` over the index as it is now, to run off the GUI thread (a product with every vector, and
        an embedding when the draft's vector is not computed yet); None when there is nothing to find."""
        service = self.service
        if not self.is_ready or service is None or not service.semantic_available:
            return None
        return self.similar_to

    def similar_to(self, engram_id: str) -> list[tuple[str, str, float]]:
        service, session = self.service, self.workspace.session
        if not self.is_ready or service is None or session is None:
            return []
        out = []
        for hit in service.similar(engram_id, 5):
            view = session.view(hit.id)
            if view is not None:
                out.append((hit.id, view.statement, hit.score))
        return out
