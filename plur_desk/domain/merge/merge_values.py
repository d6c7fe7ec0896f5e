"""Building blocks of the symmetric three-way merge of PLUR records: canonical order, sets, keyed lists, counters.

Every helper gives the same answer whichever side is passed first: ties are broken by a total order on the
values themselves (their canonical JSON), never by argument position.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable

MISSING: object = type("Missing", (), {"__repr__": lambda self: "<missing>"})()


def canonical(value: object) -> str:
    """A total order over record values: JSON with sorted keys (key order is compared separately by `ordered`)."""
    if value is MISSING:
        return "\x00missing"
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr, separators=(",", ":"))


def ordered(value: object) -> str:
    """Like `canonical`, but key order counts: two dicts equal as mappings may still be written differently."""
    if value is MISSING:
        return "\x00missing"
    return json.dumps(value, ensure_ascii=False, default=repr, separators=(",", ":"))


def same(x: object, y: object) -> bool:
    return x is y or (x is not MISSING and y is not MISSING and ordered(x) == ordered(y))


def settled(base: dict[str, object] | None, a: dict[str, object], b: dict[str, object]) -> dict[str, object] | None:
    """The record when the three-way merge is trivial (both sides agree, or one side left the base as it was);
    None when both sides changed it differently and the record needs its own rules."""
    if same(a, b):
        return copy.deepcopy(a)
    if base is not None and same(a, base):
        return copy.deepcopy(b)
    if base is not None and same(b, base):
        return copy.deepcopy(a)
    return None


def pick_max(*values: object) -> object:
    """The greatest value by (canonical, ordered): the deterministic tie-breaker used everywhere."""
    return max(values, key=lambda v: (canonical(v), ordered(v)))


def three_way(base: object, a: object, b: object) -> tuple[bool, object]:
    """(decided, value): decided when at most one side changed (or both made the same change)."""
    if same(a, b):
        return True, a
    if same(a, base):
        return True, b
    if same(b, base):
        return True, a
    return False, MISSING


def max_string(*values: object) -> object:
    """The latest of ISO timestamps (strings compare as instants when written by toISOString)."""
    present = [v for v in values if isinstance(v, str)]
    if not present:
        return pick_max(*values)
    return max(present)


def max_value(x: object, y: object) -> object:
    """The larger of two numbers (or the later of two timestamps); a content order otherwise."""
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (x, y)):
        assert isinstance(x, (int, float)) and isinstance(y, (int, float))
        return pick_max(x, y) if x == y else max(x, y)
    if isinstance(x, str) or isinstance(y, str):
        return max_string(x, y)
    return pick_max(x, y)


def _number(value: object) -> float | int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return value


def add_counters(base: object, a: object, b: object) -> object:
    """base + (a - base) + (b - base), never below zero; missing counts as zero."""
    if a is MISSING and b is MISSING:
        return MISSING
    total = _number(a) + _number(b) - _number(base if base is not MISSING else 0)
    return max(0, total)


def merge_set(base: object, a: object, b: object, union: bool = False) -> object:
    """Lists as sets: what both kept, plus what either added (removals by either side stay removed unless `union`).

    Order: the base's order, then additions in canonical order, so both argument orders give the same list.
    """
    decided, value = three_way(base, a, b)
    if decided and not union:
        return copy.deepcopy(value)
    lists = [v if isinstance(v, list) else [] for v in (base, a, b)]
    base_l, a_l, b_l = lists
    a_keys = {canonical(x) for x in a_l}
    b_keys = {canonical(x) for x in b_l}
    base_keys = {canonical(x) for x in base_l}
    out: list[object] = []
    seen: set[str] = set()
    for item in base_l:
        key = canonical(item)
        keep = union or (key in a_keys and key in b_keys)
        if keep and key not in seen:
            out.append(copy.deepcopy(item))
            seen.add(key)
    added = {canonical(x): x for x in [*a_l, *b_l] if canonical(x) not in base_keys or union}
    for key in sorted(added):
        if key not in seen:
            out.append(copy.deepcopy(added[key]))
            seen.add(key)
    if not out and a is MISSING and b is MISSING:
        return MISSING
    return out


def merge_keyed(
    base: object,
    a: object,
    b: object,
    key_of: Callable[[object], str],
    merge_item: Callable[[object, object, object], object],
) -> object:
    """A list of records keyed by `key_of`: a three-way set on the keys, `merge_item` where both sides hold a key."""
    decided, value = three_way(base, a, b)
    if decided:
        return copy.deepcopy(value)
    maps = []
    for side in (base, a, b):
        items = side if isinstance(side, list) else []
        maps.append({key_of(item): item for item in items})
    base_m, a_m, b_m = maps
    out: list[object] = []

    def emit(key: str) -> None:
        in_a, in_b, in_base = key in a_m, key in b_m, key in base_m
        if in_a and in_b:
            out.append(merge_item(base_m.get(key, MISSING), a_m[key], b_m[key]))
            return
        present = a_m.get(key, MISSING) if in_a else b_m.get(key, MISSING)
        if not in_base or not same(present, base_m.get(key, MISSING)):
            out.append(copy.deepcopy(present))  # added on one side, or changed there and removed on the other

    for key in base_m:
        emit(key)
    for key in sorted((set(a_m) | set(b_m)) - set(base_m)):
        emit(key)
    return out


def merge_dict(
    base: object, a: object, b: object, leaf: Callable[[str, object, object, object], object], path: str = ""
) -> object:
    """Key-by-key three-way merge of mappings; `leaf(path, base, a, b)` decides where both sides changed a key."""
    decided, value = three_way(base, a, b)
    if decided:
        return copy.deepcopy(value)
    if not isinstance(a, dict) or not isinstance(b, dict):
        return leaf(path, base, a, b)
    base_d = base if isinstance(base, dict) else {}
    out: dict[str, object] = {}
    for key in key_order(base_d, a, b):
        sub = f"{path}.{key}" if path else key
        vo, va, vb = base_d.get(key, MISSING), a.get(key, MISSING), b.get(key, MISSING)
        done, v = three_way(vo, va, vb)
        if not done:
            v = (
                merge_dict(vo, va, vb, leaf, sub)
                if isinstance(va, dict) and isinstance(vb, dict)
                else leaf(sub, vo, va, vb)
            )
        if v is not MISSING:
            out[key] = copy.deepcopy(v)
    return out


def key_order(base: dict[str, object], a: dict[str, object], b: dict[str, object]) -> list[str]:
    """Keys in the base's order, then the keys new on either side in a symmetric order."""
    keys = list(base)
    seen = set(keys)
    first, second = (a, b) if ordered(list(a)) >= ordered(list(b)) else (b, a)
    for side in (first, second):
        for key in side:
            if key not in seen:
                keys.append(key)
                seen.add(key)
    return keys


def first_present(values: Iterable[object]) -> object:
    for value in values:
        if value is not MISSING:
            return value
    return MISSING
