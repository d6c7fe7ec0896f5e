"""Opening a store in two steps for the window: the drafts first (reviewable at once), then the rest.

`parse_rest` runs on a background runner (worker processes do the parsing; it touches no session state, so writes
go on meanwhile); `finish_load` runs in the same serial queue as writes and completes the session's snapshot.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from plur_desk.app import team_review
from plur_desk.app.session import ReviewSession
from plur_desk.infra.clock import Clock, SystemClock
from plur_desk.infra.memory import keep_loaded_objects
from plur_desk.store.parse_cache import ParsedBlocks

AskUnlock = Callable[[str], bool]


def open_for_review(path: Path, reviewer: str, clock: Clock, ask_unlock: AskUnlock) -> ReviewSession:
    """The first step of opening a store in the window (off the GUI thread): the drafts only, the rest being
    parsed in worker processes once the queue is on screen; interrupted actions finished from the journal."""
    from plur_desk.app.bootstrap import open_session

    session = open_session(
        path, reviewer, clock=clock, ask_unlock=ask_unlock, drafts_first=True, load_history=False, for_review=True
    )
    before_first_draft(session)
    return session


class EarlyOpen:
    """At launch, `open_for_review` started on a thread of its own before Qt is imported and the window built: the
    store's file is read and its cache checked while the window is made (reading, checking and hashing release the
    interpreter lock). The window takes the session from it (`take`) instead of opening the store again, for the
    same folder, reviewer and clock only. The key unlock question goes to the window's asker once it exists (the
    opening itself never asks it; signing does, after `take`)."""

    def __init__(self, path: Path, reviewer: str) -> None:
        self.path, self.reviewer, self.clock = path, reviewer, SystemClock()
        self._asker: AskUnlock | None = None
        self._asker_given = threading.Event()
        self._done = threading.Event()
        self._session: ReviewSession | None = None
        self._error: BaseException | None = None
        threading.Thread(target=self._open, name="early-open", daemon=True).start()

    def _ask(self, reason: str) -> bool:
        self._asker_given.wait()
        assert self._asker is not None
        return self._asker(reason)

    def _open(self) -> None:
        try:
            self._session = open_for_review(self.path, self.reviewer, self.clock, self._ask)
        except BaseException as exc:  # handed to whoever takes the session
            self._error = exc
        finally:
            self._done.set()

    def take(self, path: Path, reviewer: str, clock: Clock, ask_unlock: AskUnlock) -> ReviewSession | None:
        """The session, once opened (waits; off the GUI thread), or None when it was opened for something else."""
        if (Path(path), reviewer, clock) != (self.path, self.reviewer, self.clock):
            return None
        self._asker = ask_unlock
        self._asker_given.set()
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._session


def before_first_draft(session: ReviewSession) -> None:
    """On the loading thread, what showing the first draft would otherwise ask on the GUI thread: whether the
    store is a git clone with a remote (a `git` subprocess, asked once per store; its detail warns about what
    will not reach the team), and the tension rows a draft's detail lists (every status; kept by id)."""
    team_review.team_remote(session.root)
    session.tensions(("detected", "confirmed", "dismissed", "resolved"))
    keep_loaded_objects()  # the drafts' records: never walked by the collector's full passes


def parse_rest(session: ReviewSession) -> ParsedBlocks:
    return session.parse_rest()


def finish_load(session: ReviewSession, parsed: object) -> ReviewSession:
    assert isinstance(parsed, ParsedBlocks)
    session.finish_load(parsed)
    keep_loaded_objects()  # every record
    return session


def load_history(session: ReviewSession) -> list[str]:
    """The whole history indexed, the parse cache saved, and every engram checked against the history (the
    reviews no event records); on the loading thread."""
    session.load_history()
    session.save_cache()
    missing = session.unlogged_reviews()
    keep_loaded_objects()  # the history's index and verdicts
    return missing


def warm_up_signing() -> None:
    """Once the store is loaded, off the GUI thread: the modules that signing a decision needs (the launch does
    not wait for them; the first decision then does not either). Choosing the keyring backend is part of it: the
    first `get_keyring()` probes every backend (one looks for macOS libraries by running ldconfig and gcc), which
    cost the first approve that time. Choosing reads no secret and cannot prompt."""
    import keyring
    from cryptography.hazmat.primitives.asymmetric import ed25519  # noqa: F401

    keyring.get_keyring()
