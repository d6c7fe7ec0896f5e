"""ChangeSet: what one action or reload changed, by id, so panes refresh only that (frozen: built once, read by all)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class ChangeSet:
    engrams: frozenset[str] = frozenset()
    tensions: frozenset[str] = frozenset()
    events: int = 0
    reloaded: bool = False
    warnings: tuple[str, ...] = ()
    message: str = ""

    def merge(self, other: ChangeSet) -> ChangeSet:
        """Both changes together (this one's message kept)."""
        return replace(
            self,
            engrams=self.engrams | other.engrams,
            tensions=self.tensions | other.tensions,
            events=self.events + other.events,
            reloaded=self.reloaded or other.reloaded,
            warnings=self.warnings + other.warnings,
        )

    def saying(self, message: str) -> ChangeSet:
        return replace(self, message=message)

    def warning(self, lines: Iterable[str]) -> ChangeSet:
        return replace(self, warnings=self.warnings + tuple(lines))
