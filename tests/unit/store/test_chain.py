"""History hashing matches PLUR's chain (vectors from plur-ai/plur test/fixtures/history-chain/vectors.json)."""

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plur_desk.store.history import chain
from plur_desk.store.history.chain import ChainMode, canonical_bytes, event_hash
from plur_desk.store.history.log import HistoryLog

CJK = {
    "event": "engram_created",
    "engram_id": "ENG-2026-0101-001",
    "timestamp": "2026-01-01T00:00:00.000Z",
    "data": {"statement": "日本語のテスト記録", "type": "behavioral"},
    "prev": None,
}
NESTED = {
    "event": "engram_updated",
    "engram_id": "ENG-2026-0101-002",
    "timestamp": "2026-01-01T00:01:00.000Z",
    "data": {"top_level": "value", "nested": {"tags": ["a", "b"], "count": 3, "meta": {"active": True}}},
    "prev": "b252e6b38f8a651b12a566bae304b03a6f3af8370d45285999bbae7d777c5eff",
}


def test_vectors_from_plur():
    assert event_hash(CJK) == "b252e6b38f8a651b12a566bae304b03a6f3af8370d45285999bbae7d777c5eff"
    assert canonical_bytes(NESTED).decode() == (
        '{"data":{"nested":{"count":3,"meta":{"active":true},"tags":["a","b"]},"top_level":"value"},'
        '"engram_id":"ENG-2026-0101-002","event":"engram_updated",'
        '"prev":"b252e6b38f8a651b12a566bae304b03a6f3af8370d45285999bbae7d777c5eff","timestamp":"2026-01-01T00:01:00.000Z"}'
    )
    assert event_hash(NESTED) == "37a75402d49bb970710019c424b459e98a2dfcfba492187e2d45b8da6bf791cb"


def test_javascript_key_order_and_exclusions():
    event = {
        "10": 1,
        "9": 2,
        "a": 3,
        "B": 4,
        "-1": 5,
        "01": 6,
        "\U0001f600": 7,
        "\ue000": 8,
        "__proto__": 9,
        "hash": "x",
        "signature": "y",
        "signer": "z",
    }
    assert canonical_bytes(event).decode() == '{"9":2,"10":1,"-1":5,"01":6,"B":4,"a":3,"\U0001f600":7,"\ue000":8}'


def _event(i, ts="2026-12-02T10:00:00.000Z"):
    return {
        "event": "engram_updated",
        "engram_id": f"ENG-2026-12-02-{i:03d}",
        "timestamp": ts,
        "data": {"n": i},
        "actor": {"asserted_by": "alice", "kind": "human"},
    }


def test_legacy_store_never_starts_a_chain(tmp_path):
    log = HistoryLog(tmp_path)
    (tmp_path / "history").mkdir()
    (tmp_path / "history" / "2026-12.jsonl").write_text(json.dumps(_event(0)) + "\n")
    result = log.append([_event(1), _event(2)])
    assert result.mode is ChainMode.LEGACY
    lines = [json.loads(x) for x in (tmp_path / "history" / "2026-12.jsonl").read_text().splitlines()]
    assert [e["engram_id"][-3:] for e in lines] == ["000", "001", "002"]
    assert all("hash" not in e and "prev" not in e for e in lines)


def test_chained_store_is_continued_across_months(tmp_path):
    hist = tmp_path / "history"
    hist.mkdir()
    first = dict(CJK)
    first["hash"] = event_hash(first)
    (hist / "2026-11.jsonl").write_text(json.dumps(first, ensure_ascii=False) + "\n")
    (hist / ".chain-head").write_text("stale")
    log = HistoryLog(tmp_path)
    result = log.append([_event(1), _event(2)])
    assert result.mode is ChainMode.CHAINED and not result.warnings
    lines = [json.loads(x) for x in (hist / "2026-12.jsonl").read_text().splitlines()]
    assert lines[0]["prev"] == first["hash"]
    assert lines[1]["prev"] == lines[0]["hash"]
    for line in lines:
        assert line["hash"] == event_hash(line)
    assert not (hist / ".chain-head").exists()
    assert not (hist / "chain.lock").exists()


def test_torn_tail_refuses_to_bury_a_partial_line(tmp_path):
    hist = tmp_path / "history"
    hist.mkdir()
    first = dict(CJK)
    first["hash"] = event_hash(first)
    month = hist / "2026-12.jsonl"
    month.write_text(json.dumps(first) + "\n" + '{"event":"engram_up')
    before = month.read_bytes()
    log = HistoryLog(tmp_path)
    assert log.mode("2026-12") is ChainMode.MIXED
    with pytest.raises(Exception, match="cut-off line"):
        log.append([_event(1)])
    assert month.read_bytes() == before


def _legacy_line(i: int) -> bytes:
    return json.dumps({"event": "engram_updated", "engram_id": f"ENG-{i}", "data": {"hash": "x"}}).encode() + b"\n"


