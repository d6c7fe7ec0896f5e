"""Three-way merge of one tension record from two machines (PLUR-SYNC.md §5.3), symmetric in its two sides.

Records are matched by their engram pair. Status only moves forward (detected -> confirmed -> dismissed or
resolved); `status`, `resolved_by` and `resolved_at` move as one group. Two terminal decisions that differ
(dismissed vs resolved, two different winners) are human disagreements: the merge keeps the first decision made
(earliest `resolved_at`) and reports both; PLUR strips unknown keys from tension records, so the report cannot
travel on the record itself.
"""

from __future__ import annotations

import copy

from plur_desk.domain.merge.merge_values import MISSING, canonical, key_order, pick_max, settled, three_way

STATUS_GROUP = ("status", "resolved_by", "resolved_at")
DETECTION = ("id", "detected_at")
STATUS_STEP = {"detected": 0, "confirmed": 1, "dismissed": 2, "resolved": 2}
TERMINAL = ("dismissed", "resolved")


def pair_key(record: dict[str, object]) -> str | None:
    a, b = record.get("engram_a"), record.get("engram_b")
    if not isinstance(a, str) or not isinstance(b, str):
        return None
    return ":".join(sorted((a, b)))


def detection_order(record: dict[str, object]) -> tuple[str, str, str]:
    """The earlier detection of a pair is kept when both machines recorded it."""
    detected = record.get("detected_at")
    ident = record.get("id")
    return (detected if isinstance(detected, str) else "~", ident if isinstance(ident, str) else "~", canonical(record))


def _status(group: dict[str, object]) -> str:
    status = group.get("status", "detected")
    return status if isinstance(status, str) else "detected"


def _decision(group: dict[str, object]) -> dict[str, object]:
    return {"status": _status(group), "resolved_by": group.get("resolved_by")}


def _first_decision(ga: dict[str, object], gb: dict[str, object]) -> dict[str, object]:
    def order(g: dict[str, object]) -> tuple[str, str]:
        at = g.get("resolved_at")
        return (at if isinstance(at, str) else "~", canonical(g))

    return ga if order(ga) <= order(gb) else gb


def merge_status(
    base: dict[str, object], ga: dict[str, object], gb: dict[str, object], label: str
) -> tuple[dict[str, object], list[dict[str, object]]]:
    decided, value = three_way(base, ga, gb)
    if decided:
        assert isinstance(value, dict)
        return value, []
    sa, sb = _status(ga), _status(gb)
    if STATUS_STEP.get(sa, 0) != STATUS_STEP.get(sb, 0):
        return (ga if STATUS_STEP.get(sa, 0) > STATUS_STEP.get(sb, 0) else gb), []
    if sa not in TERMINAL or sb not in TERMINAL:
        return (ga if canonical(ga) >= canonical(gb) else gb), []
    if sa != sb:
        kept = ga if sa == "resolved" else gb  # a resolution retired an engram already; dismissing undoes nothing
        kind = "dismissed-vs-resolved"
    elif ga.get("resolved_by") != gb.get("resolved_by"):
        kept = _first_decision(ga, gb)
        kind = "two-winners"
    else:
        return _first_decision(ga, gb), []
    sides = sorted([_decision(ga), _decision(gb)], key=canonical)
    return kept, [{"kind": kind, "record": label, "field": "status", "values": sides, "kept": _decision(kept)}]


def merge_tension(
    base: dict[str, object] | None, a: dict[str, object], b: dict[str, object]
) -> tuple[dict[str, object], list[dict[str, object]]]:
    """The merged record (the pair's earlier detection keeps its id) and any disagreement between the sides."""
    trivial = settled(base, a, b)
    if trivial is not None:
        return trivial, []
    first, second = (a, b) if detection_order(a) <= detection_order(b) else (b, a)
    base_d = base or {}
    label = str((base or first).get("id"))
    pick = {k: v for k, v in base_d.items()} if base is not None else {}
    group_of = {side_key: {k: side[k] for k in STATUS_GROUP if k in side} for side_key, side in (("a", a), ("b", b))}
    base_group = {k: base_d[k] for k in STATUS_GROUP if k in base_d} if base is not None else MISSING
    status, flags = merge_status(base_group, group_of["a"], group_of["b"], label)  # type: ignore[arg-type]
    out: dict[str, object] = {}
    for key in key_order(base_d, first, second):
        if key in STATUS_GROUP:
            if key in status:
                out[key] = copy.deepcopy(status[key])
            continue
        vo, va, vb = pick.get(key, MISSING), a.get(key, MISSING), b.get(key, MISSING)
        if key in DETECTION and base is None:
            value = first.get(key, MISSING)
        else:
            decided, value = three_way(vo, va, vb)
            if not decided:
                value = pick_max(va, vb)
        if value is not MISSING:
            out[key] = copy.deepcopy(value)
    for key in STATUS_GROUP:  # a group key neither side wrote before (resolved_by on a record that lacked it)
        if key in status and key not in out:
            out[key] = copy.deepcopy(status[key])
    return out, flags
