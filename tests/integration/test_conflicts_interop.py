"""The local contradiction finder's records against the real PLUR: read, settled and excluded by PLUR itself."""

from __future__ import annotations

import re

import pytest

from plur_desk.app.conflicts.conflict_actions import not_a_conflict, record_tension, supersede
from plur_desk.app.conflicts.conflicts_cli import finder_for
from plur_desk.app.review.bootstrap import open_session

from support.node import plur_env, run_node
from support.stores import plur

pytestmark = pytest.mark.interop

PAIRS = [
    ("Deploys go through Caddy on the edge hosts.", "Deploys go through nginx on the edge hosts."),
    (
        "API tokens for the billing service expire after 30 days.",
        "API tokens for the billing service expire after 90 days.",
    ),
    ("Squash commits when merging feature branches.", "Never squash commits when merging feature branches."),
    ("The staging database is reset every 24 hours.", "The staging database is reset every 72 hours."),
    (
        "The nightly report is emailed to the whole platform team.",
        "The nightly report is not emailed to the whole platform team.",
    ),
]


def _conflict_ops(store, home, ops):
    return run_node("conflict_ops.mjs", payload=ops, env=plur_env(store, home))


@pytest.fixture
def learned(tmp_path):
    """A store PLUR made with learn(): five contradicting pairs plus an unrelated engram."""
    store, home = tmp_path / "store", tmp_path / "home"
    store.mkdir()
    ops = [
        {"op": "learn", "statement": s, "options": {"scope": "project:web", "domain": "dev.ops"}}
        for pair in PAIRS
        for s in pair
    ]
    ops.append(
        {"op": "learn", "statement": "The office plants are watered on Mondays.", "options": {"scope": "global"}}
    )
    ids = [r["id"] for r in plur(store, home, ops)]
    return store, home, [(ids[2 * k], ids[2 * k + 1]) for k in range(len(PAIRS))]


def _key(a, b):
    return ":".join(sorted((a, b)))


def test_records_we_make_are_plurs_own_and_leave_its_scan(learned):
    store, home, pairs = learned
    plur_before = set(_conflict_ops(store, home, [{"op": "candidatePairs"}])[0])
    assert {_key(a, b) for a, b in pairs} <= plur_before  # PLUR's own scan would judge all five

    session = open_session(store, "Ada Reviewer", use_cache=False)
    found = {c.key: c for c in finder_for(session).scan().candidates}
    assert {_key(a, b) for a, b in pairs} <= set(found), found.keys()
    caddy = found[_key(*pairs[0])]
    assert caddy.rule == "slot" and {w.lower() for w in caddy.removed + caddy.added} == {"caddy", "nginx"}

    recorded = record_tension(session, *pairs[0], caddy.score, caddy.reason())
    dismissed = not_a_conflict(session, *pairs[1], "different services, both right")
    supersede(session, pairs[2][1], pairs[2][0])
    for_plur_to_dismiss = record_tension(session, *pairs[3], 0.8, found[_key(*pairs[3])].reason())
    for_plur_to_resolve = record_tension(session, *pairs[4], 0.9, found[_key(*pairs[4])].reason())
    t_confirm = next(iter(recorded.tensions))
    t_dismissed = next(iter(dismissed.tensions))
    t_plur_dismiss = next(iter(for_plur_to_dismiss.tensions))
    t_resolve = next(iter(for_plur_to_resolve.tensions))
    assert all(re.fullmatch(r"T-\d{4}-\d{4}-\d{3}", t) for t in (t_confirm, t_dismissed, t_plur_dismiss, t_resolve))

    listed, raw, loaded = plur(store, home, [{"op": "listTensions"}, {"op": "tensions"}, {"op": "load"}])
    assert loaded["quarantined"] == [] and loaded["validate"]["ok"], loaded["validate"]
    by_id = {t["id"]: t for t in listed}
    assert len(raw) == len(listed) == 4  # every record we wrote passes PLUR's tension schema
    ours = by_id[t_confirm]
    assert list(ours) == [
        "id", "engram_a", "engram_b", "statement_a", "statement_b", "confidence", "reason", "detected_at",
        "status", "resolved_by", "resolved_at", "category",
    ]  # fmt: skip
    assert ours["status"] == "detected" and ours["reason"].startswith("plur_desk local detector")
    assert {ours["statement_a"], ours["statement_b"]} == set(PAIRS[0])
    assert by_id[t_dismissed]["status"] == "dismissed"
    newer, older = pairs[2][1], pairs[2][0]
    assert loaded["engrams"][newer]["relations"]["supersedes"] == [older]
    assert loaded["engrams"][older]["relations"]["superseded_by"] == [newer]

    # PLUR excludes every pair we answered: recorded (any status) or linked by supersedes.
    plur_after = set(_conflict_ops(store, home, [{"op": "candidatePairs"}])[0])
    assert not ({_key(a, b) for a, b in pairs} & plur_after)
    # ... and so does our own finder, on a fresh session.
    again = finder_for(open_session(store, "Ada Reviewer", use_cache=False)).scan()
    assert not ({_key(a, b) for a, b in pairs} & {c.key for c in again.candidates})

    # PLUR settles our records through its own lifecycle.
    results = plur(
        store,
        home,
        [
            {"op": "confirm", "id": t_confirm},
            {"op": "dismiss", "id": t_plur_dismiss},
            {"op": "resolve", "id": t_resolve, "winner": pairs[4][0]},
            {"op": "listTensions"},
            {"op": "load"},
        ],
    )
    assert not [r for r in results[:3] if isinstance(r, dict) and "error" in r], results[:3]
    statuses = {t["id"]: t["status"] for t in results[3]}
    assert statuses[t_confirm] == "confirmed"
    assert statuses[t_plur_dismiss] == "dismissed"
    assert statuses[t_resolve] == "resolved"
    assert results[4]["engrams"][pairs[4][1]]["status"] == "retired"

    # A confirmed tension makes PLUR's inject warn when either side is injected.
    injected = _conflict_ops(
        store, home, [{"op": "injectWarnings", "prompt": "how do deploys go through the edge hosts, caddy or nginx"}]
    )[0]
    assert set(pairs[0]) & set(injected["ids"]), injected
    assert any(t_confirm in w for w in injected["warnings"]), injected


