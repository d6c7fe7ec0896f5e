"""Three machines, one remote, random decisions and syncs in random order (git's merge base semantics, with the
merge driver's functions): at the end every machine holds the same bytes, and no decision or learned engram is
lost along the way, whatever the order."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plur_desk.domain import review
from plur_desk.domain.plur_rules.derived import content_hash
from plur_desk.domain.plur_rules.engram_rules import engram_problems
from plur_desk.domain.review import Reviewer
from plur_desk.infra.errors import ActionRefused
from plur_desk.store.lists.list_file import ENGRAMS
from plur_desk.store.lists.yaml_dump import dump_engrams_document
from plur_desk.store.team.merge import merge_engram_files
from plur_desk.store.team.merge_side import engram_key, read_side

NAMES = ("ann", "bob", "cid")
T0 = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)


def _engram(ident: str, text: str, stamp: str, draft: bool = True) -> dict[str, object]:
    return {
        "id": ident,
        "status": "active",
        "type": "behavioral",
        "scope": "project:team",
        "visibility": "public",
        "created_at": stamp,
        "updated_at": stamp,
        "statement": text,
        "content_hash": content_hash(text),
        "commitment": "draft" if draft else "leaning",
        "write_count": 1,
    }


BASE = dump_engrams_document(
    {"engrams": [_engram(f"ENG-2026-12-01-00{i}", f"Base rule {i}", "2026-12-01T08:00:00.000Z") for i in range(1, 4)]}
).encode()


class Clone:
    def __init__(self, name: str, offset: int) -> None:
        self.reviewer = Reviewer(name)
        self.local = BASE
        self.synced = BASE  # the remote version this clone last merged with: git's merge base
        self.clock = T0 + timedelta(seconds=offset)

    def records(self) -> list[dict[str, object]]:
        side = read_side(self.local, ENGRAMS, engram_key)
        return [copy.deepcopy(side.records[k]) for k in side.order]

    def act(self, kind: str, n: int, made: list[tuple[str, str, str]], learned: list[str]) -> None:
        self.clock += timedelta(minutes=3)
        stamp = self.clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        records = self.records()
        if kind == "learn":
            today = [int(str(r["id"]).rsplit("-", 1)[1]) for r in records if str(r["id"]).startswith("ENG-2026-12-02-")]
            text = f"{self.reviewer.name} learned rule {len(learned)}"
            records.append(_engram(f"ENG-2026-12-02-{max(today, default=0) + 1:03d}", text, stamp))
            learned.append(text)
        else:
            target = records[n % len(records)]
            try:
                if kind == "approve":
                    review.approve(target, "decided", "", self.reviewer, self.clock)
                else:
                    review.reject(target, "no", self.reviewer, self.clock)
            except ActionRefused:
                return
            made.append((self.reviewer.name, str(target["review"]["at"]), kind))  # type: ignore[index]
        self.local = dump_engrams_document({"engrams": records}).encode()

    def sync(self, remote: list[bytes]) -> None:
        merged = merge_engram_files(self.synced, self.local, remote[0], (remote[0],))
        self.local = merged.data
        remote[0] = self.synced = merged.data


step = st.tuples(st.sampled_from(NAMES), st.sampled_from(["approve", "reject", "learn", "sync"]), st.integers(0, 9))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(step, max_size=25))
def test_three_clones_converge_and_keep_every_decision(steps) -> None:
    clones = {name: Clone(name, i) for i, name in enumerate(NAMES)}
    remote = [BASE]
    made: list[tuple[str, str, str]] = []
    learned: list[str] = []
    for name, kind, n in steps:
        if kind == "sync":
            clones[name].sync(remote)
        else:
            clones[name].act(kind, n, made, learned)
    for _ in range(2):
        for clone in clones.values():
            clone.sync(remote)
    assert {c.local for c in clones.values()} == {remote[0]}, "the clones did not converge"
    side = read_side(remote[0], ENGRAMS, engram_key)
    records = [side.records[k] for k in side.order]
    assert len({r["id"] for r in records}) == len(records)
    assert all(engram_problems(r) == [] for r in records)
    kept = set()
    for record in records:
        for decision in [record.get("review"), *(record.get("reviews") or [])]:  # type: ignore[misc]
            if isinstance(decision, dict):
                kept.add((decision["by"], decision["at"], "approve" if decision["state"] == "approved" else "reject"))
    for decision in made:
        assert decision in kept, f"a decision was lost: {decision}"
    statements = {r["statement"] for r in records}
    assert set(learned) <= statements, "a learned engram was lost"


class PrivateClone(Clone):
    """A clone whose working tree also holds `scope: local` records: it commits PLUR's stripped blob and re-applies
    its local records over every merge, as `plur-desk sync` does."""

    def __init__(self, name: str, offset: int) -> None:
        super().__init__(name, offset)
        self.private: list[str] = []

    def learn_private(self) -> None:
        self.clock += timedelta(minutes=3)
        stamp = self.clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        records = self.records()
        text = f"{self.reviewer.name} private note {len(self.private)}"
        ident = f"ENG-2026-12-03-{len(self.private) + 1:03d}-{self.reviewer.name}"
        records.append({**_engram(ident, text, stamp), "scope": "local"})
        self.private.append(text)
        self.local = dump_engrams_document({"engrams": records}).encode()

    def sync(self, remote: list[bytes]) -> None:
        from plur_desk.store.team.sync_strip import strip_engrams

        committed = strip_engrams(self.local, "personal").data
        merged = merge_engram_files(self.synced, committed, remote[0], (remote[0],)).data
        self.local = merge_engram_files(committed, self.local, merged, theirs_order=True).data
        remote[0] = self.synced = merged


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(step, st.tuples(st.sampled_from(NAMES), st.just("private"), st.just(0))), max_size=25))
def test_clones_with_local_records_converge_on_the_remote_and_keep_their_own(steps) -> None:
    from plur_desk.store.team.sync_strip import strip_engrams

    clones = {name: PrivateClone(name, i) for i, name in enumerate(NAMES)}
    remote = [BASE]
    made: list[tuple[str, str, str]] = []
    learned: list[str] = []
    for name, kind, n in steps:
        if kind == "sync":
            clones[name].sync(remote)
        elif kind == "private":
            clones[name].learn_private()
        else:
            clones[name].act(kind, n, made, learned)
    for _ in range(2):
        for clone in clones.values():
            clone.sync(remote)
    for clone in clones.values():
        assert strip_engrams(clone.local, "personal").data == remote[0], "a clone's shared part differs"
        mine = {r["statement"] for r in clone.records()}
        assert set(clone.private) <= mine, "a local record was lost"
        others = {t for c in clones.values() if c is not clone for t in c.private}
        assert not (others & mine), "a local record reached another clone"
    assert set(learned) <= {r["statement"] for r in read_side(remote[0], ENGRAMS, engram_key).records.values()}
