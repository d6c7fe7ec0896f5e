"""The graph behind near-duplicate clusters, kept by part: which engrams are linked, the connected parts of the
links, and how a part is cut into clusters. Only the parts that hold a changed engram are cut again.

Links (the definition; `ClusterIndex` finds the candidates): two engrams may link when either is a draft, their
scopes overlap (PLUR's rule: equal, or either global) and the reviewer has not kept them apart. They link by
content when their content_hash is equal (weight 1.0), or as similar when their hashes differ, their vectors are
at least the threshold alike, their agreement keys are equal and no detail keeps them apart (weight: the
similarity, at most 1.0). Same-content links are not stored pair by pair (a statement repeated by hundreds of
engrams would be tens of thousands of pairs): they follow from each content_hash's members, which are grouped
into the connected parts those links make.

Cutting a part: each same-content part starts as one cluster (equal content cannot conflict); similar links then
join clusters strongest first (ties: by the pair's ids), never when a detail conflict separates them, so a chain
cannot carry "Node 20" into a cluster with "Node 22". A cluster is shown when it has two members and a draft.
Everything here is a function of the links, never of the order engrams arrived in.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from plur_desk.domain.similar.near_duplicate import detail_conflict, scopes_overlap
from plur_desk.infra.jobs import checkpoint

GLOBAL = "global"
LINK_CHECKS = 20  # a join compares at most this many members of each side for a detail conflict


@dataclass(frozen=True)
class Member:
    id: str
    statement: str
    scope: str
    draft: bool
    joined_by: str  # "representative", "content_hash", or "similar to ENG-…"
    similarity: float


@dataclass(frozen=True)
class Cluster:
    representative: str
    members: tuple[Member, ...]
    approved: tuple[str, ...]  # members that are already approved engrams

    @property
    def drafts(self) -> list[str]:
        return [m.id for m in self.members if m.draft]

    @property
    def size(self) -> int:
        return len(self.members)


@dataclass(slots=True)
class Item:
    id: str
    statement: str
    scope: str
    digest: str
    draft: bool
    created: str
    seen: tuple[object, ...]  # what it was made from: a changed engram has a different tuple
    slot: int = -1  # its place in the index's arrays
    vrow: int = -1  # the vector table's row of its statement
    key: int = -1  # the index's number for the agreement key of its statement


def pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


class Graph:
    """Links, parts and their clusters for the items of one index (the same dict object)."""

    def __init__(self, items: dict[str, Item]) -> None:
        self.items = items
        self.similar: dict[str, dict[str, float]] = {}  # similar links, both ways
        self.apart: dict[str, set[str]] = {}  # pairs the reviewer split, both ways
        self.by_digest: dict[str, str | set[str]] = {}  # content_hash -> its one id, or its ids (a set per hash: 11 MB)
        self._same: dict[str, tuple[str, ...]] = {}  # id -> its same-content part (sorted ids), when it has one
        self._part_of: dict[str, int] = {}
        self._parts: dict[int, tuple[list[str], list[Cluster]]] = {}  # part number -> (ids, its clusters)
        self._numbers = 0
        self._digests: set[str] = set()  # whose same-content parts must be found again
        self._dirty: set[str] = set()  # whose part must be cut again
        self._sorted: list[Cluster] | None = None

    # -- changes ---------------------------------------------------------------------------------------------

    def join(self, item: Item) -> None:
        held = self.by_digest.get(item.digest)
        if held is None:
            self.by_digest[item.digest] = item.id
        elif isinstance(held, str):
            self.by_digest[item.digest] = {held, item.id}
        else:
            held.add(item.id)
        self._digests.add(item.digest)
        self._dirty.add(item.id)

    def leave(self, item: Item) -> None:
        held = self.by_digest.get(item.digest)
        if held == item.id:
            del self.by_digest[item.digest]
        elif isinstance(held, set):
            held.discard(item.id)
            if len(held) == 1:
                self.by_digest[item.digest] = next(iter(held))
        self._digests.add(item.digest)
        self._dirty.add(item.id)
        for other in self.similar.pop(item.id, {}):
            self._unlink_one(other, item.id)

    def link(self, a: str, b: str, similarity: float) -> None:
        self.similar.setdefault(a, {})[b] = similarity
        self.similar.setdefault(b, {})[a] = similarity
        self._dirty.update((a, b))

    def keep_apart(self, ident: str, others: list[str]) -> None:
        for other in others:
            self.apart.setdefault(ident, set()).add(other)
            self.apart.setdefault(other, set()).add(ident)
            if other in self.similar.get(ident, {}):
                self._unlink_one(ident, other)
                self._unlink_one(other, ident)
            for end in (ident, other):
                if end in self.items:
                    self._digests.add(self.items[end].digest)
                self._dirty.add(end)

    def is_apart(self, a: str, b: str) -> bool:
        return b in self.apart.get(a, ())

    def _unlink_one(self, ident: str, other: str) -> None:
        links = self.similar.get(ident)
        if links is not None:
            links.pop(other, None)
            if not links:
                del self.similar[ident]
        self._dirty.add(ident)

    # -- settling --------------------------------------------------------------------------------------------

    def settle(self, *, for_reviewer: bool = False) -> None:
        """Find the changed same-content parts again, then cut each part holding a changed engram again.
        `for_reviewer`: the reviewer is waiting for it (a split), so it never steps aside for their decisions."""
        for digest in self._digests:
            held = self.by_digest.get(digest, ())
            members = [self.items[i] for i in ((held,) if isinstance(held, str) else held)]
            for item in members:
                self._same.pop(item.id, None)
                self._dirty.add(item.id)
            for part in self._same_content_parts(members):
                for ident in part:
                    self._same[ident] = part
        self._digests.clear()
        todo = set(self._dirty)
        for number in {self._part_of[i] for i in self._dirty if i in self._part_of}:
            ids, _ = self._parts.pop(number)
            todo.update(ids)
            for ident in ids:
                self._part_of.pop(ident, None)
        changed = bool(self._dirty)
        self._dirty.clear()
        for start in todo:  # the parts found do not depend on where a search starts
            if start in self.items and start not in self._part_of and (start in self._same or start in self.similar):
                ids = self._reach(start)
                self._numbers += 1
                for ident in ids:
                    self._part_of[ident] = self._numbers
                self._parts[self._numbers] = (ids, self._cut(ids, _no_pause if for_reviewer else _step_aside))
        if changed:
            self._sorted = None

    def clusters(self) -> list[Cluster]:
        if self._sorted is None:
            found = [c for _ids, clusters in self._parts.values() for c in clusters]
            self._sorted = sorted(found, key=lambda c: (-c.size, c.representative))
        return list(self._sorted)

    def _same_content_parts(self, members: list[Item]) -> list[tuple[str, ...]]:
        """The connected parts of same-content links among engrams with one content_hash, each as sorted ids."""
        if len(members) < 2:
            return []
        ids = {m.id for m in members}
        if any(self.apart.get(m.id, set()) & ids for m in members):
            return self._parts_pair_by_pair(members)
        drafts = [m for m in members if m.draft]
        if not drafts:
            return []
        if any(m.scope == GLOBAL for m in drafts):  # a global draft links with every one of them
            return [tuple(sorted(ids))]
        by_scope: dict[str, list[str]] = {}
        for m in members:
            if m.scope != GLOBAL:
                by_scope.setdefault(m.scope, []).append(m.id)
        with_drafts = {m.scope for m in drafts}
        parts = [group for scope, group in by_scope.items() if scope in with_drafts]  # its drafts link all of it
        approved_global = [m.id for m in members if m.scope == GLOBAL]  # no global drafts here: all approved
        if approved_global:  # each links with every draft, so it joins every part
            parts = [approved_global + [i for group in parts for i in group]]
        return [tuple(sorted(p)) for p in parts if len(p) >= 2]

    def _parts_pair_by_pair(self, members: list[Item]) -> list[tuple[str, ...]]:
        """The same parts when a split the reviewer made runs through them: every pair asked."""
        left = {m.id: m for m in members}
        parts = []
        while left:
            _, first = left.popitem()
            part, stack = [first.id], [first]
            while stack:
                x = stack.pop()
                joined = [y for y in left.values() if self._may_link(x, y)]
                for y in joined:
                    del left[y.id]
                    part.append(y.id)
                    stack.append(y)
            if len(part) >= 2:
                parts.append(tuple(sorted(part)))
        return parts

    def _may_link(self, a: Item, b: Item) -> bool:
        return (a.draft or b.draft) and scopes_overlap(a.scope, b.scope) and not self.is_apart(a.id, b.id)

    def _reach(self, start: str) -> list[str]:
        seen, stack, parts_seen = {start}, [start], set()
        while stack:
            x = stack.pop()
            same = self._same.get(x)
            if same is not None and same[0] not in parts_seen:
                parts_seen.add(same[0])
                fresh = [y for y in same if y not in seen]
                seen.update(fresh)
                stack.extend(fresh)
            fresh = [y for y in self.similar.get(x, ()) if y not in seen]
            seen.update(fresh)
            stack.extend(fresh)
        return sorted(seen)

    # -- cutting a part into clusters ------------------------------------------------------------------------

    def _cut(self, ids: list[str], pause: Callable[[], object]) -> list[Cluster]:
        parent: dict[str, str] = {}
        members: dict[str, list[str]] = {}
        for ident in ids:  # sorted: every starting cluster lists its members by id
            same = self._same.get(ident)
            root = same[0] if same is not None else ident
            parent[ident] = root
            members.setdefault(root, []).append(ident)

        def find(x: str) -> str:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        links = sorted((-s, a, b) for a in ids for b, s in self.similar.get(a, {}).items() if a < b)
        for _negative, a, b in links:
            ra, rb = find(a), find(b)
            if ra == rb:
                continue
            pause()  # a large part takes seconds of Python: a run of decisions goes first (infra/window_first.py)
            if self._cannot_link(members[ra], members[rb]):
                continue
            parent[rb] = ra
            members[ra].extend(members.pop(rb))
        drafted = [m for m in members.values() if len(m) >= 2 and any(self.items[i].draft for i in m)]
        return [self._cluster(m) for m in drafted]

    def _cannot_link(self, left: list[str], right: list[str]) -> bool:
        if len(left) * len(right) > LINK_CHECKS * LINK_CHECKS:
            left, right = left[:LINK_CHECKS], right[:LINK_CHECKS]
        for a in left:
            for b in right:
                ia, ib = self.items[a], self.items[b]
                if ia.digest != ib.digest and detail_conflict(ia.statement, ib.statement) is not None:
                    return True
        return False

    def _cluster(self, ids: list[str]) -> Cluster:
        items = [self.items[i] for i in ids]
        inside = set(ids)
        same = self._same_content_links(items)
        approved = sorted(i.id for i in items if not i.draft)
        rep = self._representative(items, inside, same)
        out = [Member(rep.id, rep.statement, rep.scope, rep.draft, "representative", 1.0)]
        for item in sorted(items, key=lambda i: (i.created, i.id)):
            if item.id == rep.id:
                continue
            sim, how = self._link(item.id, inside, same)
            out.append(Member(item.id, item.statement, item.scope, item.draft, how, sim))
        return Cluster(rep.id, tuple(out), tuple(approved))

    def _representative(self, items: list[Item], inside: set[str], same: dict[str, int]) -> Item:
        """An approved member if there is one; else the draft most like the others (ties: the oldest)."""
        approved = [i for i in items if not i.draft]
        if approved:
            return min(approved, key=lambda i: (i.created, i.id))

        def degree(item: Item) -> float:  # fsum: the same sum in any order
            links = self.similar.get(item.id, {})
            return math.fsum([same[item.id], *(s for other, s in links.items() if other in inside)])

        return min(items, key=lambda i: (-degree(i), i.created, i.id))

    def _link(self, ident: str, inside: set[str], same: dict[str, int]) -> tuple[float, str]:
        """What joined a member: a same-content link if it has one here, else its most similar link here."""
        if same[ident]:
            return 1.0, "content_hash"
        links = [(-s, other) for other, s in self.similar.get(ident, {}).items() if other in inside]
        if not links:
            return 0.0, ""
        negative, other = min(links)
        return -negative, f"similar to {other}"

    def _same_content_links(self, items: list[Item]) -> dict[str, int]:
        """Per member, how many same-content links it has inside this cluster, counted by scope, not pair by pair
        (linked: either is a draft and the scopes overlap, less the pairs the reviewer split)."""
        by_digest: dict[str, list[Item]] = {}
        for item in items:
            by_digest.setdefault(item.digest, []).append(item)
        out = {}
        for group in by_digest.values():
            scopes = Counter(i.scope for i in group)
            draft_scopes = Counter(i.scope for i in group if i.draft)
            drafts = sum(draft_scopes.values())
            ids = {i.id for i in group}
            for x in group:
                if x.draft:
                    count = len(group) - 1 if x.scope == GLOBAL else scopes[x.scope] - 1 + scopes[GLOBAL]
                else:
                    count = drafts if x.scope == GLOBAL else draft_scopes[x.scope] + draft_scopes[GLOBAL]
                for other in self.apart.get(x.id, ()):
                    y = self.items.get(other)
                    if other in ids and y is not None and (x.draft or y.draft) and scopes_overlap(x.scope, y.scope):
                        count -= 1
                out[x.id] = count
        return out


def _no_pause() -> None:
    return None


def _step_aside() -> None:
    checkpoint(reviewer=True)
