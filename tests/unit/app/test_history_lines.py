"""The history's lines read from their month files through an offset per line (`LineTable`) give exactly the
lines that splitting every file into one bytes object per line gives: same raw bytes, month and line number, in
the same order, through loads, PLUR's appends, our own appends and reloads; the writer ledger fed from it equals
the ledger fed from a plain list of the same lines."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from plur_desk.app.history.history_index import HistoryIndex
from plur_desk.app.history.history_table import LineTable
from plur_desk.app.scale.writers import Ledger
from plur_desk.store.history import month_lines
from plur_desk.store.history.log import HistoryLog

Line = tuple[bytes, str, int]


def _split_lines(root: Path) -> list[Line]:
    """What the history index kept before: every complete, non-blank line of every month file, split one by one."""
    out: list[Line] = []
    for path in sorted((root / "history").glob("*.jsonl")):
        data = path.read_bytes()
        data = data[: data.rfind(b"\n") + 1]
        for number, raw in enumerate(data.split(b"\n")[:-1], start=1):
            if raw.strip():
                out.append((raw, path.stem, number))
    return out


def _month(rng: random.Random, month: int, count: int) -> bytes:
    lines = []
    for n in range(count):
        who = rng.choice(["Ada", "agent:codex"])
        event = {
            "event": rng.choice(["engram_created", "engram_updated", "co_injection"]),
            "engram_id": f"ENG-{rng.randrange(9)}",
            "timestamp": f"2026-0{month}-01T00:00:{n % 60:02d}.000Z",
            "data": {"note": "ü" * rng.randrange(3)},
            "actor": {"asserted_by": who, **({"kind": "human"} if who == "Ada" else {})},
        }
        lines.append(json.dumps(event, ensure_ascii=rng.random() < 0.5))
        odd = rng.randrange(12)
        if odd == 0:
            lines.append("")  # blank
        elif odd == 1:
            lines.append(" \t\r")  # only whitespace: not a line either
        elif odd == 2:
            lines.append('{"event":"crlf"}\r')
        elif odd == 3:
            lines.append("not json")
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture(params=[(64, 16), (1 << 20, 16 << 10)], ids=["small-pieces", "one-piece"])
def piece_size(request, monkeypatch) -> int:
    """Bytes read at once while indexing (each read one piece of lines) and bytes per checksum."""
    monkeypatch.setattr(month_lines, "READ", request.param[0])
    monkeypatch.setattr(month_lines, "CHUNK", request.param[1])
    return int(request.param[0])


@pytest.mark.parametrize("seed", range(3))
def test_lines_equal_splitting_every_file(tmp_path, seed, piece_size) -> None:
    rng = random.Random(seed)
    root = tmp_path / "store"
    (root / "history").mkdir(parents=True)
    for month in (1, 2, 3):
        (root / "history" / f"2026-0{month}.jsonl").write_bytes(b"\n \n" * (month == 2) + _month(rng, month, 120))
    with open(root / "history" / "2026-03.jsonl", "ab") as handle:
        handle.write(b'{"event":"cut off mid-')  # not a line until it is complete
    index = HistoryIndex(HistoryLog(root))
    index.load()
    expected = _split_lines(root)
    _same(index.lines, expected)

    with open(root / "history" / "2026-03.jsonl", "ab") as handle:  # PLUR completes the line and appends more
        handle.write(b'line"}\n' + _month(rng, 3, 40))
    assert index.refresh()
    expected = _split_lines(root)
    _same(index.lines, expected)

    (root / "history" / "2026-04.jsonl").write_bytes(_month(rng, 4, 30))
    assert index.refresh()
    ours = {"event": "engram_updated", "engram_id": "ENG-1", "timestamp": "2026-04-02T00:00:00.000Z"}
    with open(root / "history" / "2026-04.jsonl", "ab") as handle:  # PLUR appends, then the store appends ours
        handle.write(_month(rng, 4, 3) + json.dumps(ours, separators=(",", ":")).encode() + b"\n")
    index.add([ours])  # read from the file, after PLUR's lines (before: kept apart, and PLUR's lines were lost)
    expected = _split_lines(root)
    assert expected[-1][0] == json.dumps(ours, separators=(",", ":")).encode()
    _same(index.lines, expected)


def _same(table: LineTable, expected: list[Line]) -> None:
    assert len(table) == len(expected)
    assert list(table) == expected
    assert [table[i] for i in range(len(table))] == expected
    assert table[-1] == expected[-1]
    assert table[-len(expected)] == expected[0]
    for lo, hi in [(0, 1), (5, 70), (len(expected) - 3, len(expected) + 5), (100, 50)]:
        assert table[lo:hi] == expected[lo:hi]
    assert table[::7] == expected[::7]
    with pytest.raises(IndexError):
        table[len(expected)]


@pytest.mark.parametrize("chunk", [20_000, 7])
def test_a_ledger_fed_from_the_table_equals_one_fed_from_a_list(tmp_path, piece_size, chunk, monkeypatch) -> None:
    """The table hands the ledger the month files' bytes in runs (blank and whitespace lines left out, runs cut
    inside a piece when `chunk` is small): the same facts as the lines one by one."""
    import plur_desk.app.scale.writers as writers

    monkeypatch.setattr(writers, "FEED_CHUNK", chunk)
    rng = random.Random(5)
    root = tmp_path / "store"
    (root / "history").mkdir(parents=True)
    for month in (1, 2):
        (root / "history" / f"2026-0{month}.jsonl").write_bytes(_month(rng, month, 200))
    decision = {
        "event": "engram_updated",
        "engram_id": "ENG-3",
        "timestamp": "2026-02-03T00:00:00.000Z",
        "data": {"action": "approve"},
        "actor": {"asserted_by": "Ada", "kind": "human", "runtime": {"name": "plur-desk"}},
    }
    with open(root / "history" / "2026-02.jsonl", "a") as handle:
        handle.write(json.dumps(decision, separators=(",", ":")) + "\n")
    index = HistoryIndex(HistoryLog(root))
    index.load()
    from_table, from_list = Ledger(), Ledger()
    assert from_table.sync(index.lines) == len(index.lines)
    from_list.sync(list(index.lines))
    assert from_table.created and from_table.decisions  # the comparison is not between empty ledgers
    assert (from_table.created, from_table.decisions, from_table.created_count, from_table.fed) == (
        from_list.created,
        from_list.decisions,
        from_list.created_count,
        from_list.fed,
    )
    with open(root / "history" / "2026-02.jsonl", "a") as handle:
        handle.write(json.dumps(dict(decision, engram_id="ENG-4", timestamp="2026-02-04T00:00:00.000Z")) + "\n")
    index.add([dict(decision, engram_id="ENG-4", timestamp="2026-02-04T00:00:00.000Z")])
    assert from_table.sync(index.lines) == 1  # incremental: only the appended line
    assert "ENG-4" in from_table.decisions
