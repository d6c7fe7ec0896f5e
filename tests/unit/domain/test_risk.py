"""Risk factors: each one moves the score the way its documentation says, and every reason is shown."""

from __future__ import annotations

from plur_desk.domain.risk import FACTORS, RiskInput, assess, factors_help, scope_breadth


def test_every_factor_is_documented_with_its_weight() -> None:
    text = factors_help()
    for factor in FACTORS:
        assert f"{factor.name} x{factor.weight:g}" in text
    from plur_desk.domain import risk

    assert risk.__doc__ is not None
    for factor in FACTORS:
        assert f"| {factor.name}" in risk.__doc__


def test_broader_scope_ranks_higher() -> None:
    assert (
        scope_breadth("global") > scope_breadth("group:org/team") > scope_breadth("project:x") > scope_breadth("user:a")
    )
    assert assess(RiskInput("global")).score > assess(RiskInput("user:alice")).score


def test_lint_flags_outrank_a_harmless_note() -> None:
    plain = assess(RiskInput("project:web"))
    flagged = assess(RiskInput("project:web", flags=("instruction-like text",)))
    assert flagged.score > plain.score
    assert flagged.parts[0][0] == "lint"
    assert "instruction-like text" in flagged.reasons


def test_writer_rejection_rate_and_novelty_and_tension() -> None:
    good = assess(RiskInput("project:web", writer_rejected=0, writer_decided=100, nearest_approved=0.95))
    bad = assess(RiskInput("project:web", writer_rejected=80, writer_decided=100, nearest_approved=0.2))
    assert bad.score > good.score
    assert "writer rejected 80 of 100" in bad.reasons
    tense = assess(RiskInput("project:web", flags=("in tension",)))
    assert "possible contradiction" in tense.reasons
    assert tense.score > assess(RiskInput("project:web")).score


def test_locked_commitment_ranks_higher_and_score_is_bounded() -> None:
    assert (
        assess(RiskInput("project:web", level="locked")).score > assess(RiskInput("project:web", level="leaning")).score
    )
    worst = assess(RiskInput("global", "locked", ("instruction-like text", "in tension", "rejected before"), 9, 9, 0.0))
    assert 0.9 < worst.score <= 1.0
