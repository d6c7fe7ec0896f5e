"""The crash-safety test's writer, in a process of its own: it opens the store, says it is ready, approves on the
word go and says done (unless the test kills it first). Writers are forked from multiprocessing's fork server,
which imported plur_desk once (`PRELOAD`), instead of each starting an interpreter and importing it all again: ~0.4
CPU seconds a writer. Each writer still opens its store from disk, in a process where nothing else ran."""

from __future__ import annotations

import multiprocessing
import os
from datetime import UTC, datetime
from multiprocessing import forkserver
from multiprocessing.connection import Connection
from multiprocessing.context import ForkServerProcess
from pathlib import Path

from plur_desk.app.review.session import ReviewSession
from plur_desk.domain.commands import ApproveDrafts
from plur_desk.domain.review import Reviewer
from plur_desk.infra.clock import FixedClock
from plur_desk.store.plur_store import PlurStore

# imported by the fork server, so no writer imports them: this module's imports, and what the write path imports
# on first use (the key vault's keyring, signing); a name missing here only costs its writers the import
PRELOAD = [
    "plur_desk.app.review.session",
    "plur_desk.domain.commands",
    "plur_desk.domain.review",
    "plur_desk.infra.clock",
    "plur_desk.store.plur_store",
    "plur_desk.app.trust.vault",
    "keyring",
    "keyring.backends.fail",
    "cryptography.hazmat.primitives.asymmetric.ed25519",
    "yaml",
]
NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def start_writer(root: Path, ids: list[str]) -> tuple[ForkServerProcess, Connection]:
    """A writer for `root` that has opened it and waits for the word go; the test's end of the pipe to it."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    ours, theirs = context.Pipe()
    writer = context.Process(target=_write, args=(theirs, str(root), ids, dict(os.environ)), daemon=True)
    writer.start()
    theirs.close()
    assert ours.recv() == "ready"
    return writer, ours


def stop_fork_server() -> None:
    """Ends the fork server and waits for it: else it holds plur_desk's modules for the rest of the test run. `_stop`
    is what CPython's own tests use; where it is missing the server ends with this process."""
    stop = getattr(forkserver._forkserver, "_stop", None)  # type: ignore[attr-defined]
    if stop is not None:
        stop()


def _write(conn: Connection, root: str, ids: list[str], env: dict[str, str]) -> None:
    os.environ.clear()  # this test's private HOME and data dirs, whenever the fork server was started
    os.environ.update(env)
    store = PlurStore(Path(root))
    store.load()
    session = ReviewSession(store, Reviewer("Crash Tester"), FixedClock(NOW))
    conn.send("ready")
    conn.recv()
    session.execute(ApproveDrafts(tuple(session.writes.seen(ids)), note="crash trial"))
    conn.send("done")
