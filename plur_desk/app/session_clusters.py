"""The near-duplicate half of ReviewSession: settling a cluster in one audited, undoable step."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from plur_desk.domain import review
from plur_desk.domain.cluster_review import reject_as_duplicate
from plur_desk.domain.review import Reviewer
from plur_desk.domain.seen import Seen
from plur_desk.infra.errors import ChangedSinceError

if TYPE_CHECKING:
    from plur_desk.app.session import ChangeSet

Apply = Callable[[dict[str, object]], tuple[dict[str, object], list[dict[str, object]]]]


class ClusterDecisionsMixin:
    reviewer: Reviewer

    def now(self) -> datetime:
        raise NotImplementedError

    def _engram_action(self, action: str, label: str, seen: Sequence[Seen], fn: Apply) -> ChangeSet:
        raise NotImplementedError

    def seen(self, ids: Iterable[str]) -> list[Seen]:
        raise NotImplementedError

    def settle_duplicates(
        self,
        representative: str,
        duplicates: list[str],
        approve: bool,
        level: str = "decided",
        shown: Mapping[str, str] | None = None,
    ) -> ChangeSet:
        """Approve the representative (when `approve`) and reject each duplicate with a link to it: one operation
        (one undo), one history event per engram, every engram checked against what the reviewer saw."""
        now = self.now()

        def fn(engram: dict[str, object]) -> tuple[dict[str, object], list[dict[str, object]]]:
            if engram.get("id") == representative:
                return review.approve(engram, level, "", self.reviewer, now)
            return reject_as_duplicate(engram, representative, self.reviewer, now)

        others = [d for d in dict.fromkeys(duplicates) if d != representative]
        ids = ([representative] if approve else []) + others
        label = f"keep {representative}, reject {len(others)} as its duplicates"
        seen = self.seen(ids)
        if shown is not None:  # the statements the Clusters pane displayed: a verdict only on that text
            for item in seen:
                if item.expected().get("statement") != shown.get(item.id):
                    raise ChangedSinceError(item.id, ["statement"])
        return self._engram_action("settle_duplicates", label, seen, fn)
