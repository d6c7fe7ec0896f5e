"""The team part of an engram's detail panel: who decided what on any machine, and whether teammates will see it."""

from __future__ import annotations

from plur_desk.app.review.session import ReviewSession
from plur_desk.app.team import team_review
from plur_desk.ui.common.widgets import text_html

E = text_html


def team_warnings(session: ReviewSession, engram_id: str) -> list[str]:
    """Escaped warning lines: a decision here never reaches the team; teammates disagreed on this engram."""
    lines = [f"Team: {E(w.split(': ', 1)[-1])}." for w in team_review.visibility_warnings(session, [engram_id])]
    view = session.view(engram_id)
    if view is not None and view.get("review_disagreements"):
        lines.append("Team disagreement on this engram: see Team → Team Disagreements (Ctrl+Shift+D).")
    return lines


def team_decisions_html(session: ReviewSession, engram_id: str) -> str:
    """Every reviewer's decision kept on the engram (it travels with it through sync), oldest first."""
    decisions = team_review.decisions(session, engram_id)
    if len(decisions) < 2 and not any(d.get("by") != session.reviewer.name for d in decisions):
        return ""  # only this reviewer's own single decision: the History section shows it already
    items = "".join(
        f"<li><code>{E(str(d.get('at', ''))[:19].replace('T', ' '))}</code> <b>{E(str(d.get('by', '?')))}</b> "
        f"{E(str(d.get('state', '')))}"
        + (f" — “{E(str(d.get('reason') or d.get('note')))}”" if d.get("reason") or d.get("note") else "")
        + "</li>"
        for d in decisions
    )
    return f"<h3 style='margin:14px 0 4px 0'>Team decisions</h3><ul style='margin-left:-20px'>{items}</ul>"
