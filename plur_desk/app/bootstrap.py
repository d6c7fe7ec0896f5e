"""Assembles the Qt-free objects for one open store: store, history, session (the only place that does)."""

from __future__ import annotations

from pathlib import Path

from plur_desk.app.session import ReviewSession
from plur_desk.domain.review import Reviewer
from plur_desk.infra.clock import Clock
from plur_desk.infra.paths import cache_dir
from plur_desk.store.plur_store import PlurStore, find_store_problem


def store_problem(path: Path) -> str | None:
    """Why `path` cannot be opened as a PLUR store, or None."""
    return find_store_problem(path)


def embedding_check() -> str:
    """One line for --self-check: whether semantic search works in this installation."""
    try:
        from plur_desk.index.embeddings import Embedder
    except ImportError:
        return "semantic search: not available in this build"
    embedder = Embedder.load()
    if embedder is None:
        return "semantic search: the embedding model is not installed (optional)"
    vector = embedder.embed(["deploy freezes on Friday"])[0]
    return f"embedding query: a {len(vector)}-dimensional vector"


def open_store(path: Path, *, use_cache: bool = True) -> PlurStore:
    return PlurStore(path, cache_dir=cache_dir() if use_cache else None)


def open_session(
    path: Path,
    reviewer_name: str,
    *,
    clock: Clock | None = None,
    load_history: bool = True,
    use_cache: bool = True,
    for_review: bool = False,
) -> ReviewSession:
    """Open and load a store fully (blocking); the GUI does the same steps in a worker thread. `for_review` also
    finishes interrupted actions from the write-ahead journal and sweeps abandoned temp files (it may write);
    without it nothing is written."""
    store = open_store(path, use_cache=use_cache)
    store.load()
    store.save_cache()
    session = ReviewSession(store, Reviewer(reviewer_name), clock)
    if for_review:
        session.recover_on_open()
    if load_history:
        session.load_history()
    return session
