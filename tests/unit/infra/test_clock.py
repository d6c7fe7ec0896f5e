"""Instants as JavaScript reads and writes them: `iso_ms` is `Date.prototype.toISOString()`, `parse_instant` is
`Date.parse` for the ISO forms PLUR writes. Checked against the real Node."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from datetime import UTC, datetime, timedelta

import pytest

from plur_desk.infra.clock import FixedClock, iso_ms, parse_instant

# The forms PLUR and agents write: we must read each exactly as Node does.
ISO = [
    "2026-01-01",
    "2026-01-01T10:00:00Z",
    "2026-01-01T10:00:00.123Z",
    "2026-01-01T10:00:00",
    "2026-01-01T10:00:00+02:00",
    "2026-01-01T10:00:00.5-05:30",
    "2026-01-01T10:00Z",
    "2026-01-01t10:00:00z",
    "1999-12-31T23:59:59.999Z",
    "2026-12-02T15:00:00.000Z",
]
# Not ISO: V8 reads these with its legacy, implementation-defined parser (even rolling 2026-02-30 over into March).
# We do not guess: they are unparseable here, and the Validity pane says so instead of showing a date.
NOT_ISO_UNPARSEABLE = ["2026-02-30", "2026-1-1", "2026-001", "+002026-01-01T00:00:00Z", "2026-01-01T24:00:00Z"]


def _node(script: str, payload: object) -> object:
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node is needed as the oracle")
    done = subprocess.run(
        [node, "-e", script], input=json.dumps(payload), capture_output=True, text=True, check=True, timeout=60
    )
    return json.loads(done.stdout)


def test_iso_forms_parse_to_the_instant_node_parses():
    script = (
        "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const a=JSON.parse(s);"
        "console.log(JSON.stringify(a.map(x=>{const t=Date.parse(x);return isNaN(t)?null:new Date(t).toISOString()})))})"
    )
    expected = _node(script, ISO)
    ours = [iso_ms(p) if (p := parse_instant(text)) is not None else None for text in ISO]
    assert ours == expected
    assert None not in ours


def test_non_iso_forms_are_unparseable_rather_than_guessed():
    assert [parse_instant(text) for text in NOT_ISO_UNPARSEABLE] == [None] * len(NOT_ISO_UNPARSEABLE)
    assert parse_instant("") is None
    assert parse_instant("not a date") is None


def test_iso_ms_is_node_to_iso_string():
    rng = random.Random(7)
    base = datetime(1970, 1, 1, tzinfo=UTC)
    millis = [rng.randrange(0, 4_102_444_800_000) for _ in range(200)] + [0, 999, 1_000, 86_399_999]
    script = (
        "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{"
        "console.log(JSON.stringify(JSON.parse(s).map(m=>new Date(m).toISOString())))})"
    )
    expected = _node(script, millis)
    assert [iso_ms(base + timedelta(milliseconds=m)) for m in millis] == expected


def test_iso_ms_converts_other_zones_to_utc_and_truncates_to_milliseconds():
    moment = datetime(2026, 1, 1, 12, 0, 0, 999_999, tzinfo=UTC).astimezone()
    assert iso_ms(moment) == "2026-01-01T12:00:00.999Z"


def test_fixed_clock_moves_only_when_told():
    clock = FixedClock(datetime(2026, 12, 2, 15, 0, tzinfo=UTC))
    assert clock.now() == clock.now()
    clock.advance(90)
    assert iso_ms(clock.now()) == "2026-12-02T15:01:30.000Z"
