"""Opening a store in two steps for the window: the drafts first (reviewable at once), then the rest.

`parse_rest` runs on a background runner (worker processes do the parsing; it touches no session state, so writes
go on meanwhile); `finish_load` runs in the same serial queue as writes and completes the session's snapshot.
"""

from __future__ import annotations

from plur_desk.app.session import ReviewSession
from plur_desk.store.parse_cache import ParsedBlocks


def parse_rest(session: ReviewSession) -> ParsedBlocks:
    return session.store.parse_rest()


def finish_load(session: ReviewSession, parsed: object) -> ReviewSession:
    assert isinstance(parsed, ParsedBlocks)
    session.store.finish_load(parsed)
    session.reindex()
    return session
