"""`plur-desk check` with the shared parse cache: a warm run reports exactly what an uncached run does, whatever
changed in the store since the cache was written, and what it reports matches a full load of the store.

Stores are made by the real PLUR, large enough that the cold run parses in worker processes.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from plur_desk.app.check import run_check
from plur_desk.infra.paths import cache_dir
from plur_desk.store.lists.parse_pool import IN_PROCESS_BELOW
from plur_desk.store.plur_store import PlurStore

from support.stores import copy_store, make_plur_store

N = IN_PROCESS_BELOW + 1200
BLOCK = re.compile(rb"^  - id: (\S+)\n", re.M)


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    return make_plur_store(tmp_path_factory.mktemp("check"), n=N, drafts_ratio=0.1, tensions=4)


@pytest.fixture
def store(template, tmp_path) -> Path:
    return copy_store(template, tmp_path / "store")


def _blocks(data: bytes) -> list[bytes]:
    starts = [m.start() for m in BLOCK.finditer(data)] + [len(data)]
    return [data[s:e] for s, e in itertools.pairwise(starts)]


def _same_cold_and_warm(store: Path) -> dict:
    uncached = run_check(store, use_cache=False).to_json()
    assert run_check(store).to_json() == uncached  # (re)writes the cache if anything was new
    assert run_check(store).to_json() == uncached  # the whole-file shortcut when nothing changed
    return json.loads(uncached)


def test_a_warm_check_never_hides_what_changed_since_the_cache_was_written(store):
    report = _same_cold_and_warm(store)  # cold: parsed by the workers, cache written
    assert report["exit_code"] == 0 and report["engrams"]["total"] == N
    assert list(cache_dir().rglob("engram-blocks.*")) and list(cache_dir().rglob("engrams-split.*"))

    path = store / "engrams.yaml"
    blocks = _blocks(path.read_bytes())
    broken = re.sub(rb'created_at: "([0-9T:.Z-]+)"', rb"created_at: \1", blocks[10], count=1)
    assert broken != blocks[10]
    data = path.read_bytes().replace(blocks[10], broken) + blocks[20]  # a cached block broken; a cached one twice
    path.write_bytes(data)
    report = _same_cold_and_warm(store)
    reasons = {item["line"]: item["reason"] for item in report["invalid"]}
    assert len(reasons) == 1 and report["exit_code"] == 1
    assert any("timestamp" in r.lower() for r in reasons.values())
    assert any("exactly; PLUR 0.21 reads it once" in w for w in report["warnings"])  # a repeat is not invalid

    path.write_bytes(data.replace(blocks[30], blocks[30].replace(b"\n    status: ", b"\n    status: x")))
    month = sorted((store / "history").glob("*.jsonl"))[-1]
    month.write_bytes(month.read_bytes() + b'{"event": "engram_created", "engram_id": "ENG-X"')  # cut off
    report = _same_cold_and_warm(store)
    assert len(report["invalid"]) == 2
    assert report["history"]["malformed_lines"][-1]["reason"].endswith("(cut off: the last line has no end)")

    path.write_bytes(data.replace(blocks[40], b"  - id: [\n" + blocks[40]))  # YAML PLUR cannot read
    report = _same_cold_and_warm(store)
    assert report["exit_code"] == 2 and "engrams.yaml, line" in report["unreadable_reasons"][0]


def test_what_check_reports_is_what_a_full_load_finds(store):
    path = store / "engrams.yaml"
    blocks = _blocks(path.read_bytes())
    path.write_bytes(
        path.read_bytes().replace(blocks[5], blocks[5].replace(b"\n    type: ", b"\n    type: odd")) + blocks[7]
    )
    run_check(store)  # warm the cache first: the comparison below is of a warm run
    report = json.loads(run_check(store).to_json())
    full = PlurStore(store)
    full.load()
    values = [e.value for e in full.engrams.entries if isinstance(e.value, dict)]
    assert report["engrams"]["total"] == len(full.engrams.entries)
    assert report["engrams"]["valid"] == sum(1 for e in full.engrams.entries if e.valid)
    assert report["engrams"]["by_status"] == dict(Counter(str(v.get("status", "(none)")) for v in values))
    assert report["engrams"]["by_commitment"] == dict(Counter(str(v.get("commitment", "(none)")) for v in values))
    invalid = [e for e in full.engrams.entries if not e.valid]
    assert [(i["line"], i["id"]) for i in report["invalid"]][:1] == [(full.engrams.line(e), e.key) for e in invalid]
    assert len(report["invalid"]) == 1  # the invalid entry (the exact repeat is read once by 0.21, twice by 0.20)
    assert any("exactly; PLUR 0.21 reads it once" in w for w in report["warnings"])
    lines = [line for p in (store / "history").glob("*.jsonl") for line in p.read_text().split("\n") if line]
    assert report["history"]["total"] == len(lines)


def test_the_window_reads_the_cache_check_wrote(store):
    run_check(store)
    warm = PlurStore(store, cache_dir=cache_dir())
    warm.load_drafts()
    assert warm.engrams.all_parsed is False
    rest = warm.parse_rest()
    assert rest.parsed == 0  # nothing left to parse: every valid block came from check's cache
    warm.finish_load(rest)
    cold = PlurStore(store)
    cold.load()
    state = [(warm.engrams.line(e), warm.engrams.span(e), e.value, e.problems) for e in warm.engrams.entries]
    assert state == [(cold.engrams.line(e), cold.engrams.span(e), e.value, e.problems) for e in cold.engrams.entries]
