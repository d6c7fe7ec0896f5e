"""Saving an edited statement, and when the edit took a secret out, saying where else that secret may still be."""

from __future__ import annotations

from plur_desk.app.review.session import ReviewSession
from plur_desk.domain.seen import Seen
from plur_desk.ui.review.drafts_pane import DraftsPane
from plur_desk.ui.workspace import Workspace


def save_edit(workspace: Workspace, drafts: DraftsPane, session: ReviewSession, seen: Seen, text: str) -> None:
    """Write the edit on the session's lane; if it removed a credential-like string, find the secret's other
    copies on the read pool once the edit is written and say in the queue's notice where they are."""
    from plur_desk.domain.commands import EditStatement
    from plur_desk.domain.lint import removed_credentials

    row = drafts.model.row_of(seen.id)
    original = drafts.model.rows[row].statement if row >= 0 else ""
    removed = removed_credentials(original, text)
    drafts.select_id(seen.id)

    def traces() -> None:
        from plur_desk.app.review.secret_traces import find_traces

        workspace.jobs.read(
            "secret.traces",
            lambda: find_traces(session.root, seen.id, removed),
            lambda found: drafts.show_banner(found.advice()),  # type: ignore[attr-defined]
        )

    workspace.change(lambda: session.execute(EditStatement(seen, text)), traces if removed else None)