def test_our_supersedes_edges_match_plurs_learn(learned, tmp_path):
    store, home, pairs = learned
    session = open_session(store, "Ada Reviewer", use_cache=False)
    supersede(session, pairs[0][1], pairs[0][0])
    theirs = plur(
        store,
        home,
        [
            {
                "op": "learn",
                "statement": "Deploys go through Traefik on the edge hosts.",
                "options": {"scope": "project:web", "supersedes": [pairs[1][0]]},
            },
            {"op": "load"},
        ],
    )
    engrams = theirs[1]["engrams"]
    plur_relations = engrams[theirs[0]["id"]]["relations"]
    our_relations = engrams[pairs[0][1]]["relations"]
    assert list(our_relations) == list(plur_relations)  # same keys, same order: every array defaulted
    assert engrams[pairs[1][0]]["relations"]["superseded_by"] == [theirs[0]["id"]]
    assert engrams[pairs[0][0]]["relations"]["superseded_by"] == [pairs[0][1]]


def test_our_prefilter_lets_through_exactly_the_pairs_plurs_scan_would_judge(tmp_path):
    """Every pair of the 650 evaluation statements (211k pairs), gated by our port and by PLUR's own code."""
    from itertools import combinations

    from plur_desk.domain.plur_rules.tension_rules import GateContext, blocked_by, subject_tokens
    from plur_desk.store.lists.yaml_dump import dump_engrams_document

    from support.conflict_eval import load_rows, pair_engrams

    engrams = [e for n, row in enumerate(load_rows()) for e in pair_engrams(n, row)]
    engrams[0]["temporal"]["valid_until"] = "2026-03-01"  # expired whenever this runs (after 2026-03-01)
    engrams[5]["status"] = "retired"
    store, home = tmp_path / "store", tmp_path / "home"
    store.mkdir()
    (store / "engrams.yaml").write_text(dump_engrams_document({"engrams": engrams}), encoding="utf-8")
    (store / "tensions.yaml").write_text("[]\n", encoding="utf-8")
    theirs = set(_conflict_ops(store, home, [{"op": "candidatePairs"}])[0])

    from datetime import UTC, datetime

    context = GateContext(frozenset(), datetime.now(UTC))
    subjects = {e["id"]: subject_tokens(e["statement"]) for e in engrams}
    ours = {
        _key(a["id"], b["id"])
        for a, b in combinations(engrams, 2)
        if blocked_by(a, b, context, (subjects[a["id"]], subjects[b["id"]])) is None
    }
    assert len(theirs) > 1000
    assert ours == theirs, (sorted(ours - theirs)[:5], sorted(theirs - ours)[:5])
