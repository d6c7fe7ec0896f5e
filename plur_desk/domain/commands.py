"""Review commands: one frozen value per human intent, each knowing its file edits and history events as pure
functions (no I/O, no clock: the reviewer and the moment come in a `Context`).

`ReviewSession.execute(command)` does the rest, the same way for every command: checks the records against what
the reviewer saw (`Seen`), journals the action, writes under PLUR's locks, signs the events and records the undo.
Four shapes: an `EngramCommand` edits engrams.yaml only; a `TensionCommand` edits one tension record; a
`TwoFileCommand` writes the tension record first and then engrams (PLUR's order); `RecordTension` appends a new
tension record.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from plur_desk.domain import review
from plur_desk.domain.engram_view import EngramView, split_order
from plur_desk.domain.merge import settle
from plur_desk.domain.plur_rules.tension_rules import add_relation, new_tension, next_tension_id, pair_key
from plur_desk.domain.review import Reviewer, engram_fingerprint
from plur_desk.domain.seen import Seen
from plur_desk.domain.similar.cluster_review import reject_as_duplicate
from plur_desk.infra.clock import iso_ms
from plur_desk.infra.errors import ActionRefused, ChangedSinceError

Record = dict[str, object]
Events = list[dict[str, object]]
Apply = Callable[[Record], tuple[Record, Events]]
Lookup = Callable[[str], EngramView | None]


@dataclass(frozen=True)
class Context:
    """Who decides, and when: everything a command's pure functions need besides the record."""

    reviewer: Reviewer
    now: datetime


def names(seen: Sequence[Seen]) -> str:
    ids = list(dict.fromkeys(s.id for s in seen))
    return ids[0] if len(ids) == 1 else f"{len(ids)} drafts"


# -- engrams.yaml only -----------------------------------------------------------------------------------------


class EngramCommand:
    """A decision on engrams the reviewer saw: one edit per engram, each expecting it exactly as shown."""

    action: ClassVar[str]

    def targets(self) -> tuple[Seen, ...]:
        raise NotImplementedError

    def label(self) -> str:
        raise NotImplementedError

    def check(self, lookup: Lookup) -> None:
        """Refuse before anything is written, from the session's snapshot (the write checks the disk again)."""

    def unchanged(self) -> tuple[tuple[str, dict[str, object]], ...]:
        """Engrams the decision rests on without changing them, with their fields as shown: checked on disk too."""
        return ()

    def apply(self, engram: Record, ctx: Context) -> tuple[Record, Events]:
        raise NotImplementedError


@dataclass(frozen=True)
class ApproveDrafts(EngramCommand):
    seen: tuple[Seen, ...]
    level: str = "decided"
    note: str = ""
    despite_open_tension: bool = False  # to `locked` although a tension on it is open: the reviewer was asked
    action: ClassVar[str] = "approve"

    def targets(self) -> tuple[Seen, ...]:
        return self.seen

    def label(self) -> str:
        return f"approve {names(self.seen)} as {self.level}"

    def apply(self, engram: Record, ctx: Context) -> tuple[Record, Events]:
        return review.approve(engram, self.level, self.note, ctx.reviewer, ctx.now)


@dataclass(frozen=True)
class RejectDrafts(EngramCommand):
    seen: tuple[Seen, ...]
    reason: str
    action: ClassVar[str] = "reject"

    def targets(self) -> tuple[Seen, ...]:
        return self.seen

    def label(self) -> str:
        return f"reject {names(self.seen)}"

    def apply(self, engram: Record, ctx: Context) -> tuple[Record, Events]:
        return review.reject(engram, self.reason, ctx.reviewer, ctx.now)


@dataclass(frozen=True)
class EditStatement(EngramCommand):
    seen: Seen
    statement: str
    action: ClassVar[str] = "edit"

    def targets(self) -> tuple[Seen, ...]:
        return (self.seen,)

    def label(self) -> str:
        return f"edit {self.seen.id}"

    def apply(self, engram: Record, ctx: Context) -> tuple[Record, Events]:
        return review.edit_statement(engram, self.statement, ctx.reviewer, ctx.now)


