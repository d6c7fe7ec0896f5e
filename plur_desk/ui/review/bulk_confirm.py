"""The one question a verdict on many drafts asks: which drafts it decides (the flagged ones only when included)."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from plur_desk.app.review.rows import DraftRow
from plur_desk.domain.seen import Seen
from plur_desk.ui.tensions.conflicts_support import CONFLICT_NOTE
from plur_desk.ui.workspace import Workspace

# What a bulk verdict asks about explicitly: drafts PLUR would not inject now, or whose text needs a second look.
BULK_FLAGS = ("expired", "not yet valid", "credential-like string", "instruction-like text", "rejected before")

Shown = list[tuple[DraftRow, Seen]]


def confirm_bulk(
    workspace: Workspace,
    parent: QWidget,
    shown: Shown,
    verb: str,
    conflicts: list[str] | None = None,
    *,
    late: bool = False,
) -> tuple[bool, str, Shown, int]:
    """(go ahead, note or reason, the drafts to decide, how many flagged drafts are left in the queue); `late`: the
    question appears on its own, after the key that asked for it (it takes no answer for a moment: BulkDialog)."""
    if len(shown) <= 1:
        return True, "", shown, 0
    flagged = [(r.id, ", ".join(f for f in r.flags if f in BULK_FLAGS), r.statement) for r, _ in shown]
    settings, store = workspace.settings, workspace.settings_store
    recent = settings.recent_notes if verb == "approve" else settings.recent_reasons
    extra = f"{CONFLICT_NOTE}\n" + "\n".join(conflicts) if conflicts else ""  # the same one question
    from plur_desk.ui.common.dialogs import BulkDialog

    dialog = BulkDialog(verb, len(shown), [f for f in flagged if f[1]], recent, parent, extra=extra, late=late)
    if dialog.exec() != BulkDialog.DialogCode.Accepted or dialog.deciding == 0:
        return False, "", [], 0
    if dialog.reason:
        remember = store.remember_note if verb == "approve" else store.remember_reason
        remember(settings, dialog.reason)
    left = {i for i, flags, _ in flagged if flags} if not dialog.include_flagged else set()
    return True, dialog.reason, [(r, s) for r, s in shown if r.id not in left], len(left)
