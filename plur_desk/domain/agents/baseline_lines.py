"""The baseline's lines as events: what one signed line says (a claim and the values of some records), built and read.

A line is shaped like a history event (`event`, `engram_id`, `timestamp`, `data`, `actor`) so it is signed and
verified exactly as a human decision is. Its `data.claim` says why it was written: `watching` (a store seen for the
first time: the state as found, claiming nothing about its content), `decided` (the values a reviewer's decision
left), `ratified` (an agent change the reviewer let stand), `reverted` (values put back). Large lines (a whole store
at once) carry their values packed: zlib-compressed JSON in base64, so a 50,000-engram snapshot is a few MB. Beside
the watched values a line may hold, under `restore`, each engram's `RESTORE_FIELDS` that it has (what Revert puts
back besides them); a line without it (written before they were held) leaves them unknown.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from collections.abc import Mapping
from datetime import datetime
from typing import cast

from plur_desk.domain.agents.agent_changes import ENGRAM_FIELDS, RESTORE_FIELDS, TENSION_FIELDS, Values
from plur_desk.domain.review import Reviewer, make_event

EVENT = "plur_desk_baseline"
CLAIMS = ("watching", "decided", "ratified", "reverted")
CLAIM_OF_ACTION = {"ratify_agent_change": "ratified", "revert_agent_change": "reverted"}  # a decision's line
PACK_OVER = 64  # records: above this a line's values are packed
CHUNK = 1_000  # records per line of a whole-store snapshot (each line is signed and verified once; its JSON is
# written in one call that keeps the interpreter lock: 5,000 records a line held it 20-30 ms per line, beside the
# window, at a store's first decision)


class BadLine(ValueError):
    """A line that is not a baseline line plur_desk could have written."""


def _plain(value: object) -> object:
    return value if value is None or isinstance(value, (str, bool, int, float)) else str(value)


def make_line(
    claim: str,
    engrams: Mapping[str, Values],
    tensions: Mapping[str, Values],
    reviewer: Reviewer,
    now: datetime,
    *,
    note: str = "",
    extras: Mapping[str, Mapping[str, object]] | None = None,
    since: Since | None = None,
) -> dict[str, object]:
    """The unsigned event of one line (the caller signs it with the reviewer's key). `since`: records whose values
    the line puts back as they stood from an earlier date (the undo of a ratification), with that date."""
    return line_event(claim, line_values(engrams, tensions, extras), reviewer, now, note=note, since=since)


def line_values(
    engrams: Mapping[str, Values],
    tensions: Mapping[str, Values],
    extras: Mapping[str, Mapping[str, object]] | None = None,
) -> dict[str, object]:
    """The values a line holds, as JSON holds them (record ids are strings): JSON gives them back unchanged, so
    `read_values` reads the same from these as from the line."""
    values: dict[str, object] = {
        "engrams": {k: [_plain(v) for v in vals] for k, vals in engrams.items()},
        "tensions": {k: [_plain(v) for v in vals] for k, vals in tensions.items()},
    }
    if extras:
        values["restore"] = {k: _json(dict(v)) for k, v in extras.items() if k in engrams}
    return values


def line_event(
    claim: str,
    values: dict[str, object],
    reviewer: Reviewer,
    now: datetime,
    *,
    note: str = "",
    since: Since | None = None,
) -> dict[str, object]:
    """The unsigned event of a line holding `values` (`line_values`)."""
    if claim not in CLAIMS:
        raise ValueError(f"unknown baseline claim {claim!r}")
    data: dict[str, object] = {"claim": claim, "v": 1}
    if note:
        data["note"] = note
    if since and any(since.values()):
        data["since"] = {table: dict(dates) for table, dates in since.items() if dates}
    if sum(len(cast(dict[str, object], values[table])) for table in ("engrams", "tensions")) > PACK_OVER:
        raw = json.dumps(values, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        data["packed"] = base64.b64encode(zlib.compress(raw, 6)).decode("ascii")
    else:
        data.update(values)
    return make_event(EVENT, "", now, data, reviewer)


def _json(value: object) -> object:
    """A value as JSON holds it (a date YAML read as one becomes its text)."""
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    return _plain(value)


def chunks(
    engrams: Mapping[str, Values], tensions: Mapping[str, Values]
) -> list[tuple[dict[str, Values], dict[str, Values]]]:
    """A whole-store snapshot cut into lines of at most CHUNK records (tensions on the first)."""
    items = list(engrams.items())
    out: list[tuple[dict[str, Values], dict[str, Values]]] = []
    for start in range(0, max(len(items), 1), CHUNK):
        out.append((dict(items[start : start + CHUNK]), dict(tensions) if start == 0 else {}))
    return out


Extras = dict[str, dict[str, object]]
Since = dict[str, dict[str, str]]  # "engrams" / "tensions" -> record id -> the date its values stand from


def since_of(event: Mapping[str, object], at: str) -> Since:
    """The earlier dates a line says its records' values stand from (none later than the line itself: a line
    cannot say its values were watched from after it was signed); what is not a date string is left out."""
    data = event.get("data")
    raw = data.get("since") if isinstance(data, dict) else None
    if not isinstance(raw, dict):
        return {}
    out: Since = {}
    for table in ("engrams", "tensions"):
        dates = raw.get(table)
        if isinstance(dates, dict):
            out[table] = {str(k): v for k, v in dates.items() if isinstance(v, str) and v <= at}
    return out


def read_line(event: Mapping[str, object]) -> tuple[str, dict[str, Values], dict[str, Values], Extras]:
    """(claim, engram values, tension values, engram extras) of a line; BadLine when it is not one."""
    data = event.get("data")
    if event.get("event") != EVENT or not isinstance(data, dict):
        raise BadLine("not a baseline line")
    claim = data.get("claim")
    if claim not in CLAIMS:
        raise BadLine(f"unknown claim {claim!r}")
    values: object = data
    if "packed" in data:
        try:
            values = json.loads(zlib.decompress(base64.b64decode(str(data["packed"]), validate=True)))
        except (binascii.Error, zlib.error, ValueError) as exc:
            raise BadLine(f"packed values cannot be read: {exc}") from None
    return (str(claim), *read_values(values))


def read_values(values: object) -> tuple[dict[str, Values], dict[str, Values], Extras]:
    """(engram values, tension values, engram extras) of a line's values, read from its JSON or as `line_values`
    made them (the same: JSON gives those back unchanged); BadLine when they are not a line's."""
    if not isinstance(values, dict):
        raise BadLine("values are not a mapping")
    engrams = _table(values.get("engrams"), len(ENGRAM_FIELDS))
    return engrams, _table(values.get("tensions"), 2), _extras(values.get("restore"), engrams)


def _extras(raw: object, engrams: Mapping[str, Values]) -> Extras:
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(isinstance(v, dict) for v in raw.values()):
        raise BadLine("restore values are not a mapping of mappings")
    if not engrams.keys() >= raw.keys():
        raise BadLine("restore values for an engram the line does not name")
    return {k: {f: v[f] for f in RESTORE_FIELDS if f in v} for k, v in raw.items()}


def _table(raw: object, width: int) -> dict[str, Values]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise BadLine("values are not a mapping")
    try:  # one pass in C over 5,000 records a line; a record of another shape refuses the whole line
        table = dict(zip(raw, map(tuple, raw.values()), strict=True))
    except TypeError:
        raise BadLine("a record's values are not a list") from None
    if any(len(v) != width for v in table.values()):
        raise BadLine(f"a record without its {width} values")
    return table


__all__ = [
    "CHUNK",
    "CLAIMS",
    "EVENT",
    "TENSION_FIELDS",
    "BadLine",
    "chunks",
    "line_event",
    "line_values",
    "make_line",
    "read_line",
    "read_values",
    "since_of",
]