@dataclass(frozen=True)
class SetValidity(EngramCommand):
    seen: tuple[Seen, ...]
    valid_from: str | None
    valid_until: str | None
    action: ClassVar[str] = "set_validity"

    def targets(self) -> tuple[Seen, ...]:
        return self.seen

    def label(self) -> str:
        return f"set validity of {names(self.seen)}"

    def apply(self, engram: Record, ctx: Context) -> tuple[Record, Events]:
        return review.set_validity(engram, self.valid_from, self.valid_until, ctx.reviewer, ctx.now)


@dataclass(frozen=True)
class ExpireNow(EngramCommand):
    seen: tuple[Seen, ...]
    action: ClassVar[str] = "expire_now"

    def targets(self) -> tuple[Seen, ...]:
        return self.seen

    def label(self) -> str:
        return f"expire {names(self.seen)} now"

    def apply(self, engram: Record, ctx: Context) -> tuple[Record, Events]:
        return review.expire_now(engram, ctx.reviewer, ctx.now)


@dataclass(frozen=True)
class SettleDuplicates(EngramCommand):
    """Keep `representative` (approved when `approve`) and reject each other engram as its duplicate: one action,
    one undo, one event per engram. `shown` is the statement the Clusters pane displayed per id, when it did."""

    representative: str
    seen: tuple[Seen, ...]
    approve: bool
    level: str = "decided"
    shown: tuple[tuple[str, str], ...] | None = None
    roles: tuple[tuple[str, str, bool], ...] | None = None  # (id, scope, listed as a draft) as the pane showed them
    action: ClassVar[str] = "settle_duplicates"

    def targets(self) -> tuple[Seen, ...]:
        return self.seen

    def label(self) -> str:
        others = [s for s in dict.fromkeys(s.id for s in self.seen) if s != self.representative]
        return f"keep {self.representative}, reject {len(others)} as its duplicates"

    def check(self, lookup: Lookup) -> None:
        for item in self.seen:  # only drafts are rejected as duplicates: never an engram already decided
            if item.id != self.representative and not _draft(item.expected()):
                raise ChangedSinceError(item.id, ["commitment"])
        if self.roles is not None:  # the scope column and the draft/approved role the pane listed
            roles = {i: (scope, draft) for i, scope, draft in self.roles}
            for item in self.seen:
                now = item.expected()
                if item.id in roles and str(now.get("scope") or "") != roles[item.id][0]:
                    raise ChangedSinceError(item.id, ["scope"])
                if item.id in roles and _draft(now) != roles[item.id][1]:
                    raise ChangedSinceError(item.id, ["commitment"])
        if not self.approve:
            self._check_kept(lookup)
        if self.shown is None:
            return
        shown = dict(self.shown)
        for item in self.seen:  # a verdict only on the text the pane displayed
            if item.expected().get("statement") != shown.get(item.id):
                raise ChangedSinceError(item.id, ["statement"])

    def _check_kept(self, lookup: Lookup) -> None:
        """Kept as it is, but the others are rejected as duplicates *of it*: it must still be the approved engram
        the pane listed (active, not a draft, its scope and text as shown)."""
        kept = lookup(self.representative)
        if kept is None or kept.status != "active":
            raise ChangedSinceError(self.representative, ["status"])
        if kept.is_draft:
            raise ChangedSinceError(self.representative, ["commitment"])
        listed = {i: scope for i, scope, _draft in self.roles or ()}
        if self.representative in listed and kept.scope != listed[self.representative]:
            raise ChangedSinceError(self.representative, ["scope"])
        if self.shown is not None and kept.statement != dict(self.shown).get(self.representative):
            raise ChangedSinceError(self.representative, ["statement"])

    def unchanged(self) -> tuple[tuple[str, dict[str, object]], ...]:
        """Kept without approving: the others are rejected as duplicates of its text as shown (on disk too)."""
        if self.approve:
            return ()
        expected: dict[str, object] = {"status": "active"}
        if self.shown is not None and self.representative in dict(self.shown):
            expected["statement"] = dict(self.shown)[self.representative]
        return ((self.representative, expected),)

    def apply(self, engram: Record, ctx: Context) -> tuple[Record, Events]:
        if engram.get("id") == self.representative:
            return review.approve(engram, self.level, "", ctx.reviewer, ctx.now)
        return reject_as_duplicate(engram, self.representative, ctx.reviewer, ctx.now)


