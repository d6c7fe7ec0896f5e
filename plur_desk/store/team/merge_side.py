"""One version of a store list file for the merge: records by key, parsed lazily, with their exact bytes.

In PLUR's own layout every engram block starts with its id line, so a file is keyed by a byte scan and a record
is parsed only when the merge needs its value; most blocks of a big file are identical on every side and are
never parsed. Other layouts are read whole, entries PLUR quarantines kept aside verbatim.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from plur_desk.domain.merge.merge_values import canonical
from plur_desk.domain.plur_rules.engram_rules import engram_problems, tension_problems
from plur_desk.store.lists.list_file import ENGRAMS, Layout, ListFile
from plur_desk.store.lists.yaml_load import parse_item


class MergeError(Exception):
    """A side cannot be merged safely (unreadable YAML); the caller must leave the files as they are."""


class Records(Mapping[str, dict[str, object]]):
    """Records by key, parsed only when looked at: most blocks of a big file are identical on every side."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.parsed: dict[str, dict[str, object]] = {}
        self.raw: dict[str, bytes] = {}  # blocks not parsed yet
        self.order: list[str] = []

    def __getitem__(self, key: str) -> dict[str, object]:
        if key not in self.parsed:
            self.parsed[key] = _parse_block(self.raw[key], self.layout)
        return self.parsed[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.order)

    def __len__(self) -> int:
        return len(self.order)

    def __contains__(self, key: object) -> bool:
        return key in self.parsed or key in self.raw

    def put(self, key: str, value: dict[str, object]) -> None:
        if key not in self:
            self.order.append(key)
        self.parsed[key] = value


@dataclass
class Side:
    """One version of a file: records by key, their bytes when the file is in PLUR's own layout, opaque entries."""

    records: Records
    blocks: dict[str, bytes] = field(default_factory=dict)
    opaque: dict[str, bytes | None] = field(default_factory=dict)  # quarantined entries: canonical -> bytes
    opaque_values: dict[str, object] = field(default_factory=dict)
    moved: set[str] = field(default_factory=set)  # renamed here to follow a renumbering: placed as new records
    repeats: dict[str, str] = field(default_factory=dict)  # a later copy of a repeated id, by placeholder: its id

    @property
    def order(self) -> list[str]:
        return self.records.order


_ENGRAM_ID_LINE = re.compile(rb"  - id: ((?:ENG|ABS|META)-[A-Za-z0-9-]+)\n")


def _parse_block(raw: bytes, layout: Layout) -> dict[str, object]:
    value = parse_item(raw.decode("utf-8"), layout.item_indent)
    validate = engram_problems if layout is ENGRAMS else tension_problems
    if not isinstance(value, dict) or validate(value):
        raise MergeError(f"an entry of {layout.kind}.yaml changed on both sides and PLUR would quarantine it")
    return value


def _lazy_engrams(data: bytes) -> Side | None:
    """PLUR's own layout: blocks keyed by the id on their first line, nothing parsed yet (None: read it whole)."""
    snapshot = ListFile(Path("engrams.yaml"), ENGRAMS, data, None)
    snapshot._split()
    if snapshot.fatal is not None or not snapshot.regular:
        return None
    side = Side(Records(ENGRAMS))
    for entry in snapshot.entries:
        raw = snapshot.block(entry)
        match = _ENGRAM_ID_LINE.match(raw)
        key = match.group(1).decode() if match else None
        if key is None or key in side.records:
            return None  # an unusual entry somewhere: the careful path decides what is quarantined
        side.records.raw[key] = raw
        side.records.order.append(key)
        side.blocks[key] = raw
    return side


REPEAT = "\x00"  # a later copy of a repeated id is keyed `<id>\x00<n>` until merge_rekey gives it its id


def mint_identity(record: dict[str, object]) -> str:
    """Which mint a record is (ids are reused across machines, mint times are not)."""
    created = record.get("created_at")
    if isinstance(created, str):
        return created
    sources = record.get("sources")
    first = sources[0] if isinstance(sources, list) and sources and isinstance(sources[0], dict) else {}
    return f"{first.get('stored_at')}|{record.get('content_hash')}"


def engram_key(value: dict[str, object]) -> str | None:
    """An engram's merge key: its id."""
    ident = value.get("id")
    return ident if isinstance(ident, str) else None


def read_side(
    data: bytes, layout: Layout, key_of: Callable[[dict[str, object]], str | None], *, keep_repeats: bool = False
) -> Side:
    """One version of a file. `keep_repeats`: a later valid copy of a repeated key is kept as a record under a
    placeholder key (`side.repeats`) for store/merge_rekey to name as PLUR 0.21 does; else it is kept aside."""
    if not data.strip():
        return Side(Records(layout))
    if layout is ENGRAMS and key_of is engram_key:
        lazy = _lazy_engrams(data)
        if lazy is not None:
            return lazy
    side = Side(Records(layout))
    validate = engram_problems if layout is ENGRAMS else tension_problems
    snapshot = ListFile(Path(f"{layout.kind}.yaml"), layout, data, None)
    snapshot._validate = validate  # type: ignore[attr-defined]
    snapshot._cache = None  # type: ignore[attr-defined]
    snapshot._split()
    if snapshot.fatal is None:
        snapshot.parse_all()
    if snapshot.fatal is not None:
        raise MergeError(f"{layout.kind}.yaml cannot be read: {snapshot.fatal}")
    for entry in snapshot.entries:
        raw = snapshot.block(entry) if snapshot.regular else None
        value = entry.value
        key = key_of(value) if isinstance(value, dict) and entry.valid else None
        if keep_repeats and key is not None and key in side.records:
            placeholder = f"{key}{REPEAT}{len(side.repeats)}"
            side.repeats[placeholder] = key
            key = placeholder
        if key is None or key in side.records:
            ident = canonical(value) + (raw.decode("utf-8", "replace") if raw else "")
            side.opaque[ident] = raw
            side.opaque_values[ident] = value
            continue
        assert isinstance(value, dict)
        side.records.put(key, value)
        if raw is not None:
            side.blocks[key] = raw
    return side
