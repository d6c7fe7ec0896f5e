"""Agent changes: what differs between the watched baseline and the store that no verified human decision explains.

Pure functions over (baseline, store snapshot, history events): no I/O, no clock, no signature code (the caller
passes `human`, which says whether an event is a verified human decision). The baseline holds, per engram, the
fields an agent can move without passing the draft gate (`ENGRAM_FIELDS`) and, per tension, its status and winner.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from plur_desk.infra.jobs import giving_way

ENGRAM_FIELDS: tuple[str, ...] = (
    "statement",
    "commitment",
    "status",
    "valid_from",
    "valid_until",
    "scope",
    "type",
    "pinned",
    "content_hash",
)
TENSION_FIELDS: tuple[str, ...] = ("status", "resolved_by")
# Fields PLUR's agent paths move beside the watched ones (forget zeroes `write_count` and sets `rationale`, a resolve
# sets the loser's `rationale`, dedup and `procedure_evolved` bump `write_count`, `engram_version` and
# `previous_version_ref`, and may set `visibility`): not compared, only held so that Revert puts them back exactly.
# `updated_at` is not among them: a revert is a new write, and the merge driver keeps the later stamp.
RESTORE_FIELDS: tuple[str, ...] = ("write_count", "rationale", "visibility", "engram_version", "previous_version_ref")
KINDS = (
    "created_active",
    "promoted",
    "rewritten",
    "retired",
    "restored",
    "validity_changed",
    "rescoped",
    "pinned",
    "tension_created",
    "tension_confirmed",
    "tension_dismissed",
    "tension_resolved",
    "other",
)
Values = tuple[object, ...]
Event = Mapping[str, object]
# The history events that record each kind of change; a change no such event records is `silent`.
_RECORDED_BY = {
    "created_active": ("engram_created",),
    "retired": ("engram_retired",),
    "restored": ("engram_restored", "engram_updated"),
    "rescoped": ("engram_rescoped", "engram_updated"),
    "tension_created": ("contradiction_detected",),
}
_UPDATED = ("engram_updated", "engram_promoted", "procedure_evolved", "engram_duplicate_absorbed")


def engram_values(engram: Mapping[str, object]) -> Values:
    """The watched fields of an engram, in `ENGRAM_FIELDS` order (PLUR's defaults: pinned absent = False)."""
    get = engram.get
    temporal = get("temporal")
    if not isinstance(temporal, dict):
        temporal = {}
    return (
        get("statement"),
        get("commitment"),
        get("status"),
        temporal.get("valid_from"),
        temporal.get("valid_until"),
        get("scope"),
        get("type"),
        get("pinned") is True,
        get("content_hash"),
    )


def engram_extras(engram: Mapping[str, object]) -> dict[str, object]:
    """The `RESTORE_FIELDS` the engram holds (a field it lacks is left out: absent, not null)."""
    return {name: engram[name] for name in RESTORE_FIELDS if name in engram}


def tension_values(record: Mapping[str, object]) -> Values:
    return (record.get("status", "detected"), record.get("resolved_by"))


def as_dict(names: tuple[str, ...], values: Values | None) -> dict[str, object] | None:
    return None if values is None else dict(zip(names, values, strict=True))


@dataclass
class Baseline:
    """The effective baseline: per record, the values of the latest trusted line naming it (by signing time), when
    that line was signed, and when watching began. Lines are taken oldest first (`take_line`), each a dict update."""

    started: str | None = None  # the earliest trusted "watching from here"; None: the store is not watched
    started_by: str = ""
    engrams: dict[str, Values] = field(default_factory=dict)
    tensions: dict[str, Values] = field(default_factory=dict)
    engram_at: dict[str, str] = field(default_factory=dict)
    tension_at: dict[str, str] = field(default_factory=dict)
    extras: dict[str, dict[str, object]] = field(default_factory=dict)  # RESTORE_FIELDS, where a line held them
    latest: str = ""  # the newest line taken (a record's date is when its values last changed: it may be older)

    def take_line(
        self,
        at: str,
        engrams: dict[str, Values],
        tensions: dict[str, Values],
        extras: Mapping[str, dict[str, object]] | None = None,
        since: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        """One trusted line, no older than any taken before (lines merge as a set: the latest signed value wins).
        A record's date is when its values were last set: a line that holds them as they were (a revert, putting the
        baseline's values back) leaves it, so what an agent did after it is still read from then. A line that names
        an engram without its extras (written before they were held) leaves them unknown. `since`: records the line
        puts back as they stood from an earlier date (an undone ratification), dated from then again."""
        self.latest = max(self.latest, at)
        if self.engrams:
            known = self.engrams.get
            self.engram_at.update({i: at for i, v in engrams.items() if known(i) != v})
        else:
            self.engram_at.update(dict.fromkeys(engrams, at))
        if self.tensions:
            known_tension = self.tensions.get
            self.tension_at.update({i: at for i, v in tensions.items() if known_tension(i) != v})
        else:
            self.tension_at.update(dict.fromkeys(tensions, at))
        if since:
            self.engram_at.update({i: d for i, d in since.get("engrams", {}).items() if i in engrams})
            self.tension_at.update({i: d for i, d in since.get("tensions", {}).items() if i in tensions})
        self.engrams.update(engrams)
        if self.extras:
            for ident in engrams:
                self.extras.pop(ident, None)
        self.extras.update(extras or {})
        self.tensions.update(tensions)

    @property
    def watched(self) -> bool:
        return self.started is not None


@dataclass(frozen=True)
class AgentChange:
    """One difference between the baseline and the store, as the Changes queue and `plur-desk changes` list it."""

    id: str
    kind: str
    target: str  # "engram" or "tension"
    before: dict[str, object] | None
    after: dict[str, object] | None
    fields: tuple[str, ...]
    writer: str
    session: str | None
    events: tuple[dict[str, object], ...]
    silent: bool
    also: tuple[str, ...] = ()  # engrams this change moved too (a resolved tension's retired loser)
    session_from: str = ""  # how the session was found when no record or event names it ("" : named)

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "kind": self.kind,
            "target": self.target,
            "before": self.before,
            "after": self.after,
            "fields": list(self.fields),
            "writer": self.writer,
            "session": self.session,
            "events": list(self.events),
            "silent": self.silent,
            "also": list(self.also),
            "session_from": self.session_from,
        }


def _engram_kind(before: Values, after: Values, changed: list[str]) -> str:
    b, a = dict(zip(ENGRAM_FIELDS, before, strict=True)), dict(zip(ENGRAM_FIELDS, after, strict=True))
    if "status" in changed and a["status"] == "retired":
        return "retired"
    if "status" in changed and b["status"] == "retired":
        return "restored"
    if "commitment" in changed and b["commitment"] == "draft" and a["status"] == "active":
        return "promoted"
    if "statement" in changed:
        return "rewritten"
    if "valid_from" in changed or "valid_until" in changed:
        return "validity_changed"
    if "scope" in changed:
        return "rescoped"
    if "pinned" in changed:
        return "pinned"
    return "other"


_TENSION_KIND = {"confirmed": "tension_confirmed", "dismissed": "tension_dismissed", "resolved": "tension_resolved"}


def _writer_and_session(engram: Mapping[str, object] | None, events: list[dict[str, object]]) -> tuple[str, str | None]:
    """Who wrote it: the latest matching event's actor, else the engram's attribution or provenance; the session
    from the newest `sources[].session_id`, else an event's `data.session_id`."""
    writer, session = "", None
    for event in reversed(events):
        actor = event.get("actor")
        if not writer and isinstance(actor, dict) and actor.get("asserted_by"):
            writer = str(actor["asserted_by"])
        data = event.get("data")
        if session is None and isinstance(data, dict) and isinstance(data.get("session_id"), str):
            session = str(data["session_id"])
    if engram is not None:
        sources = engram.get("sources")
        for source in reversed(sources) if isinstance(sources, list) else []:
            if isinstance(source, dict) and isinstance(source.get("session_id"), str) and source["session_id"]:
                session = str(source["session_id"])
                break
        attribution = engram.get("attribution")
        provenance = engram.get("provenance")
        if not writer and isinstance(attribution, dict) and attribution.get("asserted_by"):
            writer = str(attribution["asserted_by"])
        if not writer and isinstance(provenance, dict) and provenance.get("origin"):
            writer = f"origin:{provenance['origin']}"
    return writer or "(unknown writer)", session


INFERRED = "inferred from its engrams' sources (PLUR records no session on a tension decision)"


def _session_of_sides(sides: tuple[str, str], engrams: Mapping[str, Mapping[str, object]], until: str) -> str | None:
    """The session that last wrote either engram of a tension by the time of its decision: the newest
    `sources[].session_id` stored no later than the decision's event (PLUR's resolve event names no session)."""
    best: tuple[str, str] | None = None
    for side in sides:
        engram = engrams.get(side)
        sources = engram.get("sources") if engram is not None else None
        for source in sources if isinstance(sources, list) else []:
            if (
                not isinstance(source, dict)
                or not isinstance(source.get("session_id"), str)
                or not source["session_id"]
            ):
                continue
            stored = str(source.get("stored_at", ""))
            if (not until or stored <= until) and (best is None or stored > best[0]):
                best = (stored, str(source["session_id"]))
    return best[1] if best is not None else None


def _records(kind: str, target: str, events: list[dict[str, object]]) -> bool:
    names = _RECORDED_BY.get(kind, _UPDATED)
    if target == "tension":
        return bool(events)  # any event naming the tension (PLUR writes none for confirm or dismiss)
    return any(event.get("event") in names for event in events)


def _explained(
    events: list[dict[str, object]], human: Callable[[Event], bool], updated_at: object, tension_status: object = None
) -> bool:
    """A verified human decision made after the baseline entry and not overtaken since explains the difference. A
    revert of an agent change, its undo and its redo do not: the reviewer put the baseline back (or took that back),
    and an agent's change since stands unreviewed. Nor does a ratification, its undo or its redo: the baseline's
    line says what it let stand (an undone ratification's line dates the record's values from before it again)."""
    for event in events:
        if not human(event) or (tension_status is None and not _decides_engram(event)) or _on_agent_change(event):
            continue
        stamp = str(event.get("timestamp", ""))
        if tension_status is not None:
            data = event.get("data")
            if isinstance(data, dict) and data.get("to") == tension_status:
                return True
        elif not isinstance(updated_at, str) or updated_at <= stamp:
            return True
    return False


def _on_agent_change(event: Mapping[str, object]) -> bool:
    """A ratification or revert of a listed agent change, or its undo or redo."""
    data = event.get("data")
    if not isinstance(data, dict):
        return False
    steps = (data.get("action"), data.get("undos"), data.get("redos"))
    return "revert_agent_change" in steps or "ratify_agent_change" in steps


def _decides_engram(event: Mapping[str, object]) -> bool:
    """Whether an event decided an engram's values: a tension decision names its engrams but sets none of them, so
    it explains no change to them (`updated_at`, which dates the change, is the agent's to write). Nor does a
    tension change's ratification, which its engram only carries (it stamps that engram's `updated_at`)."""
    data = event.get("data")
    block = data.get("decided") if isinstance(data, dict) else None
    if isinstance(data, dict) and data.get("action") == "ratify_agent_change" and data.get("tension_id"):
        return False
    if isinstance(block, dict):
        return block.get("file") == "engrams"
    return event.get("event") != "tension_reviewed"  # signed before decisions named what they decided


def _after(events: Iterable[dict[str, object]], since: str) -> list[dict[str, object]]:
    return [e for e in events if str(e.get("timestamp", "")) > since]


def _wanted(
    baseline: Baseline,
    engrams: Mapping[str, Mapping[str, object]],
    tensions: Mapping[str, Mapping[str, object]],
    moved: list[tuple[str, Values]],
) -> set[str]:
    """Every id whose events `detect` may ask for: engrams that moved or left, both sides of a tension that moved."""
    wanted = {i for i, _now in moved} | {i for i in baseline.engrams if i not in engrams}
    for ident, record in tensions.items():
        if baseline.tensions.get(ident) != tension_values(record):
            wanted.update(str(record.get(side)) for side in ("engram_a", "engram_b"))
    return wanted


def detect(
    baseline: Baseline,
    engrams: Mapping[str, Mapping[str, object]],
    tensions: Mapping[str, Mapping[str, object]],
    events_of: Callable[[str], list[dict[str, object]]],
    human: Callable[[Event], bool],
    prefetch: Callable[[set[str]], None] | None = None,
    watched: Mapping[str, Values] | None = None,
) -> list[AgentChange]:
    """Every agent change since the baseline, tensions first (a resolution carries its retired loser), each once.
    `prefetch` is told, before any `events_of` call, every id whose events may be asked for (a reader can then
    fetch just those). `watched`: every engram's watched values when the caller has them already (then `engrams`
    is read only for the engrams that moved, and may parse each when asked)."""
    if not baseline.watched:
        return []
    start = str(baseline.started)
    changes: list[AgentChange] = []
    folded: set[str] = set()
    known, known_at = baseline.engrams, baseline.engram_at
    get = known.get
    if watched is None:
        moved = [(i, now) for i, engram in giving_way(engrams.items()) if get(i) != (now := engram_values(engram))]
    else:
        moved = [(i, now) for i, now in giving_way(watched.items()) if get(i) != now]
    if prefetch is not None:
        prefetch(_wanted(baseline, engrams, tensions, moved))
    for ident, record in tensions.items():
        change = _tension_change(baseline, ident, record, engrams, events_of, human, start)
        if change is not None:
            changes.append(change)
            folded.update(change.also)
    for ident, now in moved:  # the common case never gets here: one tuple comparison per engram, above
        values = get(ident)
        engram = engrams[ident]
        if ident in folded:
            continue
        if values is None and (now[2] != "active" or now[1] == "draft"):
            continue  # a new draft waits in the queue; a new retired engram asks nothing
        since = known_at[ident] if values is not None else start
        change = _engram_change(ident, values, since, now, engram, events_of(ident), human)
        if change is not None:
            changes.append(change)
    for ident, values in known.items():
        if ident not in engrams and values[2] != "retired":
            events = _after(events_of(ident), known_at[ident])
            writer, session = _writer_and_session(None, events)
            before = as_dict(ENGRAM_FIELDS, values)
            changes.append(
                AgentChange(
                    ident, "other", "engram", before, None, ENGRAM_FIELDS, writer, session, tuple(events), not events
                )
            )
    return changes


def _engram_change(
    ident: str,
    known: Values | None,
    since: str,
    now: Values,
    engram: Mapping[str, object],
    all_events: list[dict[str, object]],
    human: Callable[[Event], bool],
) -> AgentChange | None:
    events = _after(all_events, since)
    if _explained(events, human, engram.get("updated_at")):
        return None
    events = [e for e in events if not human(e)]
    if known is None:
        kind, before, changed = "created_active", None, ENGRAM_FIELDS
    else:
        changed = tuple(n for n, b, a in zip(ENGRAM_FIELDS, known, now, strict=True) if b != a)
        kind, before = _engram_kind(known, now, list(changed)), as_dict(ENGRAM_FIELDS, known)
    writer, session = _writer_and_session(engram, events)
    silent = not _records(kind, "engram", events)
    return AgentChange(
        ident, kind, "engram", before, as_dict(ENGRAM_FIELDS, now), changed, writer, session, tuple(events), silent
    )


def _tension_events(
    ident: str, events_of: Callable[[str], list[dict[str, object]]], sides: tuple[str, str]
) -> list[dict[str, object]]:
    """Events naming this tension: on either side's engram, carrying its id in `data` or in a retirement's reason."""
    found = []
    for side in sides:
        for event in events_of(side):
            data = event.get("data")
            if isinstance(data, dict) and (data.get("tension_id") == ident or ident in str(data.get("reason", ""))):
                found.append(event)
    return sorted(found, key=lambda e: str(e.get("timestamp", "")))


def _tension_change(
    baseline: Baseline,
    ident: str,
    record: Mapping[str, object],
    engrams: Mapping[str, Mapping[str, object]],
    events_of: Callable[[str], list[dict[str, object]]],
    human: Callable[[Event], bool],
    start: str,
) -> AgentChange | None:
    known = baseline.tensions.get(ident)
    now = tension_values(record)
    if known == now:
        return None
    sides = (str(record.get("engram_a")), str(record.get("engram_b")))
    events = _after(_tension_events(ident, events_of, sides), baseline.tension_at.get(ident, start))
    if _explained(events, human, None, now[0]):
        return None
    events = [e for e in events if not human(e)]
    status = now[0]
    if known is None:
        kind = "tension_created" if status == "detected" else _TENSION_KIND.get(str(status), "other")
        changed = TENSION_FIELDS
    else:
        changed = tuple(n for n, b, a in zip(TENSION_FIELDS, known, now, strict=True) if b != a)
        kind = _TENSION_KIND.get(str(status), "other") if "status" in changed else "other"
    also: tuple[str, ...] = ()
    if status == "resolved" and now[1] in sides:
        loser = sides[1] if now[1] == sides[0] else sides[0]
        loser_known = baseline.engrams.get(loser)
        current = engrams.get(loser)
        if (
            current is not None
            and current.get("status") == "retired"
            and (loser_known is None or loser_known[2] != "retired")
        ):
            also = (loser,)
            events = sorted(
                events + [e for e in _after(events_of(loser), start) if not human(e) and e not in events],
                key=lambda e: str(e.get("timestamp", "")),
            )
    writer, session = _writer_and_session(None, events)  # a tension record names no writer; its events may
    session_from = ""
    if session is None and events:
        session = _session_of_sides(sides, engrams, str(events[-1].get("timestamp", "")))
        session_from = INFERRED if session is not None else ""
    silent = not _records(kind, "tension", events)
    before = as_dict(TENSION_FIELDS, known)
    return AgentChange(
        ident,
        kind,
        "tension",
        before,
        as_dict(TENSION_FIELDS, now),
        changed,
        writer,
        session,
        tuple(events),
        silent,
        also,
        session_from,
    )
