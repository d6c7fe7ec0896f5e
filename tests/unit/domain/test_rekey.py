"""PLUR 0.21's duplicate-id rule (domain/plur_rules/rekey.py) against its transcription run by Node (tests/node/rekey_oracle.mjs)."""

from __future__ import annotations

from plur_desk.domain.plur_rules.rekey import Renames, canonical_json, fresh_duplicate_id, resolve_duplicate_ids

from support.node import run_node

VALUES = [
    {"b": 1, "a": [1.5, 0.1, 1e21, 1e-7, 0.000001, 123456789012345680000, -0.0, 2.0, 1e300, 5e-324]},
    {"statement": 'quote " backslash \\ tab \t nl \n nul \x00 del \x7f ü 😀 \u2028', "Z": None, "é": True, "É": False},
    {"\U0001f600": 1, "\uffff": 2, "a": {"nested": [{"y": 1, "x": [None, "s"]}]}},
    [],
    {},
    "lone \ud800 surrogate",
]


def test_canonical_json_is_javascripts():
    assert [canonical_json(v) for v in VALUES] == run_node("rekey_oracle.mjs", payload={"values": VALUES})


def test_the_first_copy_keeps_the_id_a_later_different_one_is_renamed_an_exact_one_read_once():
    a = {"id": "ENG-2026-09-01-001", "statement": "one"}
    b = {"id": "ENG-2026-09-01-001", "statement": "two"}
    out = resolve_duplicate_ids([(a["id"], a), ("ENG-2026-09-01-002", {}), (b["id"], b), (a["id"], dict(a))])
    assert [o.engram_id for o in out[:2]] == ["ENG-2026-09-01-001", "ENG-2026-09-01-002"]
    assert out[2].renamed_from == "ENG-2026-09-01-001" and out[2].engram_id.startswith("ENG-2026-09-01-001-D")
    assert len(out[2].engram_id) == len("ENG-2026-09-01-001-D") + 8
    assert out[3].exact_duplicate_of == 0
    taken = {out[2].engram_id}
    assert fresh_duplicate_id(b["id"], b, taken) == out[2].engram_id + "-2"  # `-2` only when taken


def test_renames_are_followed_only_in_plurs_own_form():
    renames = Renames(
        [
            ("ENG-2026-09-01-001", "ENG-2026-09-01-001-Dabcdef01"),
            ("ENG-2026-09-01-001-Dabcdef01", "ENG-2026-09-01-001-Dabcdef01-D12345678"),
            ("ENG-2026-09-01-005", "ENG-2026-09-01-777"),  # planted: hands 005's past to an unrelated id
        ]
    )
    assert renames.names("ENG-2026-09-01-001-Dabcdef01-D12345678") == [
        "ENG-2026-09-01-001-Dabcdef01-D12345678",
        "ENG-2026-09-01-001-Dabcdef01",
        "ENG-2026-09-01-001",
    ]
    assert renames.earlier("ENG-2026-09-01-777") == []
    assert renames.later("ENG-2026-09-01-001", {"ENG-2026-09-01-001-Dabcdef01"}) == "ENG-2026-09-01-001-Dabcdef01"


def test_an_id_is_followed_back_only_until_it_was_renamed_away():
    # After 0.21 renamed the later copy, the shared id is the first copy's: what happens under it since is not the
    # renamed engram's past.
    renames = Renames([("ENG-A", "ENG-A-D12345678", "2026-12-02T10:00:00.000Z")])
    new = "ENG-A-D12345678"
    assert renames.follows(new, "ENG-A", "2026-12-01T09:00:00.000Z")
    assert not renames.follows(new, "ENG-A", "2026-12-02T10:00:00.000Z")
    assert not renames.follows(new, "ENG-A", "2026-12-03T09:00:00.000Z")
    assert renames.follows(new, new, "2026-12-03T09:00:00.000Z")
    assert Renames([("ENG-A", new)]).follows(new, "ENG-A", "2026-12-03T09:00:00.000Z")  # no time: followed
