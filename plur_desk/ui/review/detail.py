"""HTML for the detail panels: everything a reviewer needs to decide on one engram or tension.

Every stored value passes through E (escaped, hidden characters revealed): agent text is data, never markup.
"""

from __future__ import annotations

import json

from plur_desk.app.review.rows import scope_impact
from plur_desk.app.review.session import ReviewSession
from plur_desk.domain.engram_view import EngramView
from plur_desk.domain.lint import text_flags
from plur_desk.domain.trust import Trust, TrustState
from plur_desk.ui.common import theme
from plur_desk.ui.common.widgets import text_html
from plur_desk.ui.team.team_detail import team_decisions_html, team_warnings

E = text_html
SIMILAR_TITLE = "Similar engrams (advisory; cosine similarity, 1.00 = same meaning)"
PRE = "white-space:pre-wrap"  # tabs, double spaces and line breaks shown as stored


def _section(title: str, body: str) -> str:
    return f"<h3 style='margin:14px 0 4px 0'>{E(title)}</h3>{body}"


def _kv(rows: list[tuple[str, str]]) -> str:
    cells = "".join(
        f"<tr><td style='padding:1px 12px 1px 0; color:{theme.color('muted')}'><b>{E(k)}</b></td><td>{v}</td></tr>"
        for k, v in rows
        if v
    )
    return f"<table cellspacing='0'>{cells}</table>"


def _event_line(event: dict[str, object], trust: Trust | None = None) -> str:
    data = event.get("data") if isinstance(event.get("data"), dict) else {}
    assert isinstance(data, dict)
    actor = event.get("actor") if isinstance(event.get("actor"), dict) else {}
    assert isinstance(actor, dict)
    who = str(actor.get("asserted_by", "unknown"))
    human = actor.get("kind") == "human"
    what = str(data.get("action") or event.get("event"))
    extra = ""
    if "from" in data and "to" in data and data.get("field") == "statement":
        extra = f"<br><s style='{PRE}'>{E(data['from'])}</s><br><u style='{PRE}'>{E(data['to'])}</u>"
    elif data.get("reason"):
        extra = f" — “{E(str(data['reason']))}”"
    elif "to" in data:
        extra = f": {E(json.dumps(data.get('from'), ensure_ascii=False))} → {E(json.dumps(data.get('to'), ensure_ascii=False))}"
    badge = "<u>human</u> " if human else ""
    if human and trust is not None and trust.state is not TrustState.NOT_HUMAN:
        badge = f"<u>human</u> [{E(trust.label)}] "
    return (
        f"<li><code>{E(str(event.get('timestamp', ''))[:19].replace('T', ' '))}</code> {badge}<b>{E(who)}</b> "
        f"{E(what)}{extra}</li>"
    )


def _verdict_warnings(view: EngramView, rejected_before: object, standing: Trust | None) -> list[str]:
    """Earlier verdicts: only a validly signed one is a human verdict; any other is shown as the claim it is."""
    warnings: list[str] = []
    if rejected_before is not None:
        v = rejected_before
        if v.trust.counts_as_human:  # type: ignore[attr-defined]
            warnings.append(
                f"Rejected before: {E(v.engram_id)} by {E(v.by)} on {E(v.at[:10])} — “{E(v.reason)}”. "  # type: ignore[attr-defined]
                "Press R to reject it again."
            )
        else:
            warnings.append(
                f"A rejection of this statement is claimed ({E(v.engram_id)}, “{E(v.reason)}”, said to be by "  # type: ignore[attr-defined]
                f"{E(v.by)}), but it is NOT a verified human verdict: {E(v.trust.label)} — {E(v.trust.detail)}."  # type: ignore[attr-defined]
            )
    review_record = view.review
    if review_record is not None and standing is not None:
        trust = standing
        if not trust.counts_as_human:
            warnings.append(
                f"The review record says “{E(str(review_record.get('state')))}” by "
                f"{E(str(review_record.get('by')))}, but it is NOT a verified human decision: "
                f"{E(trust.label)} — {E(trust.detail)}."
            )
    return warnings


def _review_line(view: EngramView, standing: Trust | None) -> str:
    """ "approved by Ada (signed)" only for a record the latest verified decision backs; else the claim it is."""
    review_record = view.review
    if review_record is None or standing is None:
        return ""
    said = f"{E(str(review_record.get('state')))} by {E(str(review_record.get('by')))}"
    if standing.counts_as_human:
        return f"{said} (signed)"
    return f"<u>{said}: {E(standing.label)}</u>"


CHECKING_HTML = "<p><i>Checking for contradictions…</i></p>"
SIMILAR_PENDING_HTML = "<p><i>Looking for similar engrams…</i></p>"  # replaced by `similar_html` when found
TIMELINE_PENDING_HTML = "<!--history-->"  # replaced by `timeline_html` when read


def similar_html(similar: list[tuple[str, str, float]]) -> str:
    """The advisory list of similar engrams (empty when there are none)."""
    if not similar:
        return ""
    items = "".join(f"<li>{score:.2f} · <b>{E(other)}</b> “{E(text)}”</li>" for other, text, score in similar)
    return _section(SIMILAR_TITLE, f"<ul style='margin-left:-20px'>{items}</ul>")