def _draft(fingerprint: dict[str, object]) -> bool:
    return fingerprint.get("commitment") == "draft" and fingerprint.get("status") == "active"


@dataclass(frozen=True)
class SettleDecision(EngramCommand):
    """A team disagreement settled by this reviewer: keep the approval (at `level`) or the rejection."""

    seen: Seen
    keep: str
    level: str = "decided"
    note: str = ""
    action: ClassVar[str] = "settle_disagreement"

    def targets(self) -> tuple[Seen, ...]:
        return (self.seen,)

    def label(self) -> str:
        return f"settle {self.seen.id}: keep {self.keep}"

    def apply(self, engram: Record, ctx: Context) -> tuple[Record, Events]:
        return settle.settle_decision(engram, self.keep, self.level, self.note, ctx.reviewer, ctx.now)


@dataclass(frozen=True)
class Supersede(EngramCommand):
    """`newer` replaces `older`: relations.supersedes on the newer, superseded_by on the older. Nothing retired."""

    seen: tuple[Seen, ...]
    newer: str
    older: str
    action: ClassVar[str] = "supersede"

    def targets(self) -> tuple[Seen, ...]:
        return self.seen

    def label(self) -> str:
        return f"{self.newer} replaces {self.older}"

    def check(self, lookup: Lookup) -> None:
        newer = lookup(self.newer)
        if newer is not None and self.older in newer.relation("supersedes"):
            raise ActionRefused(f"{self.newer} already supersedes {self.older}")

    def apply(self, engram: Record, ctx: Context) -> tuple[Record, Events]:
        name, target = ("supersedes", self.older) if engram.get("id") == self.newer else ("superseded_by", self.newer)
        view = EngramView(engram)
        before = view.relation(name)
        add_relation(engram, name, target)
        engram["updated_at"] = iso_ms(ctx.now)
        data = {"action": "supersede", "field": f"relations.{name}", "from": before, "to": view.relation(name)}
        return engram, [review.make_event("engram_updated", str(engram["id"]), ctx.now, data, ctx.reviewer)]


# -- one tension record ----------------------------------------------------------------------------------------


class TensionCommand:
    """A decision on one tension record as the reviewer saw it; its event says the status before and after."""

    action: ClassVar[str]  # the journal's and the undo's name
    event: ClassVar[str]  # data.action of the tension_reviewed event
    changes_status: ClassVar[bool] = True  # refused when the status would stay as it is

    seen: Seen

    def label(self) -> str:
        raise NotImplementedError

    def validate(self) -> None:
        """Refuse a malformed command before anything is looked up."""

    def decide(self, record: Record, ctx: Context) -> Record:
        raise NotImplementedError

    def event_fields(self) -> dict[str, object]:
        return {}

    def record_edit(self, ctx: Context, fields: Mapping[str, object]) -> Apply:
        """The tension record's edit and its `tension_reviewed` event (from → to)."""

        def apply(value: Record) -> tuple[Record, Events]:
            before = value.get("status", "detected")
            event = review.tension_event(self.event, value, ctx.reviewer, ctx.now, **fields)
            new = self.decide(value, ctx)
            if self.changes_status and new.get("status", "detected") == before:
                raise ActionRefused(f"{self.seen.id} is already {before}; nothing to change")
            event["data"]["to"] = new.get("status")  # type: ignore[index]
            return new, [event]

        return apply


@dataclass(frozen=True)
class ConfirmTension(TensionCommand):
    seen: Seen
    action: ClassVar[str] = "confirm_tension"
    event: ClassVar[str] = "confirm"

    def label(self) -> str:
        return f"confirm {self.seen.id}"

    def decide(self, record: Record, ctx: Context) -> Record:
        return review.confirm_tension(record)


@dataclass(frozen=True)
class DismissTension(TensionCommand):
    seen: Seen
    reason: str = ""
    action: ClassVar[str] = "dismiss_tension"
    event: ClassVar[str] = "dismiss"

    def label(self) -> str:
        return f"dismiss {self.seen.id}"

    def decide(self, record: Record, ctx: Context) -> Record:
        return review.dismiss_tension(record)

    def event_fields(self) -> dict[str, object]:
        return {"reason": self.reason or None}


