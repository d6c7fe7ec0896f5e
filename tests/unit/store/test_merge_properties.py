"""Property test of the three-way merge: random concurrent decision histories on two machines.

The merge must give the same bytes whichever side is "ours", give a side back unchanged when both sides are
equal, never drop a reviewer's decision or a learned engram, never emit an entry PLUR quarantines or a duplicate
id, and write exactly what js-yaml would write for the merged document.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plur_desk.domain import review
from plur_desk.domain.merge.merge_tension import pair_key
from plur_desk.domain.plur_rules.derived import content_hash
from plur_desk.domain.plur_rules.engram_rules import engram_problems, tension_problems
from plur_desk.domain.review import Reviewer
from plur_desk.infra.errors import ActionRefused
from plur_desk.store.lists.list_file import ENGRAMS, TENSIONS
from plur_desk.store.lists.yaml_dump import dump_engrams_document, dump_tensions_document
from plur_desk.store.team.merge import merge_engram_files, merge_tension_files, read_side

T0 = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)
N = 5


def _engram(i: int, day: str = "2026-12-01", statement: str | None = None, draft: bool = True) -> dict:
    text = statement or f"Base statement number {i} about deploys"
    stamp = f"{day}T08:00:00.000Z"
    return {
        "id": f"ENG-{day}-{i:03d}",
        "version": 2,
        "status": "active",
        "type": "behavioral",
        "scope": "project:team",
        "visibility": "public",
        "created_at": stamp,
        "updated_at": stamp,
        "statement": text,
        "tags": ["base"],
        "activation": {"retrieval_strength": 0.7, "storage_strength": 1, "frequency": 0, "last_accessed": day},
        "feedback_signals": {"positive": 0, "negative": 0, "neutral": 0},
        "content_hash": content_hash(text),
        "commitment": "draft" if draft else "leaning",
        "write_count": 1,
        "injection_count": 0,
    }


def _tension(i: int, a: int, b: int) -> dict:
    return {
        "id": f"T-2026-1201-{i:03d}",
        "engram_a": f"ENG-2026-12-01-{a:03d}",
        "engram_b": f"ENG-2026-12-01-{b:03d}",
        "statement_a": f"Base statement number {a} about deploys",
        "statement_b": f"Base statement number {b} about deploys",
        "confidence": 0.9,
        "reason": "they disagree",
        "detected_at": "2026-12-01T09:00:00.000Z",
        "status": "detected",
        "resolved_by": None,
        "resolved_at": None,
        "category": "factual",
    }


BASE_ENGRAMS = [_engram(i, draft=i % 2 == 1) for i in range(1, N + 1)]
BASE_TENSIONS = [_tension(1, 1, 2), _tension(2, 3, 4)]

op = st.one_of(
    st.tuples(st.just("approve"), st.integers(1, N), st.sampled_from(["decided", "leaning", "locked"])),
    st.tuples(st.just("reject"), st.integers(1, N), st.sampled_from(["wrong", "stale"])),
    st.tuples(st.just("edit"), st.integers(1, N), st.sampled_from(["Edited one way", "Edited another way"])),
    st.tuples(st.just("tag"), st.integers(1, N), st.sampled_from(["x", "y", "z"])),
    st.tuples(st.just("feedback"), st.integers(1, N), st.sampled_from(["positive", "negative"])),
    st.tuples(st.just("learn"), st.integers(0, 3), st.sampled_from(["cache", "queue"])),
    st.tuples(st.just("resolve"), st.integers(1, 2), st.sampled_from(["a", "b"])),
    st.tuples(st.just("confirm"), st.integers(1, 2), st.just("")),
    st.tuples(st.just("dismiss"), st.integers(1, 2), st.just("")),
)


class Machine:
    def __init__(self, name: str) -> None:
        self.reviewer = Reviewer(name)
        self.engrams = copy.deepcopy(BASE_ENGRAMS)
        self.tensions = copy.deepcopy(BASE_TENSIONS)
        self.decisions: list[dict] = []  # every review decision made here
        self.learned: list[str] = []
        self.tension_decisions: list[tuple[str, str, object]] = []
        self.clock = T0 + timedelta(minutes=7 if name == "bob" else 0)

    def _tick(self) -> datetime:
        self.clock += timedelta(minutes=13)
        return self.clock

    def _find(self, ident: str) -> dict | None:
        return next((e for e in self.engrams if e["id"] == ident), None)

    def apply(self, step: tuple) -> None:
        kind, n, arg = step
        now = self._tick()
        if kind == "learn":
            self._learn(n, arg, now)
            return
        if kind in ("resolve", "confirm", "dismiss"):
            self._tension(kind, n, arg, now)
            return
        engram = self._find(f"ENG-2026-12-01-{n:03d}")
        assert engram is not None
        try:
            if kind == "approve":
                review.approve(engram, arg, "", self.reviewer, now)
            elif kind == "reject":
                review.reject(engram, arg, self.reviewer, now)
            elif kind == "edit":
                review.edit_statement(engram, f"{arg} by {self.reviewer.name} at {now:%H%M}", self.reviewer, now)
            elif kind == "tag":
                engram["tags"] = [*engram["tags"], arg] if arg not in engram["tags"] else engram["tags"]
            elif kind == "feedback":
                engram["feedback_signals"][arg] += 1
        except ActionRefused:
            return
        if kind in ("approve", "reject"):
            self.decisions.append(copy.deepcopy(engram["review"]))

    def _learn(self, n: int, topic: str, now: datetime) -> None:
        day = "2026-12-02"
        mine = [int(e["id"].rsplit("-", 1)[1]) for e in self.engrams if e["id"].startswith(f"ENG-{day}-")]
        ident = max(mine, default=0) + 1
        text = f"Learned on {self.reviewer.name}: the {topic} rule {n}"
        new = _engram(ident, day=day, statement=text)
        new["created_at"] = new["updated_at"] = now.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        self.engrams.append(new)
        self.learned.append(text)

    def _tension(self, kind: str, n: int, side: str, now: datetime) -> None:
        record = self.tensions[n - 1]
        try:
            if kind == "confirm":
                review.confirm_tension(record)
            elif kind == "dismiss":
                review.dismiss_tension(record)
            else:
                winner = record[f"engram_{side}"]
                loser = record["engram_b" if side == "a" else "engram_a"]
                review.resolve_tension(record, winner, now)
                target = self._find(loser)
                if target is not None and target["status"] != "retired":
                    review.retire_loser(target, record["id"], winner, self.reviewer, now)
        except ActionRefused:
            return
        self.tension_decisions.append((record["id"], record["status"], record.get("resolved_by")))

    def files(self) -> tuple[bytes, bytes]:
        return (
            dump_engrams_document({"engrams": self.engrams}).encode(),
            dump_tensions_document(self.tensions).encode(),
        )


BASE_FILES = (
    dump_engrams_document({"engrams": BASE_ENGRAMS}).encode(),
    dump_tensions_document(BASE_TENSIONS).encode(),
)


def _machine(name: str, ops: list[tuple]) -> Machine:
    m = Machine(name)
    for step in ops:
        m.apply(step)
    return m


def _records(data: bytes) -> list[dict]:
    side = read_side(data, ENGRAMS, lambda v: v.get("id"))
    assert not side.opaque, "the merge produced an entry PLUR would quarantine"
    return [side.records[k] for k in side.order]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, max_size=8), st.lists(op, max_size=8))
def test_engram_merge_is_symmetric_idempotent_and_keeps_every_decision(ops_a, ops_b) -> None:
    ann, bob = _machine("ann", ops_a), _machine("bob", ops_b)
    (ea, _), (eb, _) = ann.files(), bob.files()
    base_e = BASE_FILES[0]

    merged = merge_engram_files(base_e, ea, eb)
    assert merged.data == merge_engram_files(base_e, eb, ea).data
    assert merge_engram_files(base_e, ea, ea).data == ea
    assert merge_engram_files(base_e, base_e, eb).data == eb  # one side untouched: the other side, byte for byte
    assert merge_engram_files(base_e, ea, base_e).data == ea
    assert merge_engram_files(base_e, merged.data, merged.data).data == merged.data

    records = _records(merged.data)
    ids = [r["id"] for r in records]
    assert len(ids) == len(set(ids)), "duplicate ids break PLUR's backups"
    for record in records:
        assert engram_problems(record) == [], record
    assert dump_engrams_document({"engrams": records}).encode() == merged.data  # what js-yaml writes

    kept_decisions = set()
    for record in records:
        for decision in [record.get("review"), *record.get("reviews", [])]:
            if decision:
                kept_decisions.add((record["id"], decision["by"], decision["at"], decision["state"]))
    for machine in (ann, bob):
        for decision in machine.decisions:
            assert any(d[1:] == (decision["by"], decision["at"], decision["state"]) for d in kept_decisions), decision
    by_id = {r["id"]: r for r in records}
    for engram in ann.engrams:
        theirs = next((e for e in bob.engrams if e["id"] == engram["id"]), None)
        states = {(engram.get("review") or {}).get("state"), ((theirs or {}).get("review") or {}).get("state")}
        if states == {"approved", "rejected"} and engram["id"] in by_id:
            kinds = [d["kind"] for d in by_id[engram["id"]].get("review_disagreements", [])]
            assert "approve-vs-reject" in kinds, "an approval met a rejection and nobody is told"
            assert by_id[engram["id"]]["status"] == "retired", "a rejected draft must not be injected after a merge"
    statements = {r["statement"] for r in records}
    for text in ann.learned + bob.learned:
        assert text in statements, f"a learned engram was lost: {text}"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, max_size=8), st.lists(op, max_size=8))
def test_tension_merge_is_symmetric_and_reports_every_lost_decision(ops_a, ops_b) -> None:
    ann, bob = _machine("ann", ops_a), _machine("bob", ops_b)
    (_, ta), (_, tb) = ann.files(), bob.files()
    base_t = BASE_FILES[1]
    merged = merge_tension_files(base_t, ta, tb)
    assert merged.data == merge_tension_files(base_t, tb, ta).data
    assert merge_tension_files(base_t, ta, ta).data == ta
    side = read_side(merged.data, TENSIONS, pair_key)
    assert not side.opaque
    records = [side.records[k] for k in side.order]
    assert dump_tensions_document(records).encode() == merged.data
    for record in records:
        assert tension_problems(record) == []
    by_id = {r["id"]: r for r in records}
    reported = {d["record"] for d in merged.disagreements}
    order = {"detected": 0, "confirmed": 1, "dismissed": 2, "resolved": 2}
    for machine in (ann, bob):
        final = {t["id"]: t for t in machine.tensions}
        for ident, record in final.items():
            kept = by_id[ident]
            assert order[kept["status"]] >= order[record["status"]], "a tension moved backwards"
            if record["status"] in ("dismissed", "resolved") and (
                kept["status"] != record["status"] or kept["resolved_by"] != record["resolved_by"]
            ):
                assert ident in reported, f"{ident}: a decision was overridden without being reported"
