"""Drafts by agent session: select every listed draft the current draft's session wrote, to decide them together."""

from __future__ import annotations

from collections.abc import Callable

from plur_desk.ui.messages import Messages
from plur_desk.ui.review.drafts_pane import DraftsPane


def select_session(drafts: DraftsPane, messages: Messages) -> bool:
    """Select the listed drafts of the current draft's session (the current one stays current), so the verdict
    that follows is the ordinary bulk one, flagged drafts named and left out unless included. False, said in the
    status bar, when the current draft names no session."""
    current = drafts.current()
    if current is None or drafts.editing:
        return False
    if not current.session:
        messages.status("This draft names no agent session (no sources[].session_id); nothing was selected.", 6000)
        return False
    rows = [n for n, row in enumerate(drafts.model.rows) if row.session == current.session]
    drafts.select_row(drafts.current_row())  # the session's drafts only, not what was selected before
    drafts.select_also(rows)
    messages.status(f"{len(rows)} listed drafts of session {current.session} selected.", 6000)
    return True


def on_session(drafts: DraftsPane, messages: Messages, verdict: Callable[[], None]) -> Callable[[], None]:
    """`verdict` (the ordinary approve or reject of the selection) on the current draft's session's drafts."""

    def run() -> None:
        if select_session(drafts, messages):
            verdict()

    return run
