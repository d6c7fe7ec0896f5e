"""Three-way merge of whole `engrams.yaml` / `tensions.yaml` files, written byte for byte as PLUR's js-yaml would.

Records are matched by id (engrams) or engram pair (tensions) and merged by the domain rules. Two records
minted under one id on two machines (PLUR's ids are per-machine daily sequences) are a collision, not an edit:
the one not yet on the shared remote gets the next free id of that day, with every reference on its side
rewritten, and the mapping is reported. Entries PLUR quarantines are kept verbatim. Records either side left
untouched keep their exact bytes; merged ones are re-emitted by the js-yaml port. Output order: the base's
order, then new records by (created_at, id), then quarantined entries, the same whichever side is "ours".
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from plur_desk.domain.merge.merge_engram import merge_engram, rank, same_content
from plur_desk.domain.merge.merge_tension import detection_order, merge_tension, pair_key
from plur_desk.domain.merge.merge_values import canonical, ordered, same
from plur_desk.domain.plur_rules.engram_rules import engram_problems, tension_problems
from plur_desk.store.lists.list_file import ENGRAMS, TENSIONS, Layout
from plur_desk.store.lists.yaml_dump import dump_engram_item, dump_tension_item
from plur_desk.store.team.merge_rekey import follow_rekeys, restore
from plur_desk.store.team.merge_side import MergeError, Side, engram_key, read_side
from plur_desk.store.team.merge_side import mint_identity as _identity

_SUFFIX = re.compile(r"^(.*-)(\d+)\Z")


@dataclass
class FileMerge:
    data: bytes
    renumbered: list[dict[str, str]] = field(default_factory=list)  # {old, new, statement, content_hash}
    disagreements: list[dict[str, object]] = field(default_factory=list)


# -- renumbering ----------------------------------------------------------------------------------------------


def _replace_refs(value: object, old: str, new: str) -> object:
    if isinstance(value, str):
        return new if value == old else value
    if isinstance(value, list):
        return [_replace_refs(v, old, new) for v in value]
    if isinstance(value, dict):
        return {
            k: (v if k in ("statement", "rationale", "summary") else _replace_refs(v, old, new))
            for k, v in value.items()
        }
    return value


def _rename(side: Side, old: str, new: str) -> None:
    """`old` becomes `new` on one side: the record itself and every reference to it in that side's records."""
    records = side.records
    needle = old.encode()
    for index, key in enumerate(list(records.order)):
        raw = records.raw.get(key)
        if raw is not None and needle not in raw and key != old:
            continue  # cannot mention the old id: stays unparsed
        value = records[key]
        renamed = _replace_refs(value, old, new)
        assert isinstance(renamed, dict)
        target = new if key == old else key
        if target != key or not same(renamed, value):
            records.raw.pop(key, None)
            records.parsed.pop(key, None)
            side.blocks.pop(key, None)
            records.parsed[target] = renamed
            records.order[index] = target


def _next_id(old: str, taken: set[str]) -> str:
    match = _SUFFIX.match(old)
    prefix, width = (match.group(1), len(match.group(2))) if match else (old + "-", 3)
    highest = 0
    for ident in taken:
        m = _SUFFIX.match(ident)
        if m and m.group(1) == prefix:
            highest = max(highest, int(m.group(2)))
    return f"{prefix}{highest + 1:0{max(3, width)}d}"


def _renumber_collisions(
    base: Side, a: Side, b: Side, pushed: list[Side], same_record: Callable[..., bool]
) -> list[dict[str, str]]:
    """Records added on both sides under one id with different content: move the unpushed one to a free id."""
    taken = set(base.records) | set(a.records) | set(b.records)
    for side in pushed:
        taken |= set(side.records)
    mapping = []
    for ident in sorted((set(a.records) & set(b.records)) - set(base.records)):
        if ident in a.blocks and a.blocks[ident] == b.blocks.get(ident):
            continue
        ra, rb = a.records[ident], b.records[ident]
        if same_record(ra, rb):
            continue
        remote = next((side.records[ident] for side in pushed if ident in side.records), None)
        a_pushed = remote is not None and same_record(remote, ra)
        b_pushed = remote is not None and same_record(remote, rb)
        if a_pushed != b_pushed:
            move, record = (b, rb) if a_pushed else (a, ra)
        else:  # neither (or both) on the remote: move the later mint, decided by content
            move, record = (a, ra) if _mint_order(ra) > _mint_order(rb) else (b, rb)
        new = _next_id(ident, taken)
        taken.add(new)
        _rename(move, ident, new)
        mapping.append(
            {
                "old": ident,
                "new": new,
                "statement": str(record.get("statement", "")),
                "content_hash": str(record.get("content_hash", "")),
            }
        )
    return mapping


