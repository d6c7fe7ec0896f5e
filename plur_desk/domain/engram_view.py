"""EngramView: a read-only view over one engram record, where the rules every layer asks about are written once.

PLUR's engram is passthrough at the top level, so the record stays the plain dict it was read as (every key kept,
unknown ones too); the view only reads it. "Superseded", the validity window's state, expiring now and which side of
a split is the earlier one are answered here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from types import MappingProxyType

from plur_desk.domain.plur_rules.validity import Window
from plur_desk.infra.clock import iso_ms

OUTSIDE_WINDOW = ("expired", "not_yet_valid")  # PLUR 0.20 does not inject an engram in these states


class EngramView:
    __slots__ = ("_record",)

    def __init__(self, record: Mapping[str, object]) -> None:
        self._record = record

    @property
    def record(self) -> Mapping[str, object]:
        return MappingProxyType(dict(self._record))

    def get(self, key: str, default: object = None) -> object:
        return self._record.get(key, default)

    def text(self, key: str) -> str:
        """A field as display text ('' when absent or null)."""
        value = self._record.get(key)
        return "" if value is None else str(value)

    def listed(self, key: str) -> list[str]:
        """A list field's items as text ([] when absent or not a list)."""
        value = self._record.get(key)
        return [str(item) for item in value] if isinstance(value, list | tuple) else []

    @property
    def scope(self) -> str:
        return self.text("scope")

    @property
    def domain(self) -> str:
        return self.text("domain")

    @property
    def write_count(self) -> object:
        """How often the same statement was written in this scope, as stored (PLUR's default 1)."""
        return self._record.get("write_count", 1)

    @property
    def recurrence_count(self) -> object:
        """How often it recurred in other scopes, as stored (PLUR's default 0)."""
        return self._record.get("recurrence_count", 0)

    @property
    def session_ids(self) -> list[str]:
        """The agent sessions its sources name, sorted, each once."""
        sources = self._record.get("sources")
        if not isinstance(sources, list):
            return []
        found = {str(s.get("session_id")) for s in sources if isinstance(s, dict) and s.get("session_id")}
        return sorted(found)

    @property
    def relations(self) -> list[tuple[str, list[str]]]:
        """Each relation that names engrams (a non-empty list), in stored order."""
        relations = self._record.get("relations")
        if not isinstance(relations, dict):
            return []
        return [(str(k), [str(x) for x in v]) for k, v in relations.items() if isinstance(v, list) and v]

    @property
    def review(self) -> Mapping[str, object] | None:
        """The review record PLUR keeps on a decided engram (who, when, state), or None."""
        record = self._record.get("review")
        return MappingProxyType(record) if isinstance(record, dict) else None

    @property
    def id(self) -> str:
        return str(self._record.get("id"))

    @property
    def statement(self) -> str:
        return str(self._record.get("statement", ""))

    @property
    def status(self) -> str:
        return str(self._record.get("status", ""))

    @property
    def commitment(self) -> str:
        return str(self._record.get("commitment", ""))

    @property
    def is_draft(self) -> bool:
        """A draft waiting for review: PLUR keeps it out of the model's context until a human approves it."""
        return is_draft(self._record)

    @property
    def retired(self) -> bool:
        return self._record.get("status") == "retired"

    def relation(self, name: str) -> list[object]:
        relations = self._record.get("relations")
        values = relations.get(name) if isinstance(relations, dict) else None
        return list(values) if isinstance(values, list) else []

    @property
    def superseded_by(self) -> tuple[str, ...]:
        """The engrams that replace this one (`relations.superseded_by`); empty when nothing does."""
        return tuple(str(x) for x in self.relation("superseded_by"))

    @property
    def superseded(self) -> bool:
        return superseded(self._record)

    @property
    def window(self) -> Window:
        return Window.of(self._record)

    def window_state(self, now: datetime) -> str:
        """'current', 'expiring_soon', 'expired' or 'not_yet_valid' as PLUR 0.20 evaluates the window at `now`."""
        return self.window.state(now)

    def outside_window(self, now: datetime) -> str | None:
        """'expired' or 'not_yet_valid' when PLUR would not inject it at `now`, else None."""
        return outside_window(self._record, now)

    def expire_now_window(self, now: datetime) -> tuple[str | None, str] | None:
        """The window that ends at this second (valid_from kept), or None when it has already closed."""
        window = self.window
        if window.state(now) == "expired":
            return None
        return window.valid_from, iso_ms(now).split(".")[0] + "Z"

    @property
    def created(self) -> str:
        return created_of(self._record)

    @property
    def attribution(self) -> tuple[str, str, str]:
        return attribution_of(self._record)


def is_draft(record: Mapping[str, object]) -> bool:
    """A draft waiting for review (EngramView.is_draft, without building a view: the queue asks it of every
    engram)."""
    return record.get("commitment") == "draft" and record.get("status") == "active"


def superseded(record: Mapping[str, object]) -> bool:
    """Whether another engram replaces this one (`relations.superseded_by` names at least one)."""
    relations = record.get("relations")
    values = relations.get("superseded_by") if isinstance(relations, dict) else None
    return isinstance(values, list) and len(values) > 0


def outside_window(record: Mapping[str, object], now: datetime) -> str | None:
    """'expired' or 'not_yet_valid' when PLUR would not inject the engram at `now`, else None."""
    if not isinstance(record.get("temporal"), dict):
        return None  # no window (Window.of): always current
    state = Window.of(record).state(now)
    return state if state in OUTSIDE_WINDOW else None


def split_order(a: EngramView, b: EngramView) -> tuple[str, str]:
    """Splitting a tension in time: (earlier, later) by creation, ties by id, so both sides agree on the order."""
    return (a.id, b.id) if (a.created, a.id) <= (b.created, b.id) else (b.id, a.id)


def created_of(engram: Mapping[str, object]) -> str:
    value = engram.get("created_at")
    if isinstance(value, str):
        return value
    sources = engram.get("sources")
    if isinstance(sources, list) and sources and isinstance(sources[0], dict):
        stored = sources[0].get("stored_at")
        if isinstance(stored, str):
            return stored
    ident = str(engram.get("id", ""))
    parts = ident.split("-")
    if len(parts) >= 5 and parts[1].isdigit():
        return f"{parts[1]}-{parts[2]}-{parts[3]}"
    if len(parts) == 4 and len(parts[2]) == 4:
        return f"{parts[1]}-{parts[2][:2]}-{parts[2][2:]}"
    return ""


def session_of(engram: Mapping[str, object]) -> str:
    """The agent session that last wrote it: the newest `sources[].session_id` ('' when none names one)."""
    sources = engram.get("sources")
    for source in reversed(sources) if isinstance(sources, list) else []:
        if isinstance(source, dict) and isinstance(source.get("session_id"), str) and source["session_id"]:
            return str(source["session_id"])
    return ""


def attribution_of(engram: Mapping[str, object]) -> tuple[str, str, str]:
    attribution = engram.get("attribution")
    if not isinstance(attribution, dict):
        return ("(unattributed)", "", "")
    writer = str(attribution.get("asserted_by") or "(unattributed)")
    model = attribution.get("model")
    runtime = attribution.get("runtime")
    model_name = str(model.get("name", "")) if isinstance(model, dict) else ""
    runtime_name = str(runtime.get("name", "")) if isinstance(runtime, dict) else ""
    return writer, model_name, runtime_name
