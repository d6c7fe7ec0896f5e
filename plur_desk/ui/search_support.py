"""Search in the window: the index is built and embeddings computed in the background; the field speaks the
query language; the detail panels show similar engrams. Everything works without it while it is not ready."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QLabel, QLineEdit

from plur_desk.ui.runner import Runner
from plur_desk.ui.workspace import Workspace

if TYPE_CHECKING:  # the index's modules (tantivy, numpy) load when it is first built, off the GUI thread
    from plur_desk.app.search import SearchService

DEBOUNCE_MS = 150


class _Progress(QObject):
    changed = Signal(str)


class SearchController(QObject):
    """Owns the search field's timing and the search service of the open store."""

    ready = Signal()  # the index is built: detail panels can show similar engrams
    apply_requested = Signal()  # the query (debounced, or at once on Enter) applies to the pane on screen
    leave_requested = Signal()  # Enter, Down or Esc in the field: back to the pane's list

    def __init__(self, workspace: Workspace, field: QLineEdit, status: QLabel) -> None:
        super().__init__(workspace)
        self.workspace = workspace
        self.field = field
        self._status = status
        self.runner = Runner(self)  # index and embedding work never waits behind, or blocks, a write
        self.service: SearchService | None = None
        self.is_ready = False
        self.cache_root: Path | None = None  # where the index and vectors go (tests use their own)
        self.timer = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._progress = _Progress(self)
        self._progress.changed.connect(self._show_status)
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
        self._status.setText(text)

    def reset(self) -> None:
        """Another store is being opened: this one's index is dropped."""
        self.service, self.is_ready = None, False

    def start(self) -> None:
        session = self.workspace.session
        if session is None:
            return
        root = self.cache_root or self.workspace.cache_root
        progress = self._progress

        def build() -> SearchService:
            from plur_desk.app.search import SearchService

            service = SearchService(session, root)
            progress.changed.emit("indexing…")
            service.sync(lambda n, total: progress.changed.emit(f"indexing {n:,}/{total:,}"))
            service.embedder()  # the model is loaded here, never on the GUI thread
            return service

        self.runner.submit(build, self._built, self._failed)

    def _built(self, service: object) -> None:
        from plur_desk.app.search import SearchService

        assert isinstance(service, SearchService)
        if service.session is not self.workspace.session:
            return  # built for a store no longer open: never searched in place of the one on screen
        self.service, self.is_ready = service, True
        progress = self._progress
        if service.semantic_available:
            progress.changed.emit("search ready · computing embeddings…")
            self.runner.submit(
                lambda: service.embed_missing(lambda n, t: progress.changed.emit(f"embedding {n:,}/{t:,}")),
                lambda _n: self._show_status("search: full text + semantic"),
                self._failed,
            )
        else:
            self._show_status("search: full text (semantic search unavailable: model not installed)")
        if self.field.text():
            self.apply_requested.emit()
        self.ready.emit()

    def _failed(self, error: Exception) -> None:
        self.is_ready = False
        self._show_status(f"search unavailable: {error}")

    def stop(self) -> None:
        """On close: the embedding process is stopped (its finished parts are kept: the next start resumes)."""
        if self.service is not None:
            self.service.stop_embedding()

    def after_change(self, changed_ids: Iterable[str], reloaded: bool) -> None:
        service = self.service
        if service is None:
            return
        ids = set(changed_ids)
        job = service.sync if reloaded else (lambda: service.sync_ids(ids))
        self.runner.submit(job, lambda _n: self.apply_requested.emit() if self.field.text() else None, self._failed)

    def matching_ids(self, text: str) -> set[str] | None:
        """Every engram the query matches (all results, not a page), or None when search is not ready."""
        if not self.is_ready or self.service is None or not text.strip():
            return None
        ignored = self.service.ignored_parts(text)
        if ignored:
            self.workspace.messages.status("Ignored: " + "; ".join(ignored), 6000)
        return self.service.all_ids(text)

    def similar_reader(self) -> Callable[[str], list[tuple[str, str, float]]] | None:
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