@pytest.mark.parametrize("piece", [16, 61, 4096])
def test_a_hash_is_found_whatever_piece_boundary_it_straddles(tmp_path, monkeypatch, piece):
    monkeypatch.setattr(chain, "SCAN_PIECE", piece)
    history = tmp_path / "history"
    history.mkdir()
    chained = json.dumps({"event": "engram_updated", "engram_id": "ENG-9", "hash": "ab" * 32}).encode() + b"\n"
    (history / "2025-01.jsonl").write_bytes(b"".join(_legacy_line(i) for i in range(40)) + chained)
    (history / "2025-02.jsonl").write_bytes(b"".join(_legacy_line(i) for i in range(40)))
    assert chain.HashScan().any_hash(history)  # data.hash (PLUR 0.20) is no chain; the top-level one is


def test_only_complete_lines_count_and_only_new_bytes_are_read_again(tmp_path, monkeypatch):
    monkeypatch.setattr(chain, "SCAN_PIECE", 64)
    history = tmp_path / "history"
    history.mkdir()
    month = history / "2025-03.jsonl"
    month.write_bytes(b"".join(_legacy_line(i) for i in range(20)))
    scan = chain.HashScan()
    assert not scan.any_hash(history)
    chained = json.dumps({"event": "x", "hash": "cd" * 32}).encode()
    with month.open("ab") as handle:
        handle.write(chained[:30])  # an unfinished line: read again once complete
    assert not scan.any_hash(history)
    with month.open("ab") as handle:
        handle.write(chained[30:] + b"\n")
    reads: list[int] = []
    real_read = chain.os.read
    monkeypatch.setattr(chain.os, "read", lambda fd, n: reads.append(n) or real_read(fd, n))
    assert scan.any_hash(history)
    assert sum(reads) <= len(chained) + 1  # from where the complete lines ended, not the whole file again


def test_a_fifo_swapped_in_is_never_read(tmp_path):
    history = tmp_path / "history"
    history.mkdir()
    os.mkfifo(history / "2025-04.jsonl")  # no writer: a blocking open would hang
    assert not chain.HashScan().any_hash(history)


_KEYS = st.one_of(
    st.text(max_size=6),
    st.sampled_from(["0", "1", "10", "2", "01", "__proto__", "a", "\ue000", "\U0001f600", "4294967294", "4294967295"]),
    st.integers(-3, 3),
    st.none(),
)
_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**60), max_value=2**60),
    st.floats(allow_nan=True),
    st.sampled_from([0.77, 1e-4, 9.99e-5, 1e15 + 0.5, 1e16, 1e21, -0.0, 2.0, 123.456, 5e-324]),
    st.text(),
    st.sampled_from(["\ud800", "x\udfffy", "\x7f", "\u2028", "\x00\x1f", '"\\', "2026-12-07T10:00:00.000Z"]),
    st.sampled_from(["x" * 5000, '\u00e9"' * 2100]),  # long texts near the top: the pure-Python writer
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.tuples(inner, inner), st.dictionaries(_KEYS, inner)),
    max_leaves=20,
)


def _written(write, value, sort):
    try:
        return write(value, sort)
    except (TypeError, AttributeError) as exc:
        return type(exc)


@settings(max_examples=1500, suppress_health_check=list(HealthCheck), deadline=None)
@given(_VALUES, st.booleans())
def test_the_c_encoder_is_used_only_where_it_writes_what_javascript_does(value, sort):
    """js_stringify hands dicts and lists to the json module's C encoder when it can show the text is the same:
    whatever the value (array-index keys, `__proto__`, lone surrogates, UTF-16 order, floats, integers beyond
    2**53, non-string keys), the text, or the error, is the pure-Python writer's."""
    fast = _written(lambda v, s: chain.js_stringify(v, sort=s), value, sort)
    assert fast == _written(chain._js_stringify, value, sort)


def test_the_c_encoder_writes_the_events_a_decision_signs():
    """The fast path is taken for what a decision signs (else the test above would prove nothing of it): an
    approval event with its decided block, and a journal step whose values start with digits (dates)."""
    event = {
        **NESTED,
        "data": {"decided": {"sets": {"review": {"at": "2026-12-07T10:00:00.000Z"}}}, "confidence": 0.77},
        "changes": [["updated_at", "2026-11-26T09:35:50.573Z", "2026-12-07T13:29:34.124Z"]],
        "actor": {"kind": "human", "asserted_by": "Zoë", "count": 3},
    }
    for sort in (True, False):
        assert chain._c_stringify(event, sort) == chain._js_stringify(event, sort)
    assert chain._c_stringify({"10": 1, "9": 2}, True) is None  # array-index keys: JavaScript orders them first
    assert chain._c_stringify({"a": 1.0}, False) is None  # an integral float: JavaScript writes 1
