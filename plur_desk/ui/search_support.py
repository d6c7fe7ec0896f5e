"""Search in the window: the index is built and embeddings computed in the background; the field speaks the
query language; the detail panels show similar engrams. Everything works without it while it is not ready."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QKeySequence, QShortcut

from plur_desk.app.search import SearchService
from plur_desk.ui.runner import Runner

if TYPE_CHECKING:
    from plur_desk.ui.main_window import MainWindow

    _Base = MainWindow
else:
    _Base = object


class _Progress(QObject):
    changed = Signal(str)


class SearchMixin(_Base):
    search_service: SearchService | None = None
    search_ready: bool = False

    def _init_search(self) -> None:
        self.search_runner = Runner(self)  # index and embedding work never waits behind, or blocks, a write
        self._search_progress = _Progress(self)
        self._search_progress.changed.connect(self._search_status)
        self.search_ready = False
        self.search_service = None

    def _connect_search_keys(self) -> None:
        """Enter or Down in the search field moves to the results (applying the query at once); Esc goes back."""
        self.search.returnPressed.connect(self._search_to_results)
        for key, slot in (("Down", self._search_to_results), ("Escape", self._search_back)):
            shortcut = QShortcut(QKeySequence(key), self.search, slot)
            shortcut.setContext(Qt.ShortcutContext.WidgetShortcut)

    def _search_to_results(self) -> None:
        if self._search_timer.isActive():
            self._search_timer.stop()
            self._apply_search()
        self._search_back()

    def _search_back(self) -> None:
        from plur_desk.ui.navigation import PANES

        getattr(self, PANES[self.tabs.currentIndex()]).focus_queue()

    @Slot(str)
    def _search_status(self, text: str) -> None:
        self._status_labels["search"].setText(text)

    def start_search(self) -> None:
        session = self.session
        if session is None:
            return
        from plur_desk.infra.paths import cache_dir

        root = getattr(self, "search_cache_root", None) or cache_dir()
        progress = self._search_progress

        def build() -> SearchService:
            service = SearchService(session, root)
            progress.changed.emit("indexing…")
            service.sync(lambda n, total: progress.changed.emit(f"indexing {n:,}/{total:,}"))
            service.embedder()  # the model is loaded here, never on the GUI thread
            return service

        self.search_runner.submit(build, self._search_built, self._search_failed)

    def _search_built(self, service: object) -> None:
        assert isinstance(service, SearchService)
        self.search_service, self.search_ready = service, True
        progress = self._search_progress
        if service.semantic_available:
            progress.changed.emit("search ready · computing embeddings…")
            self.search_runner.submit(
                lambda: service.embed_missing(lambda n, t: progress.changed.emit(f"embedding {n:,}/{t:,}")),
                lambda _n: self._search_status("search: full text + semantic"),
                self._search_failed,
            )
        else:
            self._search_status("search: full text (semantic search unavailable: model not installed)")
        if self.search.text():
            self._apply_search()
        self._draft_selected()

    def _search_failed(self, error: Exception) -> None:
        self.search_ready = False
        self._search_status(f"search unavailable: {error}")

    def stop_search(self) -> None:
        """On close: the embedding process is stopped (its finished parts are kept: the next start resumes)."""
        if self.search_service is not None:
            self.search_service.stop_embedding()

    def search_after_change(self, changed_ids: set[str], reloaded: bool) -> None:
        service = self.search_service
        if service is None:
            return
        ids = set(changed_ids)
        job = service.sync if reloaded else (lambda: service.sync_ids(ids))
        self.search_runner.submit(
            job, lambda _n: self._apply_search() if self.search.text() else None, self._search_failed
        )

    def matching_ids(self, text: str) -> set[str] | None:
        """Every engram the query matches (all results, not a page), or None when search is not ready."""
        if not self.search_ready or self.search_service is None or not text.strip():
            return None
        ignored = self.search_service.ignored_parts(text)
        if ignored:
            self.statusBar().showMessage("Ignored: " + "; ".join(ignored), 6000)
        return self.search_service.all_ids(text)

    def similar_to(self, engram_id: str) -> list[tuple[str, str, float]]:
        service = self.search_service
        if not self.search_ready or service is None or self.session is None:
            return []
        out = []
        for hit in service.similar(engram_id, 5):
            engram = self.session.engram(hit.id)
            if engram is not None:
                out.append((hit.id, str(engram.get("statement", "")), hit.score))
        return out
