"""Ratify and Revert of a group of listed agent changes, as the session's commands (bulk approve's safety).

Which command decides one change as shown, and what a ratification writes into the watched baseline, are the
watch's (app/changes/ratification.py, below app/changes/watch.py): this module sits above the session it drives.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from plur_desk.domain.agents.agent_change_commands import EngramChanges
from plur_desk.domain.agents.agent_changes import AgentChange
from plur_desk.domain.changes import ChangeSet
from plur_desk.domain.review import engram_fingerprint
from plur_desk.domain.seen import Seen
from plur_desk.infra.errors import ActionRefused, ChangedSinceError, PlurDeskError

if TYPE_CHECKING:
    from plur_desk.app.review.session import ReviewSession


def decide_group(
    session: ReviewSession, group: list[AgentChange], seen: Mapping[tuple[str, str], Seen], *, ratify: bool
) -> ChangeSet:
    """Every change of a group ratified (or reverted), with bulk approve's safety: one that moved on since it was
    listed is refused and named, and the others still go through. The engram changes go as one action (one write of
    engrams.yaml, one undo); when that one is refused (a record moved on disk since), each goes on its own."""
    done, refused = ChangeSet(), []
    ready: list[tuple[AgentChange, object]] = []  # engram changes as shown, each with its command
    for change in (c for c in group if c.target == "engram"):
        try:
            shown = seen.get((change.target, change.id))
            current = session.engram(change.id)
            if shown is None or current is None:
                raise ActionRefused("not in the store as listed")
            moved = shown.moved(engram_fingerprint(current))
            if moved:
                raise ChangedSinceError(change.id, moved)
            ready.append((change, session.watch.command_for(change, shown, ratify=ratify)))
        except PlurDeskError as exc:
            refused.append(f"{change.id}: {exc}")
    one_by_one = ready if len(ready) == 1 else []
    if len(ready) > 1:
        try:
            done = session.execute(EngramChanges(tuple(command for _c, command in ready)))  # type: ignore[misc]
        except PlurDeskError:
            one_by_one = ready
    one_by_one += [(c, None) for c in group if c.target == "tension"]
    for change, command in one_by_one:
        try:
            shown = seen.get((change.target, change.id))
            if shown is None:
                raise ActionRefused("not in the store as listed")
            done = done.merge(session.execute(command or session.watch.command_for(change, shown, ratify=ratify)))  # type: ignore[arg-type]
        except PlurDeskError as exc:
            refused.append(f"{change.id}: {exc}")
    past = "ratified" if ratify else "reverted"
    said = f"{past} {len(group) - len(refused)} of {len(group)} agent changes"
    return done.saying(said).warning([f"Not {past}: " + "; ".join(refused)] if refused else [])