def conflicts_html(engram: EngramView, conflicts: list[str]) -> str:
    """The warning that approving may contradict these engrams (empty when there are none)."""
    if not conflicts:
        return ""
    verb = "Approving this" if engram.commitment == "draft" else "This"
    items = "".join(f"<li>{E(text)}</li>" for text in conflicts)
    return f"<p>⚠ <b>{verb} may contradict:</b></p><ul style='margin-left:-20px'>{items}</ul>"


def engram_html(
    session: ReviewSession,
    engram_id: str,
    *,
    rejected_before: object = None,
    similar: list[tuple[str, str, float]] | None = None,
    conflicts: list[str] | None = None,
    checking: bool = False,
    similar_pending: bool = False,
    timeline_pending: bool = False,
) -> str:
    """The detail of an engram. With `similar_pending` / `timeline_pending` those sections are placeholders that
    a read off the GUI thread replaces (`similar_html`, `timeline_html`)."""
    engram = session.engram(engram_id)
    if engram is None:
        return f"<p>{E(engram_id)} is no longer in the store.</p>"
    view = EngramView(engram)
    statement = view.statement
    writer, model, runtime = view.attribution
    parts = [f"<p style='font-size:15pt; margin:4px 0 8px 0; {PRE}'>{E(statement)}</p>"]
    flags = text_flags(statement)
    warnings = []
    # what the review record is worth: only the latest verified decision on this content makes it "signed"
    standing = session.verdicts.review_trust(engram) if view.review is not None else None
    warnings += _verdict_warnings(view, rejected_before, standing)
    warnings += [f"Contains {E(f)} — check before approving." for f in flags]
    window, state, outside = view.window, view.window_state(session.now()), view.outside_window(session.now())
    if outside is not None:
        warnings.append(f"Validity: {outside.replace('_', ' ')} — PLUR will not inject it now even if approved.")
    if view.superseded:
        warnings.append("Superseded by " + ", ".join(E(x) for x in view.superseded_by) + ".")
    warnings += team_warnings(session, engram_id)
    if warnings:
        parts.append("".join(f"<p>⚠ <b>{w}</b></p>" for w in warnings))
    if checking:  # the check runs off the GUI thread; its result replaces this line
        parts.append(CHECKING_HTML)
    elif conflicts:
        parts.append(conflicts_html(view, conflicts))
    parts.append(
        _section(
            "Provenance",
            _kv(
                [
                    ("Id", E(engram_id)),
                    ("Review", _review_line(view, standing)),
                    ("Asserted by", E(writer)),
                    ("Model", E(model)),
                    ("Runtime", E(runtime)),
                    ("Created", E(view.created)),
                    ("Scope", E(view.scope)),
                    ("Domain", E(view.domain)),
                    ("Type", E(view.text("type"))),
                    ("Sessions", E(", ".join(view.session_ids))),
                    ("Episode", E(", ".join(view.listed("episode_ids")))),
                    (
                        "Written",
                        f"{E(view.write_count)}× (same scope), recurred {E(view.recurrence_count)}× elsewhere",
                    ),
                    ("Rationale", E(view.text("rationale"))),
                    ("Tags", E(", ".join(view.listed("tags")))),
                ]
            ),
        )
    )
    validity = (
        "always"
        if not window.present
        else f"{window.valid_from or '…'} → {window.valid_until or '…'} ({state.replace('_', ' ')})"
    )
    parts.append(_section("Validity", f"<p>{E(validity)}</p>"))
    rel_rows = [(name.replace("_", " "), E(", ".join(ids))) for name, ids in view.relations]
    if rel_rows:
        parts.append(_section("Relations", _kv(rel_rows)))
    tensions = [
        t
        for t in session.tensions(("detected", "confirmed", "dismissed", "resolved"), engram_id)
        if engram_id in (t.engram_a, t.engram_b)
    ]
    if tensions:
        items = "".join(
            f"<li><b>{E(t.id)}</b> ({E(t.status)}, {t.confidence:.2f}): "
            f"“{E(t.statement_b if t.engram_a == engram_id else t.statement_a)}”</li>"
            for t in tensions
        )
        parts.append(_section("Tensions", f"<ul>{items}</ul>"))
    if view.commitment == "draft":
        parts.append(
            _section(
                "What approving changes",
                f"<p>PLUR starts injecting it into {E(scope_impact(view.scope))}.</p>",
            )
        )
    parts.append(SIMILAR_PENDING_HTML if similar_pending else similar_html(similar or []))
    parts.append(team_decisions_html(session, engram_id))
    parts.append(TIMELINE_PENDING_HTML if timeline_pending else timeline_html(session, engram_id))
    return "".join(parts)


def timeline_html(session: ReviewSession, engram_id: str) -> str:
    """The engram's last history events (read from the month files, parsed, their trust checked): empty when it
    has none."""
    events = session.history.timeline(engram_id)
    if not events:
        return ""
    lines = "".join(_event_line(e, session.trust(e)) for e in events[-12:])
    return _section("History", f"<ul style='margin-left:-20px'>{lines}</ul>")
