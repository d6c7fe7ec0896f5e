"""Three-way merge of one engram from two machines (PLUR-SYNC.md §5.2), symmetric in its two sides.

Where two people decided differently (approve vs reject, two statement edits, two validity windows, a scope
change each), nothing is decided for them: the merge keeps the conservative state (not injected, less shared)
and writes the disagreement onto the engram under `review_disagreements` (a top-level key, which PLUR's
passthrough schema keeps), with both sides' values. Every reviewer decision (`review`) from either side is kept
in `reviews`, merged as a set, so no decision is ever lost.
"""

from __future__ import annotations

import copy

from plur_desk.domain.merge.merge_values import (
    MISSING,
    add_counters,
    canonical,
    key_order,
    max_string,
    max_value,
    merge_dict,
    merge_keyed,
    merge_set,
    ordered,
    pick_max,
    same,
    settled,
    three_way,
)

DISAGREEMENTS_KEY = "review_disagreements"
REVIEWS_KEY = "reviews"
STATEMENT_GROUP = ("statement", "content_hash", "engram_version", "previous_version_ref", "summary")
COMMITMENT_GROUP = ("commitment", "locked_at", "locked_reason")
IMMUTABLE = ("id", "version", "created_at")
LATEST = ("updated_at",)
COUNTERS = ("write_count", "injection_count", "recurrence_count")
STRING_SETS = ("tags", "episode_ids", "source_patterns", "contraindications")
NESTED_COUNTERS = {
    "feedback_signals": ("positive", "negative", "neutral"),
    "activation": ("frequency",),
    "usage": ("injections", "hits", "misses"),
}
NESTED_LATEST = {
    "activation": ("last_accessed", "retrieval_strength", "storage_strength"),
    "usage": ("last_hit_at",),
}
KEYED_LISTS = {
    "associations": lambda x: canonical([x.get("type"), x.get("target")]) if isinstance(x, dict) else canonical(x),
    "sources": lambda x: (
        canonical([x.get(k) for k in ("stored_at", "session_id", "scope")]) if isinstance(x, dict) else canonical(x)
    ),
    "knowledge_anchors": lambda x: canonical(x.get("path")) if isinstance(x, dict) else canonical(x),
    "entities": lambda x: canonical([x.get("name"), x.get("type")]) if isinstance(x, dict) else canonical(x),
}
FLAGGED_LWW = ("temporal",)
STATUS_RANK = {"retired": 3, "candidate": 2, "dormant": 1, "active": 0}  # higher = further from injection
COMMITMENT_RANK = {"exploring": 1, "leaning": 2, "decided": 3, "locked": 4}
REVIEW_STATE_RANK = {"rejected": 2}  # a rejection is the non-injecting decision
CO_ACCESS_CAP = 5


def rank(record: dict[str, object]) -> tuple[str, str, str]:
    """Which side counts as the later writer: its updated_at, then a content order (never argument order)."""
    updated = record.get("updated_at")
    return (updated if isinstance(updated, str) else "", canonical(record), ordered(record))


def _group(record: dict[str, object], keys: tuple[str, ...]) -> dict[str, object]:
    return {k: record[k] for k in keys if k in record}


def flag(kind: str, field: str, values: list[object], at: object, **extra: object) -> dict[str, object]:
    """A disagreement as written on the engram: deterministic (no clock), sides in canonical order."""
    sides = sorted((copy.deepcopy(v) for v in values), key=canonical)
    entry: dict[str, object] = {"kind": kind, "field": field, "values": sides}
    if isinstance(at, str) and at:
        entry["at"] = at
    entry.update(extra)
    return entry


