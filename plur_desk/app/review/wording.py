"""What a decision did, in words for the status bar: the verb in the past tense and the statement it was about.

The label of an operation ("approve ENG-2026-12-02-011 as decided") is what history records; a person reads the
statement, so the message names it, and says how to take it back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

DONE = {
    "approve": "Approved",
    "reject": "Rejected",
    "edit": "Edited",
    "set_validity": "Validity set",
    "expire_now": "Expired",
    "settle_duplicates": "Duplicates settled",
    "settle_disagreement": "Disagreement settled",
    "supersede": "Superseded",
    "confirm_tension": "Contradiction confirmed",
    "dismiss_tension": "Contradiction dismissed",
    "resolve_tension": "Contradiction resolved",
    "split_in_time": "Split in time",
    "settle_two_winners": "Both kept",
    "record_tension": "Contradiction recorded",
}
UNDO_HINT = "Ctrl+Z undoes"


def quoted(statement: object, limit: int = 90) -> str:
    text = " ".join(str(statement).split())  # one line in a status bar
    return f"“{text if len(text) <= limit else text[: limit - 1] + '…'}”"


def said(
    action: str,
    label: str,
    ids: Iterable[str],
    statement_of: Callable[[str], object],
    verb: str = "",
) -> str:
    """`Approved: “…”` (and how many more), or for an undo/redo `Undone: approve “…”`; the label when no statement
    is known (a tension alone)."""
    ids = sorted(ids)
    statements = [s for i in ids if (s := statement_of(i))]
    what = quoted(statements[0]) if statements else label
    more = f" and {len(statements) - 1} more" if len(statements) > 1 else ""
    if verb:
        head = {"undo": "Undone", "redo": "Redone"}.get(verb, verb.capitalize())
        return f"{head}: {action.replace('_', ' ')} of {what}{more}"
    return f"{DONE.get(action, action.replace('_', ' ').capitalize())}: {what}{more} — {UNDO_HINT}"
