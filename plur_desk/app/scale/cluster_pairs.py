"""The numeric side of the clusters: per-engram arrays, and the comparison of engrams that just arrived with every
engram, in numpy over the rows of the vector table (the matrix products free the interpreter lock).

Work is done per vector row, not per engram: engrams with one statement share a row, so a statement repeated by
hundreds of engrams is compared once. Candidates are found with float32 products (within EPS of the exact value)
and decided on `exact_similarity`, so the outcome never depends on how the products were blocked.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from plur_desk.app.scale.cluster_graph import GLOBAL, Item
from plur_desk.index.near_dupes import ByRow, exact_similarity, pair_pieces, products
from plur_desk.index.vector_matrix import VectorTable
from plur_desk.infra.jobs import checkpoint

EPS = 1e-3  # a float32 product of unit vectors is this close to the exact one (errors are ~1e-6 at 2,048 dims)
Ints = np.ndarray


class Slots:
    """One place per engram in a few arrays (its vector row, content_hash, agreement key, scope, role); a place
    that left is dead until the arrays are compacted."""

    def __init__(self) -> None:
        self.used = 0
        self.ids: list[str] = []
        self.vrow = np.zeros(0, dtype=np.int64)
        self.digest = np.zeros(0, dtype=np.int64)
        self.key = np.zeros(0, dtype=np.int64)
        self.scope = np.zeros(0, dtype=np.int64)
        self.glob = np.zeros(0, dtype=bool)
        self.draft = np.zeros(0, dtype=bool)
        self.live = np.zeros(0, dtype=bool)
        self._digests: dict[str, int] = {}
        self._scopes: dict[str, int] = {}

    _ARRAYS = ("vrow", "digest", "key", "scope", "glob", "draft", "live")

    def add(self, items: list[Item]) -> Ints:
        start, more = self.used, len(items)
        if start + more > len(self.live):  # grown by doubling: appending copies nothing
            size = max(2 * len(self.live), start + more, 64)
            for name in self._ARRAYS:
                old = getattr(self, name)
                grown = np.zeros(size, dtype=old.dtype)
                grown[:start] = old[:start]
                setattr(self, name, grown)
        end = start + more
        self.vrow[start:end] = [i.vrow for i in items]
        self.digest[start:end] = [self._digests.setdefault(i.digest, len(self._digests)) for i in items]
        self.key[start:end] = [i.key for i in items]
        self.scope[start:end] = [self._scopes.setdefault(i.scope, len(self._scopes)) for i in items]
        self.glob[start:end] = [i.scope == GLOBAL for i in items]
        self.draft[start:end] = [i.draft for i in items]
        self.live[start:end] = True
        for offset, item in enumerate(items):
            item.slot = start + offset
        self.ids.extend(i.id for i in items)
        self.used = end
        return np.arange(start, end, dtype=np.int64)

    def compact_if_sparse(self, items: dict[str, Item]) -> None:
        if self.used < 64 or int(self.live[: self.used].sum()) * 2 >= self.used:
            return
        keep = np.nonzero(self.live[: self.used])[0]
        for name in self._ARRAYS:
            array = getattr(self, name)
            array[: len(keep)] = array[keep]
            array[len(keep) : self.used] = 0
        self.ids = [self.ids[k] for k in keep.tolist()]
        for slot, ident in enumerate(self.ids):
            items[ident].slot = slot
        self.used = len(keep)


@dataclass
class Compared:
    similar: list[tuple[int, int, float]] = field(default_factory=list)  # (slot, slot, exact similarity)
    nearest: dict[int, tuple[float, str]] = field(default_factory=dict)  # vector row of drafts -> new nearest
    cleared: list[int] = field(default_factory=list)  # vector rows that no longer have one


@dataclass
class _Hits:
    left: list[Ints] = field(default_factory=list)
    right: list[Ints] = field(default_factory=list)
    value: list[np.ndarray] = field(default_factory=list)

    def add(self, left: Ints, right: Ints, value: np.ndarray) -> None:
        self.left.append(left)
        self.right.append(right)
        self.value.append(value)

    def arrays(self) -> tuple[Ints, Ints, np.ndarray]:
        if not self.left:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        return np.concatenate(self.left), np.concatenate(self.right), np.concatenate(self.value)


def compare(
    table: VectorTable,
    slots: Slots,
    new: Ints,
    rescan: set[int],
    best: dict[int, tuple[float, str]],
    threshold: float,
) -> Compared:
    """Similar pairs with at least one new engram (each pair once), and the nearest approved engram for the vector
    rows of drafts that need it: rows of new drafts and of drafts whose nearest left, computed afresh; every other
    row of drafts only compared with the new approved engrams."""
    n, count = slots.used, len(table)
    live, draft, vrow = slots.live[:n], slots.draft[:n], slots.vrow[:n]
    is_new = np.zeros(n, dtype=bool)
    is_new[new] = True
    new_drafts, new_approved = new[draft[new]], new[~draft[new]]
    old_drafts = live & draft & ~is_new

    def rows_of(mask: np.ndarray) -> np.ndarray:
        return np.bincount(vrow[mask], minlength=count) > 0

    drafts_on, approved_on, used_on, old_drafts_on = (
        rows_of(live & draft),
        rows_of(live & ~draft),
        rows_of(live),
        rows_of(old_drafts),
    )
    rows_d = np.unique(vrow[new_drafts])
    afresh = set(rows_d.tolist()) | {r for r in rescan if r < count and drafts_on[r]}
    if approved_on.any():  # rows of drafts that had nothing approved to compare with
        afresh |= set(np.nonzero(drafts_on)[0].tolist()) - set(best)
    fresh_rows = np.array(sorted(afresh - set(rows_d.tolist())), dtype=np.int64)
    recount = np.concatenate([rows_d, fresh_rows])
    rows_a = np.unique(vrow[new_approved]) if old_drafts.any() else np.zeros(0, dtype=np.int64)
    best_sim = np.full(count, -np.inf)
    for row, (sim, _a) in best.items():
        best_sim[row] = sim
    compare_on = drafts_on.copy()
    compare_on[recount] = False
    found = Compared(cleared=[r for r in best if r >= count or not drafts_on[r] or not approved_on.any()])
    similar_d, similar_a, near, against = _Hits(), _Hits(), _Hits(), _Hits()
    running = np.full(len(recount), -np.inf, dtype=np.float32)
    rows = np.concatenate([recount, rows_a])
    cut = threshold - EPS
    for first, start, block in products(table, rows, count):
        checkpoint()  # (each block a matrix product and a few passes over it: a computation's step, infra/turns.py)
        width, span = block.shape[1], slice(start, start + block.shape[0])
        k_d, k_r = np.clip([len(rows_d) - first, len(recount) - first], 0, width)
        if k_d:
            t, j = np.nonzero((block[:, :k_d] >= cut) & used_on[span, None])
            similar_d.add(rows[first + j], start + t, block[t, j])
        if k_r and approved_on.any():
            values = np.where(approved_on[span, None], block[:, :k_r], -np.inf)
            top = running[first : first + k_r] = np.maximum(running[first : first + k_r], values.max(axis=0))
            t, j = np.nonzero(values >= top - EPS)
            near.add(first + j, start + t, values[t, j])
        if k_r < width:
            rest = block[:, k_r:]
            t, j = np.nonzero((rest >= cut) & old_drafts_on[span, None])
            similar_a.add(rows[first + k_r + j], start + t, rest[t, j])
            t, j = np.nonzero((rest >= (best_sim[span] - EPS)[:, None]) & compare_on[span, None])
            against.add(rows[first + k_r + j], start + t, rest[t, j])
    by_row = ByRow(np.nonzero(live)[0], vrow, count)
    found.similar += _pairs(table, similar_d, slots, ByRow(new_drafts, vrow, count), by_row, threshold, is_new)
    drafts_left = ByRow(np.nonzero(old_drafts)[0], vrow, count)
    found.similar += _pairs(table, similar_a, slots, ByRow(new_approved, vrow, count), drafts_left, threshold, None)
    approved = ByRow(np.nonzero(live & ~draft)[0], vrow, count)
    _nearest_afresh(table, slots, near, recount, running, approved, found)
    found.cleared += [int(r) for r in recount if int(r) not in found.nearest]
    _nearest_against(table, slots, against, ByRow(new_approved, vrow, count), best, found)
    return found


def _pairs(
    table: VectorTable,
    hits: _Hits,
    slots: Slots,
    left: ByRow,
    right: ByRow,
    threshold: float,
    is_new: np.ndarray | None,
) -> list[tuple[int, int, float]]:
    """Engram pairs behind vector-row pairs at least `threshold` alike: different content_hash, equal agreement
    key, scopes that overlap; with `is_new`, a pair of two new drafts is taken from one side only."""
    rows_l, rows_r, _values = hits.arrays()
    if not len(rows_l):
        return []
    exact = exact_similarity(table, rows_l, rows_r)
    keep = exact >= threshold
    rows_l, rows_r, exact = rows_l[keep], rows_r[keep], exact[keep]
    out: list[tuple[int, int, float]] = []
    digest, key, scope, glob, draft = slots.digest, slots.key, slots.scope, slots.glob, slots.draft
    for ls, rs, k in pair_pieces(rows_l, rows_r, left, right):
        checkpoint()
        ok = (digest[ls] != digest[rs]) & (key[ls] == key[rs]) & ((scope[ls] == scope[rs]) | glob[ls] | glob[rs])
        if is_new is not None:
            ok &= ~(is_new[rs] & draft[rs] & (rs >= ls))
        out += zip(ls[ok].tolist(), rs[ok].tolist(), exact[k[ok]].tolist(), strict=True)
    return out


def _nearest_afresh(
    table: VectorTable, slots: Slots, near: _Hits, recount: Ints, running: np.ndarray, approved: ByRow, found: Compared
) -> None:
    """The most similar approved engram for each recounted row: the best exact value among the candidates within
    EPS of the best product, then the lowest id among the approved engrams with that value."""
    which, rows, values = near.arrays()
    keep = values >= running[which] - EPS
    which, rows = which[keep], rows[keep]
    exact = exact_similarity(table, recount[which], rows)
    best: dict[int, tuple[float, list[int]]] = {}
    for w, row, sim in zip(which.tolist(), rows.tolist(), exact.tolist(), strict=True):
        held = best.get(w)
        if held is None or sim > held[0]:
            best[w] = (sim, [row])
        elif sim == held[0]:
            held[1].append(row)
    ids = slots.ids
    for w, (sim, on) in best.items():
        found.nearest[int(recount[w])] = (sim, min(ids[s] for row in on for s in approved.of(row).tolist()))


def _nearest_against(
    table: VectorTable,
    slots: Slots,
    against: _Hits,
    new_approved: ByRow,
    best: dict[int, tuple[float, str]],
    found: Compared,
) -> None:
    """Rows of drafts not recounted: a new approved engram replaces their nearest when it is more similar (or as
    similar with a lower id)."""
    rows_a, rows, _values = against.arrays()
    if not len(rows):
        return
    exact = exact_similarity(table, rows_a, rows)
    ids = slots.ids
    for row_a, row, sim in zip(rows_a.tolist(), rows.tolist(), exact.tolist(), strict=True):
        ident = min(ids[s] for s in new_approved.of(row_a).tolist())
        held = found.nearest.get(row, best.get(row))
        if held is None or sim > held[0] or (sim == held[0] and ident < held[1]):
            found.nearest[row] = (sim, ident)