# -- tensions.yaml, then engrams.yaml --------------------------------------------------------------------------


@dataclass(frozen=True)
class EngramSteps:
    """The engrams step of a two-file command: the edits, and the engrams that must be as the reviewer saw them
    beside the tension (in the order they are checked)."""

    edits: tuple[tuple[str, Apply], ...]
    shown: tuple[str, ...]
    fields: Mapping[str, object]  # what the tension's event adds (winner, loser, the split's dates)


class TwoFileCommand(TensionCommand):
    def engram_steps(self, record: Mapping[str, object], lookup: Lookup, ctx: Context) -> EngramSteps:
        raise NotImplementedError


def _pair(record: Mapping[str, object]) -> tuple[str, str]:
    return str(record.get("engram_a")), str(record.get("engram_b"))


@dataclass(frozen=True)
class ResolveTension(TwoFileCommand):
    """The winner stays; the loser is retired. PLUR's order: the record first, then the loser."""

    seen: Seen
    winner: str
    action: ClassVar[str] = "resolve_tension"
    event: ClassVar[str] = "resolve"

    def label(self) -> str:
        return f"resolve {self.seen.id} for {self.winner}"

    def loser(self, record: Mapping[str, object]) -> str:
        a, b = _pair(record)
        return b if self.winner == a else a

    def engram_steps(self, record: Mapping[str, object], lookup: Lookup, ctx: Context) -> EngramSteps:
        tension_id, winner = self.seen.id, self.winner
        if winner not in (record.get("engram_a"), record.get("engram_b")):
            raise ActionRefused(f"{winner} is not one of the two engrams of {tension_id}")
        loser = self.loser(record)
        kept = lookup(winner)
        if kept is not None and kept.retired:
            raise ActionRefused(f"{winner} is already retired; it cannot win {tension_id}")
        if lookup(loser) is None:
            raise ActionRefused(f"{loser} is not in the store; resolve {tension_id} by hand or dismiss it")
        if kept is None:
            raise ActionRefused(f"{winner} is not in the store (or PLUR quarantines it); it cannot win {tension_id}")

        def retire(engram: Record) -> tuple[Record, Events]:
            return review.retire_loser(engram, tension_id, winner, ctx.reviewer, ctx.now)

        return EngramSteps(((loser, retire),), (loser, winner), {"winner": winner, "loser": loser})

    def decide(self, record: Record, ctx: Context) -> Record:
        return review.resolve_tension(record, self.winner, ctx.now)


@dataclass(frozen=True)
class SplitInTime(TwoFileCommand):
    """Both were true at different times: the earlier engram ends the day before `at`, the later one starts on
    `at`, and the tension is dismissed with that reason. Nothing is retired."""

    seen: Seen
    at: str
    action: ClassVar[str] = "split_in_time"
    event: ClassVar[str] = "split_in_time"

    def label(self) -> str:
        return f"split {self.seen.id} at {self.at}"

    def validate(self) -> None:
        review.check_bound(self.at, "split date")
        if len(self.at) != 10:
            raise ActionRefused("split in time takes a date (YYYY-MM-DD)")

    def order(self, record: Mapping[str, object], lookup: Lookup) -> tuple[str, str]:
        a, b = _pair(record)
        ea, eb = lookup(a), lookup(b)
        if ea is None or eb is None:
            raise ActionRefused(f"both engrams of {self.seen.id} must be in the store to split it in time")
        return split_order(ea, eb)

    def engram_steps(self, record: Mapping[str, object], lookup: Lookup, ctx: Context) -> EngramSteps:
        earlier, later = self.order(record, lookup)
        a, b = _pair(record)

        def window(start: str | None, end: str | None) -> Apply:
            def apply(engram: Record) -> tuple[Record, Events]:
                current = EngramView(engram).window
                start_, end_ = start or current.valid_from, end or current.valid_until
                return review.set_validity(engram, start_, end_, ctx.reviewer, ctx.now, "split_in_time")

            return apply

        before = review.day_before(self.at)
        edits = ((earlier, window(None, before)), (later, window(self.at, None)))
        fields = {
            "reason": f"both true at different times: {earlier} until {before}, {later} from {self.at}",
            "earlier": earlier,
            "later": later,
            "at": self.at,
        }
        return EngramSteps(edits, (a, b), fields)

    def decide(self, record: Record, ctx: Context) -> Record:
        return review.dismiss_tension(record)