def _renames(base: Side, side: Side) -> list[tuple[str, str]]:
    """Ids this side already moved (an earlier merge renumbered a collision): the base's record now lives under a
    new id here, and another record holds the old one. Seen when a rebase replays several local commits."""
    found: list[tuple[str, str]] = []
    fresh: dict[str, str] | None = None
    for ident in base.order:
        if ident not in side.records or side.blocks.get(ident, b"") == base.blocks.get(ident):
            continue
        if _identity(side.records[ident]) == _identity(base.records[ident]):
            continue  # the same record, edited
        if fresh is None:
            fresh = {_identity(side.records[k]): k for k in side.order if k not in base.records}
        moved_to = fresh.get(_identity(base.records[ident]))
        if moved_to is not None:
            found.append((ident, moved_to))
    return found


def _follow_renames(base: Side, a: Side, b: Side) -> None:
    """Apply one side's earlier renumbering to the base and the other side, so records meet their own history."""
    moves = sorted(set(_renames(base, a)) | set(_renames(base, b)))
    for old, new in moves:
        for side in (base, a, b):
            if old in side.records and new not in side.records:
                _rename(side, old, new)
                side.moved.add(new)  # ordered like the new record it is on the side that renumbered it


def _mint_order(record: dict[str, object]) -> tuple[str, str, str]:
    created = record.get("created_at")
    return (created if isinstance(created, str) else "", canonical(record), ordered(record))


# -- emitting -------------------------------------------------------------------------------------------------


def _block_for(
    value: dict[str, object], sides: tuple[Side, ...], key: str, dump: Callable[[dict[str, object]], str]
) -> bytes:
    for side in sides:
        if key in side.blocks and same(side.records.get(key), value):
            return side.blocks[key]
    return dump(value).encode("utf-8")


def _opaque(base: Side, a: Side, b: Side, layout: Layout) -> list[bytes]:
    keep = [k for k in base.opaque if k in a.opaque and k in b.opaque]
    keep += sorted((set(a.opaque) | set(b.opaque)) - set(base.opaque))
    blocks = []
    for ident in keep:
        raw = a.opaque.get(ident) or b.opaque.get(ident)
        if raw is None:
            raise MergeError(
                f"{layout.kind}.yaml holds an entry PLUR quarantines in a layout that cannot be kept byte for byte"
            )
        blocks.append(raw)
    return blocks


def _assemble(layout: Layout, blocks: list[bytes]) -> bytes:
    if not blocks:
        return layout.empty
    return layout.header + b"".join(b if b.endswith(b"\n") else b + b"\n" for b in blocks)


def _unchanged_bytes(key: str, base: Side, a: Side, b: Side) -> bytes | None:
    """The result's bytes when the blocks alone decide it (both sides equal, or one side untouched)."""
    ba, bb, bo = a.blocks.get(key), b.blocks.get(key), base.blocks.get(key)
    if ba is None or bb is None:
        return None
    if ba in (bb, bo):
        return bb
    if bb == bo:
        return ba
    return None


def _merge_records(
    base: Side,
    a: Side,
    b: Side,
    merge: Callable[..., tuple[dict[str, object], list[dict[str, object]]]],
    new_order: Callable[[dict[str, object]], tuple[str, ...]],
    may_delete: Callable[[dict[str, object]], bool] = lambda _r: True,
) -> tuple[dict[str, dict[str, object] | bytes], list[str], list[dict[str, object]]]:
    merged: dict[str, dict[str, object] | bytes] = {}
    flags: list[dict[str, object]] = []
    for key in [*base.order, *sorted((set(a.records) | set(b.records)) - set(base.records))]:
        raw = _unchanged_bytes(key, base, a, b)
        if raw is not None:
            merged[key] = raw
            continue
        in_a, in_b, in_base = key in a.records, key in b.records, key in base.records
        if not in_a and not in_b:
            continue  # deleted on both sides
        if not in_a or not in_b:
            side = a if in_a else b
            if in_base and side.blocks.get(key) is not None and side.blocks.get(key) == base.blocks.get(key):
                if may_delete(base.records[key]):
                    continue  # deleted on one side, untouched on the other
                merged[key] = side.blocks[key]
                continue
            present, vo = side.records[key], base.records.get(key)
            if vo is not None and same(present, vo) and may_delete(vo):
                continue
            if vo is not None and not same(present, vo):
                flags.append({"kind": "deleted-vs-edited", "record": key, "field": "", "values": [], "kept": "edited"})
            merged[key] = copy.deepcopy(present)
            continue
        value, found = merge(base.records.get(key), a.records[key], b.records[key])
        merged[key] = value
        flags.extend({"record": key, **f} if "record" not in f else f for f in found)

    def order_of(key: str) -> tuple[str, ...]:
        value = merged[key]
        if isinstance(value, bytes):
            value = a.records[key] if key in a.records else b.records[key]
        return new_order(value)

    fresh = sorted((k for k in merged if k not in base.records or k in base.moved), key=order_of)
    order = [k for k in base.order if k in merged and k not in base.moved] + fresh
    return merged, order, flags


