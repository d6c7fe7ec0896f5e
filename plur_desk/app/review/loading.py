"""Opening a store in two steps for the window: the drafts first (reviewable at once), then the rest.

`parse_rest` runs on a background runner (worker processes do the parsing; it touches no session state, so writes
go on meanwhile); `finish_load` runs in the same serial queue as writes and completes the session's snapshot.
"""

from __future__ import annotations

from plur_desk.app.review.session import ReviewSession
from plur_desk.app.team import team_review
from plur_desk.infra.jobs import computing
from plur_desk.infra.memory import gc_paused, keep_loaded_objects
from plur_desk.store.lists.parse_cache import ParsedBlocks


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
    # a million lines indexed: young passes (10-43 ms each, collecting nothing) held the lock; a computation's
    # turn (infra/turns.py): the clusters and the search's intake wait for its steps, not run beside it
    with gc_paused(), computing():
        session.load_history()
    session.save_cache()
    missing = session.unlogged_reviews()
    keep_loaded_objects()  # the history's index and verdicts
    return missing


def warm_up_signing() -> None:
    """Once the store is loaded, off the GUI thread: the modules that signing a decision needs (the launch does
    not wait for them; the first decision then does not either). Choosing the keyring backend is part of it: the
    first `get_keyring()` probes every backend (one looks for macOS libraries by running ldconfig and gcc), which
    cost the first approve that time, as importing the key's serialization did (~100 ms of the window's thread
    waiting, beside the embedding's reads). Choosing reads no secret and cannot prompt."""
    import keyring
    from cryptography.hazmat.primitives import serialization  # noqa: F401  (the reviewer key's first save)
    from cryptography.hazmat.primitives.asymmetric import ed25519  # noqa: F401

    from plur_desk.app.changes import watch  # noqa: F401  (the baseline each decision follows: not at launch either)
    from plur_desk.domain import commands  # noqa: F401  (a decision's commands: not imported before the first draft)
    from plur_desk.store.lists.yaml_load import js_yaml_loader

    keyring.get_keyring()
    js_yaml_loader()  # PyYAML, which reading keys.yaml needs at the first signed decision (not imported at launch)
