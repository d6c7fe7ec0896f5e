"""Team disagreements: what two reviewers decided differently, found across engrams.yaml and tensions.yaml.

Three sources, all listed with both decisions: disagreements the merge wrote on engrams (`review_disagreements`:
approve vs reject, two statement edits, two validity windows, two scopes), the cross-file check after a merge
(a tension resolved for an engram that is retired, i.e. resolved the other way elsewhere; a tension loser a
reviewer approved), and tension disagreements this machine's merges recorded (PLUR keeps no extra keys on
tension records). Settling one on an engram removes it from the engram, on every clone after the next sync.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from plur_desk.domain.merge.merge_engram import DISAGREEMENTS_KEY, REVIEWS_KEY
from plur_desk.domain.seen import Seen
from plur_desk.store.team import team_ledger


@dataclass(frozen=True)
class TeamDisagreement:
    """Two teammates' decisions on one record that disagree, in plain words."""

    kind: str
    record: str  # engram or tension id
    summary: str  # plain words, both decisions
    engrams: tuple[str, ...] = ()
    seen: Seen | None = None  # listed for a reviewer: the record as shown (an engram, or a tension with its sides)


def _decision_words(value: object) -> str:
    if not isinstance(value, dict):
        return str(value)
    review = value.get("review")
    if isinstance(review, dict):
        who = review.get("by", "someone")
        state = review.get("state", "decided")
        extra = f" ({review['reason']})" if review.get("reason") else ""
        return f"{who} {state}{extra} at {review.get('at', '?')}"
    if "resolved_by" in value and value.get("status") == "resolved":
        return f"resolved in favour of {value.get('resolved_by')}"
    parts = [f"{k}: {v}" for k, v in value.items() if k != "review"]
    return ", ".join(parts) or "no change"


def _on_engram(engram: dict[str, object]) -> list[TeamDisagreement]:
    flags = engram.get(DISAGREEMENTS_KEY)
    if not isinstance(flags, list):
        return []
    ident = str(engram.get("id"))
    found = []
    for entry in flags:
        if not isinstance(entry, dict):
            continue
        values = entry.get("values") if isinstance(entry.get("values"), list) else []
        sides = " / ".join(_decision_words(v) for v in values)  # type: ignore[union-attr]
        what = {"approve-vs-reject": "approved on one machine, rejected or retired on another"}.get(
            str(entry.get("kind")), f"two different {entry.get('field')} decisions"
        )
        summary = f"{ident}: {what}: {sides}; kept {entry.get('kept')!s} until someone decides"
        found.append(TeamDisagreement(str(entry.get("kind")), ident, summary, (ident,)))
    return found


def _approved_by(engram: dict[str, object]) -> list[str]:
    reviews = [engram.get("review"), *(engram.get(REVIEWS_KEY) or [])]  # type: ignore[misc]
    return [str(r.get("by")) for r in reviews if isinstance(r, dict) and r.get("state") == "approved"]


def _tension_checks(
    engrams: dict[str, dict[str, object]], tensions: Iterable[dict[str, object]]
) -> list[TeamDisagreement]:
    found = []
    for record in tensions:
        if record.get("status") != "resolved":
            continue
        ident, winner = str(record.get("id")), record.get("resolved_by")
        pair = (str(record.get("engram_a")), str(record.get("engram_b")))
        loser = pair[1] if winner == pair[0] else pair[0]
        won = engrams.get(str(winner))
        lost = engrams.get(loser)
        if won is not None and won.get("status") == "retired" and lost is not None and lost.get("status") == "retired":
            found.append(
                TeamDisagreement(
                    "two-winners",
                    ident,
                    f"{ident}: resolved in favour of {winner} here, but {winner} is retired too (resolved the other "
                    f"way on another machine?): both {pair[0]} and {pair[1]} are retired until someone decides",
                    pair,
                )
            )
        elif lost is not None and lost.get("status") == "retired" and _approved_by(lost):
            who = ", ".join(sorted(set(_approved_by(lost))))
            found.append(
                TeamDisagreement(
                    "loser-approved",
                    ident,
                    f"{ident}: {loser} was retired as the loser, but {who} approved it",
                    pair,
                )
            )
    return found


def _from_ledger(store: Path, tensions: dict[str, dict[str, object]]) -> list[TeamDisagreement]:
    found = []
    for entry in team_ledger.read(store, team_ledger.DISAGREEMENTS):
        if entry.get("file") != "tensions.yaml":
            continue
        ident = str(entry.get("record"))
        current = tensions.get(ident)
        kept = entry.get("kept")
        if current is None or not isinstance(kept, dict):
            continue
        if (current.get("status"), current.get("resolved_by")) != (kept.get("status"), kept.get("resolved_by")):
            continue  # decided again since
        raw = entry.get("values")
        values: list[object] = raw if isinstance(raw, list) else []
        sides = " / ".join(_decision_words(v) for v in values)
        pair = (str(current.get("engram_a")), str(current.get("engram_b")))
        found.append(
            TeamDisagreement(str(entry.get("kind")), ident, f"{ident}: {sides}; kept {_decision_words(kept)}", pair)
        )
    return found


def find_disagreements(
    engrams: Iterable[dict[str, object]], tensions: Iterable[dict[str, object]], store: Path | None = None
) -> list[TeamDisagreement]:
    by_id = {str(e.get("id")): e for e in engrams}
    tension_list = list(tensions)
    found = [d for e in by_id.values() for d in _on_engram(e)]
    found += _tension_checks(by_id, tension_list)
    if store is not None:
        ledger = _from_ledger(store, {str(t.get("id")): t for t in tension_list})
        known = {(d.kind, d.record) for d in found}
        found += [d for d in ledger if (d.kind, d.record) not in known and ("two-winners", d.record) not in known]
    return found
