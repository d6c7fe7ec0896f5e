"""Our mirror of PLUR's schema flags exactly the entries the real PLUR quarantines."""

from __future__ import annotations

import pytest

from plur_desk.store.lists.yaml_dump import dump_engrams_document
from plur_desk.store.plur_store import PlurStore

from support.stores import plur

pytestmark = pytest.mark.interop


def _base(i: int, **extra) -> dict:
    e = {
        "id": f"ENG-2026-12-01-{i:03d}",
        "status": "active",
        "type": "behavioral",
        "scope": "global",
        "statement": f"Statement {i}",
    }
    e.update(extra)
    return e


CASES = [
    {},  # valid minimal
    {"commitment": "approved"},
    {"status": "archived"},
    {"type": "opinion"},
    {"visibility": "team"},
    {"summary": "s" * 81},
    {"summary": "s" * 80},
    {"statement": ""},
    {"scope": 5},
    {"tags": "ci"},
    {"tags": ["ci", 3]},
    {"temporal": {"valid_until": "2027-01-01"}},
    {"temporal": {"learned_at": "2026-01-01T00:00:00.000Z", "valid_until": "whenever"}},
    {"write_count": -1},
    {"write_count": 2.5},
    {"version": 0},
    {"consolidated": "yes"},
    {"pinned": 1},
    {"claim_class": "rumour"},
    {"claim_class": "observed"},
    {"polarity": "maybe"},
    {"polarity": None},
    {"activation": {"retrieval_strength": 1.5, "storage_strength": 1, "frequency": 0, "last_accessed": "2026-12-01"}},
    {"activation": {"retrieval_strength": 0.5, "storage_strength": 1, "frequency": 0, "last_accessed": "2026-12-01"}},
    {"relations": {"supersedes": "ENG-1"}},
    {"relations": {"supersedes": ["ENG-2026-12-01-001"]}},
    {"sources": [{"scope": "global"}]},
    {"sources": [{"scope": "global", "stored_at": "x", "session_id": None}]},
    {"knowledge_type": {"memory_class": "semantic", "cognitive_level": "guess"}},
    {"pack": 3},
    {"pack": None},
    {"x_unknown": {"deep": [1, 2]}},
    {"structured_data": {"anything": True}},
    {"rationale": 7},
    {"injection_count": 1},
    {"content_hash": None},
]


def test_invalid_entries_are_exactly_plurs_quarantine(tmp_path, node_home):
    root = tmp_path / "store"
    root.mkdir()
    engrams = [_base(i + 1, **case) for i, case in enumerate(CASES)]
    engrams.append({k: v for k, v in _base(99).items() if k != "type"})
    engrams.append(_base(98, id="NOTE-1"))
    (root / "engrams.yaml").write_text(dump_engrams_document({"engrams": engrams}))
    ours = PlurStore(root)
    ours.load()
    our_invalid = {str(e.value.get("id")) for e in ours.engrams.entries if not e.valid}
    theirs = set(plur(root, node_home, [{"op": "load"}])[0]["quarantined"])
    assert our_invalid == theirs, (sorted(our_invalid - theirs), sorted(theirs - our_invalid))
    assert len(theirs) >= 15


def test_a_pinned_priority_0_21_quarantines_is_flagged_though_0_20_reads_it(tmp_path, node_home):
    # PLUR after 0.20 validates pinned_priority as a whole number 1..100 (schemas/engram.ts@01ad799); 0.20 keeps any
    # value. An entry one supported PLUR quarantines is one plur_desk must not read as valid (nor write).
    root = tmp_path / "store"
    root.mkdir()
    values = [1, 50, 100, 0, 101, 2.5, "high", None, True]
    engrams = [_base(i + 1, pinned=True, pinned_priority=v) for i, v in enumerate(values)]
    (root / "engrams.yaml").write_text(dump_engrams_document({"engrams": engrams}))
    ours = PlurStore(root)
    ours.load()
    flagged = {str(e.value.get("id")): e.problems for e in ours.engrams.entries if not e.valid}
    assert plur(root, node_home, [{"op": "load"}])[0]["quarantined"] == []  # 0.20 reads them all
    assert sorted(flagged) == [f"ENG-2026-12-01-{i:03d}" for i in range(4, 10)]
    assert all("PLUR 0.21 quarantines it" in p[0] for p in flagged.values())