@dataclass(frozen=True)
class SettleTwoWinners(TwoFileCommand):
    """One winner for a tension two machines resolved differently: the record names it, it is active again."""

    seen: Seen
    winner: str
    action: ClassVar[str] = "settle_two_winners"
    event: ClassVar[str] = "settle_two_winners"
    changes_status: ClassVar[bool] = False  # resolved stays resolved; the winner changes

    def label(self) -> str:
        return f"settle {self.seen.id} for {self.winner}"

    def engram_steps(self, record: Mapping[str, object], lookup: Lookup, ctx: Context) -> EngramSteps:
        tension_id = self.seen.id
        if self.winner not in _pair(record):
            raise ActionRefused(f"{self.winner} is not one of the two engrams of {tension_id}")

        def reinstate(engram: Record) -> tuple[Record, Events]:
            return settle.reinstate_winner(engram, tension_id, ctx.reviewer, ctx.now)

        return EngramSteps(((self.winner, reinstate),), (self.winner,), {"winner": self.winner})

    def decide(self, record: Record, ctx: Context) -> Record:
        return settle.set_winner(record, self.winner, ctx.now)


# -- a new tension record --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordTension:
    """A contradiction the reviewer confirms as a new record in PLUR's shape (detected), or marks as "not a
    conflict" (dismissed, so neither plur_desk nor PLUR's scan suggests the pair again). Not undoable: a new record
    has no earlier state to go back to (dismiss or resolve it instead)."""

    id_a: str
    id_b: str
    confidence: float
    reason: str
    dismissed: bool = False
    seen: tuple[Seen, ...] = ()  # the two engrams as shown when the reviewer answered (empty: a script's own)
    action: ClassVar[str] = "record_tension"

    def journal_label(self) -> str:
        return f"{'not a conflict' if self.dismissed else 'record tension'}: {pair_key(self.id_a, self.id_b)}"

    def label(self, ident: str) -> str:
        verb = "recorded not a conflict" if self.dismissed else "recorded tension"
        return f"{verb} {ident} between {self.id_a} and {self.id_b}"

    def make(self, valid: list[Record], a: EngramView, b: EngramView, ctx: Context) -> tuple[Record, Events]:
        """The new record (given every valid record already there, read under the tensions lock) and its event.
        Refused when an engram differs from what the reviewer was shown (`seen`)."""
        for shown in self.seen:
            differing = shown.moved(engram_fingerprint(dict((a if shown.id == a.id else b).record)))
            if shown.id not in (a.id, b.id) or differing:
                raise ChangedSinceError(shown.id, differing or ["id"])
        key = pair_key(self.id_a, self.id_b)
        for record in valid:
            if pair_key(str(record.get("engram_a")), str(record.get("engram_b"))) == key:
                raise ActionRefused(
                    f"{self.id_a} and {self.id_b} are already recorded as {record.get('id')} "
                    f"({record.get('status', 'detected')})"
                )
        ident = next_tension_id([str(r.get("id", "")) for r in valid], ctx.now)
        status = "dismissed" if self.dismissed else "detected"
        record = new_tension(ident, dict(a.record), dict(b.record), self.confidence, self.reason, ctx.now, status)
        data: dict[str, object]
        if self.dismissed:
            kind = "tension_reviewed"
            data = {"action": "not_a_conflict", "tension_id": ident, "engram_b": self.id_b, "from": None}
            data |= {"to": "dismissed", "reason": self.reason}
        else:
            kind = "contradiction_detected"
            data = {"tension_id": ident, "engram_b": self.id_b, "confidence": record["confidence"]}
            data |= {"reason": self.reason, "category": record["category"], "action": "record_tension"}
        return record, [review.make_event(kind, self.id_a, ctx.now, data, ctx.reviewer)]
