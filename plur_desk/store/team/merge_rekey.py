"""Repeated engram ids in the three-way merge, read as PLUR 0.21 reads them and matched across the three sides.

0.21 keeps both copies of a repeated id: the first keeps it, a later different copy is read (and on 0.21's next
write stored) as `<id>-D<8 hex>` with an `engram_rekeyed` event (domain/plur_rules/rekey.py); plur_desk writes that id onto a
copy the reviewer decides on (store/lists/entry_lookup.py). So one clone may hold a later copy under its new id while
another still holds it under the shared one, edited or not. Merged as they are, the old copy comes back as a
second record (0.21 then renames it again: one engram twice) and the two sides' changes never meet.

Every later copy is named here before the merge, the same on all three sides: the `-D` id a side already holds that
copy under (matched by its mint, as renumbered records are), else the id 0.21 gives the base's copy, else the id
0.21 gives this side's copy. An exact repeat is read once, as 0.21 reads it. A name no side has written is put
back to the shared id on output: the merge renames nothing itself (0.21 does, with its event). Tensions naming the
shared id are left alone, as 0.21's rekey leaves them: the shared id still names the first copy.
"""

from __future__ import annotations

import copy

from plur_desk.domain.plur_rules.rekey import ID_FORM, fresh_duplicate_id, resolve_duplicate_ids
from plur_desk.store.lists.yaml_dump import dump_engram_item
from plur_desk.store.team.merge_side import Side, mint_identity


def _renamed_copies(sides: tuple[Side, ...], repeated: set[str]) -> dict[tuple[str, str], str]:
    """(shared id, mint) -> the `-D` id a side holds that copy under (renamed by 0.21 or a plur_desk decision)."""
    held: dict[tuple[str, str], str] = {}
    for side in sides:
        for key in side.order:
            if key in side.repeats or not ID_FORM.match(key):
                continue
            shared = next((s for s in repeated if key.startswith(f"{s}-D")), None)
            if shared is not None:
                at = (shared, mint_identity(side.records[key]))
                held[at] = min(held.get(at, key), key)  # two clones may have renamed it apart: either side's order
    return held


def _put(side: Side, placeholder: str, name: str | None) -> None:
    """The copy read under `placeholder` becomes record `name` (None: dropped, an exact repeat)."""
    value = side.records[placeholder]
    index = side.records.order.index(placeholder)
    side.records.parsed.pop(placeholder, None)
    side.records.raw.pop(placeholder, None)
    side.blocks.pop(placeholder, None)
    if name is None:
        del side.records.order[index]
        return
    renamed = {**value, "id": name}
    side.records.parsed[name] = renamed
    side.records.order[index] = name
    side.blocks[name] = dump_engram_item(renamed).encode("utf-8")  # bytes as a side holding it renamed has them


def _name_side(
    side: Side, known: dict[tuple[str, str], str], named: dict[tuple[str, str], str]
) -> list[tuple[str, str]]:
    """Name this side's later copies; returns (name, shared id) for each, and records the base's in `named`."""
    groups: dict[str, list[str]] = {}
    for key in side.order:
        groups.setdefault(side.repeats.get(key, key), []).append(key)
    out = []
    for shared, keys in groups.items():
        if len(keys) < 2:
            continue
        others = set(side.records) - set(keys)
        resolved = resolve_duplicate_ids([(shared, side.records[k]) for k in keys], others)
        mints = [mint_identity(side.records[k]) for k in keys]
        for r in resolved[1:]:
            placeholder = keys[r.index]
            if r.exact_duplicate_of is not None:
                _put(side, placeholder, None)
                continue
            mint = mints[r.index]
            name = known.get((shared, mint)) if mints.count(mint) == 1 else None
            if name is None or name in side.records:
                name = r.engram_id if r.engram_id not in side.records else None
            name = name or fresh_duplicate_id(shared, side.records[placeholder], side.records)
            named.setdefault((shared, mint), name)
            _put(side, placeholder, name)
            out.append((name, shared))
    return out


def follow_rekeys(base: Side, a: Side, b: Side) -> dict[str, str]:
    """Name every later copy of a repeated id on all three sides (see the module text). Returns {name: shared id}
    for the names no side holds: their merged record is written back under the shared id (`restore`)."""
    sides = (base, a, b)
    repeated = {shared for side in sides for shared in side.repeats.values()}
    if not repeated:
        return {}
    held = _renamed_copies(sides, repeated)
    from_base: dict[tuple[str, str], str] = {}
    names = _name_side(base, held, from_base)
    known = {**from_base, **held}
    for side in (a, b):
        names += _name_side(side, known, {})
    written = set(held.values())
    return {name: shared for name, shared in names if name not in written}


def restore(chosen: dict[str, object] | bytes, sides: tuple[Side, ...], key: str, shared: str) -> bytes:
    """The merged record of a copy no side renamed, under its shared id again."""
    if isinstance(chosen, bytes):
        side = next(s for s in sides if s.blocks.get(key) == chosen)
        chosen = side.records[key]
    value = copy.deepcopy(chosen)
    value["id"] = shared
    return dump_engram_item(value).encode("utf-8")