def _safe_record(
    value: dict[str, object],
    va: dict[str, object] | None,
    vb: dict[str, object] | None,
    problems: Callable[..., list[str]],
) -> dict[str, object]:
    """Never emit an entry PLUR would quarantine: fall back to the later side's record whole."""
    if not problems(value):
        return value
    sides = [v for v in (va, vb) if v is not None and not problems(v)]
    return copy.deepcopy(max(sides, key=rank)) if sides else value


def _pushed_sides(
    pushed: tuple[bytes, ...], layout: Layout, key_of: Callable[[dict[str, object]], str | None]
) -> list[Side]:
    sides = []
    for data in pushed:
        try:
            sides.append(read_side(data, layout, key_of))
        except MergeError:
            continue  # an unreadable remote version only means fewer ids count as pushed
    return sides


def _materialized(
    merged: dict[str, dict[str, object] | bytes], sides: tuple[Side, ...]
) -> dict[str, dict[str, object]]:
    """Values for every merged record (blocks taken whole are looked up on the side they came from)."""
    out: dict[str, dict[str, object]] = {}
    for key, value in merged.items():
        if isinstance(value, bytes):
            side = next(s for s in sides if s.blocks.get(key) == value)
            value = copy.deepcopy(side.records[key])
        out[key] = value
    return out


def merge_engram_files(
    base: bytes, a: bytes, b: bytes, pushed: tuple[bytes, ...] = (), *, theirs_order: bool = False
) -> FileMerge:
    """Merge three versions of engrams.yaml; `pushed` are the remote-tracking versions (which ids are shared).

    When one side is the base, the other side is the result byte for byte, unless it lost active records (a
    teammate's scope strip): those are never deleted here. `theirs_order` lays the result out in `b`'s order
    (re-applying local records over a new commit); git's driver keeps the default, which is symmetric."""
    if a == b:
        return FileMerge(a)
    so, sa, sb = (read_side(x, ENGRAMS, engram_key, keep_repeats=True) for x in (base, a, b))
    restored = follow_rekeys(so, sa, sb)  # a repeated id's later copies named as 0.21 reads them, on every side
    for same_as_base, other, data in ((a == base, sb, b), (b == base, sa, a)):
        if same_as_base and not _drops_active(so, other):
            return FileMerge(data)
    remote = _pushed_sides(pushed, ENGRAMS, engram_key)
    _follow_renames(so, sa, sb)
    renumbered = _renumber_collisions(so, sa, sb, remote, same_content)
    merged, order, flags = _merge_records(so, sa, sb, merge_engram, _engram_new_order, _deletable)
    if theirs_order:
        order = _like(order, sb.order)
    blocks = []
    for key in order:
        chosen = merged[key]
        if key in restored:
            blocks.append(restore(chosen, (sa, sb, so), key, restored[key]))
            continue
        if isinstance(chosen, bytes):
            blocks.append(chosen)
            continue
        value = _safe_record(chosen, sa.records.get(key), sb.records.get(key), engram_problems)
        blocks.append(_block_for(value, (sa, sb, so), key, dump_engram_item))
    blocks += _opaque(so, sa, sb, ENGRAMS)
    return FileMerge(_assemble(ENGRAMS, blocks), renumbered, flags)


def _like(order: list[str], preferred: list[str]) -> list[str]:
    """`order`'s keys laid out as in `preferred`, the others after them in their own order."""
    present = set(order)
    first = [k for k in preferred if k in present]
    placed = set(first)
    return first + [k for k in order if k not in placed]