class _EngramMerge:
    def __init__(self, base: dict[str, object] | None, a: dict[str, object], b: dict[str, object]) -> None:
        self.base = base or {}
        self.has_base = base is not None
        self.a, self.b = a, b
        self.late, self.early = (a, b) if rank(a) >= rank(b) else (b, a)
        at = max_string(a.get("updated_at", MISSING), b.get("updated_at", MISSING))
        self.at = at if isinstance(at, str) else ""
        self.out: dict[str, object] = {}
        self.flags: list[dict[str, object]] = []

    def get(self, key: str) -> tuple[object, object, object]:
        return self.base.get(key, MISSING), self.a.get(key, MISSING), self.b.get(key, MISSING)

    def run(self) -> tuple[dict[str, object], list[dict[str, object]]]:
        groups = {k: g for g in (STATEMENT_GROUP, COMMITMENT_GROUP) for k in g}
        done: set[str] = set()
        for key in key_order(self.base, self.a, self.b):
            if key in done:
                continue
            if key in groups:
                self._merge_group(groups[key])
                done.update(groups[key])
                continue
            done.add(key)
            value = self._field(key)
            if value is not MISSING:
                self.out[key] = value
        self._decisions()
        self._after()
        return self._ordered(), self.flags

    def _ordered(self) -> dict[str, object]:
        order = key_order(self.base, self.a, self.b) + [k for k in self.out if k not in self.a and k not in self.b]
        return {k: self.out[k] for k in order if k in self.out}

    # -- groups of fields that move together -------------------------------------------------------------

    def _merge_group(self, keys: tuple[str, ...]) -> None:
        go, ga, gb = _group(self.base, keys), _group(self.a, keys), _group(self.b, keys)
        decided, value = three_way(go if self.has_base else MISSING, ga, gb)
        if not decided:
            value = self._statement_conflict(ga, gb) if keys is STATEMENT_GROUP else self._commitment(go, ga, gb)
        assert isinstance(value, dict)
        for key in keys:
            if key in value:
                self.out[key] = copy.deepcopy(value[key])

    def _statement_conflict(self, ga: dict[str, object], gb: dict[str, object]) -> dict[str, object]:
        chosen = ga if self.late is self.a else gb
        statements = [ga.get("statement", MISSING), gb.get("statement", MISSING)]
        if not same(statements[0], statements[1]):
            self.flags.append(flag("two-edits", "statement", statements, self.at, kept=chosen.get("statement")))
        return chosen

    def _commitment(self, go: dict[str, object], ga: dict[str, object], gb: dict[str, object]) -> dict[str, object]:
        ca, cb = ga.get("commitment"), gb.get("commitment")
        if ca == cb:
            return ga if self.late is self.a else gb
        if "draft" in (ca, cb) and go.get("commitment") != "draft":
            # An un-approval raced an approval: keep the draft (not injected) and say so.
            self.flags.append(flag("approve-vs-unapprove", "commitment", [ca, cb], self.at, kept="draft"))
            return ga if ca == "draft" else gb
        ra, rb = COMMITMENT_RANK.get(str(ca), 0), COMMITMENT_RANK.get(str(cb), 0)
        if ra != rb:
            return ga if ra > rb else gb
        return ga if self.late is self.a else gb

    # -- single fields ------------------------------------------------------------------------------------

    def _field(self, key: str) -> object:
        vo, va, vb = self.get(key)
        decided, value = three_way(vo if self.has_base else MISSING, va, vb)
        if decided and key != REVIEWS_KEY:
            return copy.deepcopy(value)
        if key in IMMUTABLE:
            return copy.deepcopy(vo) if vo is not MISSING else (min_present(va, vb))
        if key in ("status", "scope", "visibility", "review", *FLAGGED_LWW):
            return self._decision_field(key, va, vb)
        if key in LATEST:
            return max_string(va, vb)
        if key in COUNTERS:
            return add_counters(vo, va, vb)
        if key in STRING_SETS:
            return merge_set(vo, va, vb)
        if key == REVIEWS_KEY:
            return merge_set(vo, va, vb, union=True)  # decisions are never dropped
        if key == DISAGREEMENTS_KEY:
            return merge_set(vo, va, vb)  # settling one removes it, and the removal travels
        if key == "relations":
            return merge_dict(vo, va, vb, lambda _p, o, x, y: merge_set(o, x, y), key)
        if key in KEYED_LISTS:
            merged = merge_keyed(vo, va, vb, KEYED_LISTS[key], self._keyed_item)
            return _cap_co_access(merged) if key == "associations" else merged
        if key in NESTED_COUNTERS or key in NESTED_LATEST:
            return merge_dict(vo, va, vb, self._nested_leaf, key)
        return merge_dict(vo, va, vb, self._lww_leaf, key)

    def _decision_field(self, key: str, va: object, vb: object) -> object:
        """Fields a person decides: both sides changed them differently."""
        if key == "status":
            return self._status(va, vb)
        if key == "review":
            return self._review(va, vb)
        chosen = _less_shared(key, va, vb) if key in ("scope", "visibility") else (va if self.late is self.a else vb)
        self.flags.append(flag("two-edits", key, [va, vb], self.at, kept=chosen))
        return copy.deepcopy(chosen)

    def _keyed_item(self, base: object, a: object, b: object) -> object:
        def leaf(path: str, o: object, x: object, y: object) -> object:
            if path in ("strength", "updated_at", "snippet_extracted_at", "stored_at"):
                return max_value(x, y)
            return self._lww_leaf(path, o, x, y)

        return merge_dict(base, a, b, leaf)

    def _nested_leaf(self, path: str, o: object, x: object, y: object) -> object:
        parent, _, name = path.rpartition(".")
        if name in NESTED_COUNTERS.get(parent, ()):
            return add_counters(o, x, y)
        if name in NESTED_LATEST.get(parent, ()):
            return max_value(x, y)
        return self._lww_leaf(path, o, x, y)

    def _lww_leaf(self, path: str, o: object, x: object, y: object) -> object:
        """Both sides changed a leaf differently: the later writer's value (the record-level order)."""
        return copy.deepcopy(x if self.late is self.a else y)

    def _status(self, va: object, vb: object) -> object:
        ra, rb = STATUS_RANK.get(str(va), -1), STATUS_RANK.get(str(vb), -1)
        if ra != rb:
            return va if ra > rb else vb
        return pick_max(va, vb)

    def _review(self, va: object, vb: object) -> object:
        """Two different review decisions: keep the non-injecting one as current; both go to `reviews`."""
        candidates = [v for v in (va, vb) if isinstance(v, dict)]
        if not candidates:
            return pick_max(va, vb)

        def order(v: dict[str, object]) -> tuple[int, str, str]:
            at = v.get("at")
            return (REVIEW_STATE_RANK.get(str(v.get("state")), 0), at if isinstance(at, str) else "", canonical(v))

        return copy.deepcopy(max(candidates, key=order))

    # -- decisions across fields ----------------------------------------------------------------------------

    def _decisions(self) -> None:
        """Keep every review decision, and flag an approval that met a rejection or a retirement."""
        reviews = self.out.get(REVIEWS_KEY)
        known = list(reviews) if isinstance(reviews, list) else []
        for side in (self.base, self.a, self.b):
            review = side.get("review")
            if isinstance(review, dict):
                known.append(review)
        decided = [self.a.get("review", MISSING), self.b.get("review", MISSING)]
        two_decisions = not same(decided[0], decided[1]) and all(isinstance(v, dict) for v in decided)
        if two_decisions or isinstance(self.out.get(REVIEWS_KEY), list):
            unique = {canonical(r): r for r in known}
            self.out[REVIEWS_KEY] = [
                copy.deepcopy(unique[k]) for k in sorted(unique, key=lambda k: _review_sort(unique[k]))
            ]
        a, b = self.a, self.b
        if (self._approved_here(a) and self._retired_here(b)) or (self._approved_here(b) and self._retired_here(a)):
            sides: list[object] = [_decision_of(a), _decision_of(b)]
            self.flags.append(flag("approve-vs-reject", "status", sides, self.at, kept=self.out.get("status")))

    def _approved_here(self, side: dict[str, object]) -> bool:
        before = self.base.get("commitment")
        review = side.get("review")
        if (
            isinstance(review, dict)
            and review.get("state") == "approved"
            and not same(review, self.base.get("review", MISSING))
        ):
            return True
        return before == "draft" and side.get("commitment") not in ("draft", None)

    def _retired_here(self, side: dict[str, object]) -> bool:
        return side.get("status") == "retired" and self.base.get("status", "active") != "retired"

    def _after(self) -> None:
        count = self.out.get("write_count")
        if (
            isinstance(count, (int, float))
            and not isinstance(count, bool)
            and count <= 0
            and "write_count" in self.base
        ):
            moved = not same(self.base.get("write_count"), count)
            if moved:
                self.out["status"] = "retired"
        if self.flags:
            existing = self.out.get(DISAGREEMENTS_KEY)
            merged = list(existing) if isinstance(existing, list) else []
            unique = {canonical(x): x for x in [*merged, *self.flags]}
            self.out[DISAGREEMENTS_KEY] = [unique[k] for k in sorted(unique)]


