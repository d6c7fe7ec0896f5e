"""Large JSON written a piece at a time: the text is json.dumps's (and, signed, JSON.stringify's in canonical order),
and no single call of the json module's C encoder or decoder covers a whole bulk's journal record (each held the
interpreter lock for all of it, ~10 ms, while the window's thread waited)."""

from __future__ import annotations

import json
import json.encoder
import math
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from plur_desk.domain.review import Patch
from plur_desk.infra import json_pieces
from plur_desk.store.history import chain
from plur_desk.store.journal import JournalRecord, Step
from plur_desk.store.keys.signatures import sign

AWKWARD = ["é ü 日本", "😀 astral", "\ue000 high", 'quo"te\\back', "\x00\x1f\u2028", "", "10", "__proto__"]


def _event(n: int) -> dict[str, object]:
    return {
        "event": "engram_approved",
        "engram_id": f"ENG-2026-12-08-{n:03d}",
        "data": {"statement": AWKWARD[n % len(AWKWARD)] * (n % 3 + 1), "level": n % 2, "10": n, "2": [n, 1.5]},
        "actor": {"kind": "human", "name": "Ada"},
    }


VALUES = [
    [_event(n) for n in range(200)],
    {"steps": [{"events": [_event(n) for n in range(100)], "fields": list(range(40))}], "pid": 7, "x": None},
    {"a": [1.5, math.inf, -0.0, 10**20, True, None] * 10, "b": [("tuple", 1)] * 40},
    {1: list(range(100)), "s": "t"},  # a key json.dumps turns into a string: written whole
    [{2: list(range(40))}, "x", list(range(40))],  # the same inside a list written in pieces
    [[], {}, [[]] * 50, list(range(33))],
]


@pytest.mark.parametrize("value", VALUES)
def test_the_text_is_json_dumps_text_and_reads_back_the_same(value: object) -> None:
    assert json_pieces.dumps(value) == json.dumps(value, ensure_ascii=False)
    # NaN is not equal to itself: compared through its text
    expected = json.loads(json.dumps(value, ensure_ascii=False))
    assert json.dumps(json_pieces.through_json(value)) == json.dumps(expected)


@pytest.mark.parametrize("value", [v for v in VALUES if not isinstance(v, dict) or all(type(k) is str for k in v)])
def test_the_canonical_text_is_the_pure_writers_in_both_orders(value: object) -> None:
    value = json.loads(json.dumps(value, allow_nan=True).replace("Infinity", "1e308"))  # (no infinity in JSON)
    for sort in (False, True):
        assert chain.js_stringify(value, sort=sort) == chain._js_stringify(value, sort)


class _Longest:
    """The longest text the json module's C encoder wrote, and the longest its decoder read, in one call."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.wrote = self.read = 0
        make, loads = json.encoder.c_make_encoder, json.loads

        def making(*args: object) -> object:
            encode = make(*args)

            def encoding(value: object, level: int) -> object:
                chunks = encode(value, level)
                self.wrote = max(self.wrote, sum(map(len, chunks)))
                return chunks

            return encoding

        def reading(text: str | bytes, *args: object, **kwargs: object) -> object:
            self.read = max(self.read, len(text))
            return loads(text, *args, **kwargs)

        monkeypatch.setattr(json.encoder, "c_make_encoder", making)
        monkeypatch.setattr(json, "loads", reading)
        # the encoders made at import write through c_make_encoder when called: nothing of theirs is cached


def test_a_bulk_journal_record_is_written_and_signed_in_small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    key = Ed25519PrivateKey.generate()
    record = JournalRecord(Path("/nonexistent/.plur-desk/journal/r.json"), "approve", "Approve 500", "t", "h", 1)
    patches = [Patch("engrams", f"ENG-{n}", (("commitment", "draft", "decided"),)) for n in range(500)]
    record.add(Step("engrams", patches, [_event(n) for n in range(500)]))
    record.sign = lambda payload: sign(payload, key, "Ada")
    record.actor = {"kind": "human", "name": "Ada"}
    longest = _Longest(monkeypatch)
    data = record.to_bytes()
    assert len(data) > 100_000
    assert longest.wrote < 4096, f"one C encoder call wrote {longest.wrote:,} characters"
    assert longest.read < 4096, f"one decoder call read {longest.read:,} characters"
    monkeypatch.undo()
    payload = json.loads(data)
    assert data == (json.dumps(payload, ensure_ascii=False) + "\n").encode("utf-8")  # json.dumps's own text
    signed = sign({k: v for k, v in payload.items() if k not in ("signature", "signer")}, key, "Ada")
    assert signed["signature"] == payload["signature"]  # signed over the canonical text of what a reader gets
