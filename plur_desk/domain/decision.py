"""A decision bound to what was decided, and what a `review` record is worth.

Each signed human event carries `data.decided`: the record it is about (file and id), the content it decided on
(PLUR's `content_hash` for an engram; a digest of the pair and both statements for a tension) and the values it set,
as written. The event's time is its `timestamp`, which the signature covers too. A `review` record in engrams.yaml is
a claim anyone writing the file can make: it stands only when the latest verified decision that set a review on
the engram set exactly this one, and the engram still holds what the verified decisions left (same content, same
values). A record a later verified undo or rejection took back is "a review that was undone".
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence

from plur_desk.domain.trust import Trust, TrustState, backs_review

UNBOUND = frozenset({"updated_at", "reviews"})  # bookkeeping: the list of past reviews, the time of the write
TENSION_CONTENT = ("engram_a", "engram_b", "statement_a", "statement_b")


def plain(value: object) -> object:
    """A value as JSON gives it back (what a signed event holds), so a record and an event compare."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def tension_content_hash(record: Mapping[str, object]) -> str:
    """The pair and both statements a tension decision was made on, as one digest."""
    shown = json.dumps({k: record.get(k) for k in TENSION_CONTENT}, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(shown.encode("utf-8", "surrogatepass")).hexdigest()


def statement_digest(engram: Mapping[str, object]) -> str:
    """SHA-256 of the statement exactly as written (PLUR's content_hash normalises it, and a writer may leave it
    stale: an edit of the text alone must not keep a decision standing)."""
    text = engram.get("statement")
    return hashlib.sha256(str(text).encode("utf-8", "surrogatepass")).hexdigest() if isinstance(text, str) else ""


def decided(file: str, key: str, before: Mapping[str, object], after: Mapping[str, object]) -> dict[str, object]:
    """The `data.decided` block of an event that changed `before` into `after`."""
    changed = [k for k in after if k not in UNBOUND and before.get(k) != after.get(k)]
    changed += [k for k in before if k not in UNBOUND and k not in after]
    block: dict[str, object] = {"file": file, "id": key}
    if file == "engrams":
        block["content_hash"] = after.get("content_hash")
        block["statement_sha256"] = statement_digest(after)  # the text itself: a content_hash left as it was
    else:
        block["content_hash"] = tension_content_hash(after)
    # The statement is bound by its digest (statement_sha256), never copied: history is shared through git, and an
    # edit taking a secret out of a draft (or its undo putting it back) must not copy the secret into an event.
    block["sets"] = {k: plain(after.get(k)) for k in changed if not (file == "engrams" and k == "statement")}
    return block


def bind(event: dict[str, object], block: Mapping[str, object]) -> dict[str, object]:
    """`event` with `data.decided` (the caller signs the result, so the binding is covered by the signature)."""
    data = event.get("data")
    return {**event, "data": {**(data if isinstance(data, dict) else {}), "decided": dict(block)}}


def decision_of(event: Mapping[str, object], file: str, key: str | Sequence[str]) -> dict[str, object] | None:
    """The event's `decided` block when it is about this record (under `key`, or any of the ids in it: an engram
    PLUR 0.21 renamed keeps the decisions signed under its earlier id)."""
    data = event.get("data")
    block = data.get("decided") if isinstance(data, dict) else None
    keys = (key,) if isinstance(key, str) else tuple(key)
    if isinstance(block, dict) and block.get("file") == file and block.get("id") in keys:
        sets = block.get("sets")
        if isinstance(sets, dict):
            return block
    return None


def _sets(block: Mapping[str, object]) -> dict[str, object]:
    sets = block.get("sets")
    return sets if isinstance(sets, dict) else {}


def _said(record: Mapping[str, object]) -> str:
    return f"“{record.get('state')}” by {record.get('by')} at {record.get('at')}"


def review_standing(
    engram: Mapping[str, object],
    claims: Iterable[tuple[dict[str, object], Trust]],
    names: Sequence[str] | None = None,
) -> Trust:
    """What the engram's `review` record is worth, given the human events about it (oldest first, each with the
    trust of its signature). VALID only when a verified decision bound to this content backs it. `names`: the ids
    its decisions may be signed under (its own, and those PLUR 0.21 renamed it from), its own id by default."""
    record = engram.get("review")
    if not isinstance(record, dict):
        return Trust(TrustState.NOT_HUMAN)
    engram_id = str(engram.get("id"))
    names = tuple(names) if names else (engram_id,)
    claims = _first_copies(claims)
    bound = []
    for event, trust in claims:
        block = decision_of(event, "engrams", names)
        if block is not None and trust.counts_as_human:
            bound.append((event, block, trust))
    if not bound:
        return _unbound_standing(names, record, claims)
    shown = plain(record)
    reviewing = [(e, b, t) for e, b, t in bound if "review" in _sets(b)]
    if not reviewing or _sets(reviewing[-1][1])["review"] != shown:
        if any(_sets(b)["review"] == shown for _e, b, _t in reviewing):
            last, block, _trust = reviewing[-1]
            data = last.get("data") if isinstance(last.get("data"), dict) else {}
            how = str(data.get("action", last.get("event"))) if isinstance(data, dict) else str(last.get("event"))
            return Trust(
                TrustState.UNDONE,
                f"the review {_said(record)} was taken back by a verified {how} at {last.get('timestamp')}; "
                "the record was restored by someone else",
            )
        return Trust(TrustState.NO_DECISION, f"no verified decision set the review {_said(record)}")
    expected: dict[str, object] = {}
    for _event, block, _trust in bound:
        expected.update(_sets(block))
    content = bound[-1][1].get("content_hash")
    text = bound[-1][1].get("statement_sha256")
    if content != engram.get("content_hash") or (text is not None and text != statement_digest(engram)):
        return Trust(
            TrustState.NO_DECISION,
            f"the review {_said(record)} was signed on other content (content_hash {content}); the statement "
            f"changed since, by no verified decision",
        )
    moved = sorted(k for k, v in expected.items() if plain(engram.get(k)) != v)
    if moved:
        return Trust(
            TrustState.NO_DECISION,
            f"the review {_said(record)} was signed, but {', '.join(moved)} changed since, by no verified decision",
        )
    return Trust(TrustState.VALID, f"{_said(record)}: {reviewing[-1][2].detail}")


def _first_copies(claims: Iterable[tuple[dict[str, object], Trust]]) -> list[tuple[dict[str, object], Trust]]:
    """Each signed event once, where it first appears: a verbatim copy appended later (a replay) cannot become the
    latest decision, even at the same millisecond as the decision that took it back."""
    seen: set[str] = set()
    kept = []
    for event, trust in claims:
        signature = event.get("signature")
        if isinstance(signature, str):
            if signature in seen:
                continue
            seen.add(signature)
        kept.append((event, trust))
    return kept


def _unbound_standing(
    names: Sequence[str], record: Mapping[str, object], claims: list[tuple[dict[str, object], Trust]]
) -> Trust:
    """Before decisions named their content: the event of exactly this decision (same instant, reviewer, action)
    proves the decision was made, never on which text, so it backs no review (an agent may have rewritten the
    engram under it since)."""
    best = Trust(TrustState.NO_DECISION, f"no verified history event records the review {_said(record)}")
    for event, trust in claims:
        if any(backs_review(event, name, dict(record)) for name in names):
            if trust.counts_as_human:
                return Trust(
                    TrustState.NO_DECISION,
                    f"the review {_said(record)} was {trust.detail}, before decisions named their content: nothing "
                    "shows it was made on the text the engram holds now",
                )
            best = trust
    return best