def _drops_active(base: Side, other: Side) -> bool:
    return any(k not in other.records and not _deletable(base.records[k]) for k in base.order)


def _deletable(record: dict[str, object]) -> bool:
    """PLUR deletes rows only by `compact` (retired ones) and an outbox flush. Any other disappearance is a
    teammate's scope strip (their private records leave their commits, not the store): the record is kept."""
    data = record.get("structured_data")
    return record.get("status") == "retired" or (isinstance(data, dict) and "_outbox" in data)


def _engram_new_order(value: dict[str, object]) -> tuple[str, str]:
    created = value.get("created_at")
    return (created if isinstance(created, str) else "", str(value.get("id")))


def rewrite_tension_refs(data: bytes, mapping: list[dict[str, str]]) -> bytes:
    """Point tensions recorded on the renumbered side at the new ids (matched by the statement snapshot)."""
    if not mapping or not data.strip():
        return data
    side = read_side(data, TENSIONS, pair_key)
    changed = False
    out: list[bytes] = []
    for key in side.order:
        record = copy.deepcopy(side.records[key])
        for end in ("a", "b"):
            for move in mapping:
                if record.get(f"engram_{end}") == move["old"] and record.get(f"statement_{end}") == move["statement"]:
                    record[f"engram_{end}"] = move["new"]
                    if record.get("resolved_by") == move["old"]:
                        record["resolved_by"] = move["new"]
                    changed = True
        out.append(
            dump_tension_item(record).encode()
            if not same(record, side.records[key])
            else side.blocks.get(key) or dump_tension_item(record).encode()
        )
    if not changed:
        return data
    out += [raw or b"" for raw in side.opaque.values()]
    return _assemble(TENSIONS, out)


def merge_tension_files(
    base: bytes, a: bytes, b: bytes, pushed: tuple[bytes, ...] = (), *, theirs_order: bool = False
) -> FileMerge:
    """Merge three versions of tensions.yaml, records keyed by engram pair; ids clashing across pairs renumbered."""
    if a == b:
        return FileMerge(a)
    if a == base:
        return FileMerge(b)
    if b == base:
        return FileMerge(a)
    so, sa, sb = (read_side(x, TENSIONS, pair_key) for x in (base, a, b))
    raw_merged, order, flags = _merge_records(so, sa, sb, merge_tension, detection_order)
    merged = _materialized(raw_merged, (sa, sb, so))
    remote_ids = {str(s.records[k].get("id")): k for s in _pushed_sides(pushed, TENSIONS, pair_key) for k in s.records}
    renumbered = _renumber_tension_ids(merged, order, so, remote_ids)
    if theirs_order:
        order = _like(order, sb.order)
    blocks = []
    for key in order:
        value = _safe_record(merged[key], sa.records.get(key), sb.records.get(key), tension_problems)
        blocks.append(_block_for(value, (sa, sb, so), key, dump_tension_item))
    blocks += _opaque(so, sa, sb, TENSIONS)
    return FileMerge(_assemble(TENSIONS, blocks), renumbered, flags)


def _renumber_tension_ids(
    merged: dict[str, dict[str, object]], order: list[str], base: Side, remote_ids: dict[str, str]
) -> list[dict[str, str]]:
    """Two different pairs under one T- id (both machines counted from 001 that day): renumber the unpushed one."""
    by_id: dict[str, list[str]] = {}
    for key in order:
        by_id.setdefault(str(merged[key].get("id")), []).append(key)
    taken = set(by_id) | set(remote_ids)
    mapping = []
    for ident in sorted(by_id):
        pairs = by_id[ident]
        if len(pairs) < 2:
            continue
        keep = remote_ids.get(ident)
        if keep not in pairs:
            based = [p for p in pairs if p in base.records and base.records[p].get("id") == ident]
            keep = based[0] if based else min(pairs, key=lambda p: detection_order(merged[p]))
        for pair in sorted(p for p in pairs if p != keep):
            new = _next_id(ident, taken)
            taken.add(new)
            merged[pair]["id"] = new
            mapping.append({"old": ident, "new": new, "statement": pair, "content_hash": ""})
    return mapping


__all__ = [
    "FileMerge",
    "MergeError",
    "engram_key",
    "merge_engram_files",
    "merge_tension_files",
    "read_side",
    "rewrite_tension_refs",
]