def _decision_of(side: dict[str, object]) -> dict[str, object]:
    decision: dict[str, object] = {k: side[k] for k in ("status", "commitment") if k in side}
    review = side.get("review")
    if isinstance(review, dict):
        decision["review"] = review
    return decision


def _review_sort(review: object) -> tuple[str, str]:
    at = review.get("at") if isinstance(review, dict) else None
    return (at if isinstance(at, str) else "", canonical(review))


def min_present(*values: object) -> object:
    present = [v for v in values if v is not MISSING]
    if not present:
        return MISSING
    return min(present, key=lambda v: (canonical(v), ordered(v)))


def _scope_rank(scope: object) -> int:
    text = str(scope)
    if text == "local":
        return 0
    if text == "public" or text.split(":", 1)[0] in ("group", "project", "space", "team", "org"):
        return 2
    return 1


def _less_shared(key: str, va: object, vb: object) -> object:
    if key == "visibility":
        order = {"private": 0, "template": 1, "public": 2}
        ra, rb = order.get(str(va), 0), order.get(str(vb), 0)
    else:
        ra, rb = _scope_rank(va), _scope_rank(vb)
    if ra != rb:
        return va if ra < rb else vb
    return pick_max(va, vb)


def _cap_co_access(merged: object) -> object:
    if not isinstance(merged, list):
        return merged
    co = [x for x in merged if isinstance(x, dict) and x.get("type") == "co_accessed"]
    if len(co) <= CO_ACCESS_CAP:
        return merged

    def strength(x: dict[str, object]) -> tuple[float, str, str]:
        s = x.get("strength")
        updated = x.get("updated_at")
        return (
            float(s) if isinstance(s, (int, float)) else 0.0,
            updated if isinstance(updated, str) else "",
            canonical(x),
        )

    keep = {id(x) for x in sorted(co, key=strength, reverse=True)[:CO_ACCESS_CAP]}
    return [x for x in merged if not (isinstance(x, dict) and x.get("type") == "co_accessed") or id(x) in keep]


def merge_engram(
    base: dict[str, object] | None, a: dict[str, object], b: dict[str, object]
) -> tuple[dict[str, object], list[dict[str, object]]]:
    """The merged engram and the disagreements found (also written on it). Same result for (a, b) and (b, a)."""
    trivial = settled(base, a, b)
    if trivial is not None:
        return trivial, []
    return _EngramMerge(base, a, b).run()


def same_content(a: dict[str, object], b: dict[str, object]) -> bool:
    """Two records minted separately under one id describe the same knowledge (fold them) or not (a collision)."""
    return a.get("statement") == b.get("statement") and a.get("content_hash") == b.get("content_hash")
