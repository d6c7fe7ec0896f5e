"""The Validity pane's rows: engrams with a validity window (and any brought in by hand) as of a moment, kept by
id, and the timeline beside one engram's window."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from plur_desk.domain.engram_view import EngramView
from plur_desk.domain.plur_rules.validity import Window, closes_at, opens_at
from plur_desk.domain.seen import Seen, seen_engram

Record = dict[str, object]
Records = Callable[[], Mapping[str, Record]]


@dataclass(frozen=True)
class ValidityRow:
    """One engram in the Validity pane: its window and state, and the engram as the row was built."""

    id: str
    statement: str
    scope: str
    domain: str
    state: str
    valid_from: str
    valid_until: str
    seen: Seen  # the engram as this row was built: what a window change expects on disk


VALIDITY_GROUPS = ("expiring_soon", "expired", "not_yet_valid", "current")


def validity_sort(row: ValidityRow) -> tuple[int, str]:
    return (VALIDITY_GROUPS.index(row.state), row.valid_until or "~")


class ValidityRows:
    """Engrams with a validity window (and any brought in by hand), as of a moment, kept by id."""

    def __init__(self, engrams: Records) -> None:
        self._engrams = engrams
        self._from: dict[str, Record] = {}
        self._windowed: dict[str, tuple[Record, Window]] = {}

    def sync(self, engram_ids: Iterable[str] = ()) -> None:
        engrams = self._engrams()
        dirty = set(engram_ids) | {i for i, v in engrams.items() if self._from.get(i) is not v}
        dirty |= {i for i in self._from if i not in engrams}
        for engram_id in dirty:
            engram = engrams.get(engram_id)
            self._windowed.pop(engram_id, None)
            self._from.pop(engram_id, None)
            if engram is not None:
                self._from[engram_id] = engram
                window = Window.of(engram)
                if window.present:
                    self._windowed[engram_id] = (engram, window)

    def rows(self, moment: datetime, extra: Iterable[str] = (), search: str = "") -> list[ValidityRow]:
        self.sync()
        picked = dict(self._windowed)
        for engram_id in extra:
            engram = self._from.get(engram_id)
            if engram is not None and engram_id not in picked:
                picked[engram_id] = (engram, Window.of(engram))
        words = search.lower().split()
        rows = []
        for engram_id, (engram, window) in picked.items():
            if words:
                text = f"{engram_id} {engram.get('statement', '')} {engram.get('scope', '')}".lower()
                if not all(w in text for w in words):
                    continue
            rows.append(
                ValidityRow(
                    engram_id,
                    str(engram.get("statement", "")),
                    str(engram.get("scope", "")),
                    str(engram.get("domain", "") or ""),
                    window.state(moment),
                    window.valid_from or "",
                    window.valid_until or "",
                    seen_engram(engram),
                )
            )
        rows.sort(key=validity_sort)
        return rows


WindowBar = tuple[str, datetime | None, datetime | None, bool]  # statement, opens, closes, the engram asked about


def window_bars(engrams: Iterable[Record], engram: Record, limit: int = 12) -> list[WindowBar]:
    """The Validity pane's timeline for one engram: its own window beside the windows of the active engrams in its
    domain, in store order (the first `limit`)."""
    shown = EngramView(engram)
    domain = shown.get("domain")
    bars: list[WindowBar] = []
    for record in engrams:
        view = EngramView(record)
        this = view.id == shown.id  # compare ids, not objects: a record may be handed out as a copy
        window = view.window
        if this or (domain and view.get("domain") == domain and window.present and view.status == "active"):
            bars.append((view.statement, opens_at(window.valid_from), closes_at(window.valid_until), this))
    return bars[:limit]
