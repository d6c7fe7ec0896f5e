"""Assembles the Qt-free objects for one open store: store, keys, session. The only place that does, for the window
(in its load worker), the terminal commands and the tests alike."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from plur_desk.app.review.session import ReviewSession
from plur_desk.app.trust.signing import ReviewerKeys
from plur_desk.app.trust.vault import KeyVault
from plur_desk.domain.review import Reviewer
from plur_desk.infra.clock import Clock
from plur_desk.infra.memory import gc_paused
from plur_desk.infra.paths import cache_dir, data_dir
from plur_desk.store.plur_store import PlurStore, find_store_problem


def store_problem(path: Path) -> str | None:
    """Why `path` cannot be opened as a PLUR store, or None."""
    return find_store_problem(path)


def open_store(path: Path, *, use_cache: bool = True) -> PlurStore:
    """A whole store, loaded for a read-only terminal command that needs no session (`plur-desk changes`); the parse
    cache (derived data, outside the store) is the only thing written."""
    store = PlurStore(path, cache_dir=cache_dir() if use_cache else None)
    store.load(drafts_first=False)
    store.save_cache()
    return store


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


def open_session(
    path: Path,
    reviewer_name: str,
    *,
    clock: Clock | None = None,
    load_history: bool = True,
    use_cache: bool = True,
    for_review: bool = False,
    drafts_first: bool = False,
    ask_unlock: Callable[[str], bool] | None = None,
) -> ReviewSession:
    """Open a store and its session (blocking: run it off the GUI thread).

    By default the whole store is loaded and the parse cache saved. `drafts_first` (the window) parses only the
    drafts: the queue can be shown and acted on at once, and the window completes the load in the background
    (`app/review/loading.py`) and saves the cache with the history. `for_review` also finishes interrupted actions from the
    write-ahead journal and sweeps abandoned temp files (it may write); without it nothing is written.
    `ask_unlock` is asked (from any thread) whether to try a locked keyring again.
    """
    store = PlurStore(path, cache_dir=cache_dir() if use_cache else None)
    if drafts_first:
        store.load_drafts(check_split_later=True)  # the file's digest is computed while the queue is built
    else:
        store.load()
        store.save_cache()
    reviewer = Reviewer(reviewer_name)
    keys = ReviewerKeys(store.root, reviewer, KeyVault(data_dir()), ask_unlock) if ask_unlock is not None else None
    with gc_paused():  # the queue's rows, thousands of objects and none garbage
        session = ReviewSession(store, reviewer, clock, keys)
    if not store.split_confirmed():  # the kept cut was of other bytes: what was found through it is dropped
        store.load_drafts()
        session = ReviewSession(store, reviewer, clock, keys)
    if for_review:
        session.recover_on_open()
    if load_history:
        session.load_history()
    return session
