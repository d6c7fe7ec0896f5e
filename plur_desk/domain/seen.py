"""What a reviewer saw when deciding: the fingerprint of each record as it was rendered on screen.

Every decision handed to the app layer carries one `Seen` per record it acts on. The write compares it with the
record on disk inside the lock and refuses ("changed since you looked") on any difference, so a verdict can only
ever apply to the text that was in front of the person.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from plur_desk.domain.review import engram_fingerprint, tension_fingerprint

Fingerprint = tuple[tuple[str, object], ...]


@dataclass(frozen=True)
class Seen:
    """One engram or tension as displayed. A tension also carries its two engrams as displayed (`sides`)."""

    kind: Literal["engram", "tension"]
    id: str
    fingerprint: Fingerprint
    sides: tuple[Seen, ...] = ()

    def expected(self) -> dict[str, object]:
        return dict(self.fingerprint)

    def moved(self, now: Mapping[str, object]) -> list[str]:
        """The fields whose value differs from what was shown (`now`: the record's fingerprint as it is)."""
        return [k for k, v in self.fingerprint if now.get(k) != v]

    def side(self, engram_id: str) -> Seen | None:
        return next((s for s in self.sides if s.id == engram_id), None)


def seen_engram(engram: dict[str, object]) -> Seen:
    return Seen("engram", str(engram.get("id")), tuple(engram_fingerprint(engram).items()))


def seen_tension(record: dict[str, object], sides: list[dict[str, object] | None]) -> Seen:
    shown = tuple(seen_engram(e) for e in sides if e is not None)
    return Seen("tension", str(record.get("id")), tuple(tension_fingerprint(record).items()), shown)
