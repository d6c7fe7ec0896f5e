"""The terminal commands, run as a user runs them: usage errors that name what is missing, no traceback when the
reader of a pipe stops early, results that show state and relevance, and `check` in plain words with the window's
count of drafts waiting."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from plur_desk.app.demo import demo_source

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def demo(tmp_path) -> Path:
    dest = tmp_path / "store"
    shutil.copytree(demo_source(), dest)
    return dest


def _run(*args: str, stdout: int | None = subprocess.PIPE, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(home / "cache"), "HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "plur_desk", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=180,
        cwd=ROOT,
        env=env,
        check=False,
    )


def _waiting(store: Path) -> int:
    """The drafts the window's queue lists, counted by the session the window uses."""
    from plur_desk.app.review.bootstrap import open_session
    from plur_desk.app.review.reviewer import READER

    return open_session(store, READER).counts()["drafts"]


def test_search_without_a_query_names_what_is_missing(demo, tmp_path):
    done = _run("search", str(demo), home=tmp_path)
    assert done.returncode == 2
    assert "missing QUERY" in done.stderr and "does not exist" not in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("search", "{store}", "staging", "--json", "--no-semantic"),
        ("check", "{store}", "--json"),
        ("writers", "{store}", "--json"),
        ("clusters", "{store}"),
        ("conflicts", "{store}"),
        ("disagreements", "{store}"),
    ],
)
def test_a_closed_pipe_ends_quietly(demo, tmp_path, args):
    """`… | head`: the reader is gone before the first line (the read end is closed before the command starts), so
    every write fails; the command stops without a traceback."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = _run(*(a.format(store=demo) for a in args), stdout=write, home=tmp_path)
    finally:
        os.close(write)
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr


def test_search_results_show_state_and_relevance(demo, tmp_path):
    done = _run("search", str(demo), "staging", "--no-semantic", home=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = [line.split("\t") for line in done.stdout.splitlines()]
    by_id = {r[0]: r for r in rows}
    assert by_id["ENG-2026-12-02-007"][1] == "RETIRED"  # a retired engram does not look live
    assert by_id["ENG-2026-12-02-016"][1] == "draft"
    assert rows[0][2].strip() == "100%" and all(r[2].strip().endswith("%") for r in rows)
    assert "relevance is each match's score as a share of the best" in done.stderr
    as_json = json.loads(_run("search", str(demo), "staging", "--json", "--no-semantic", home=tmp_path).stdout)
    assert as_json["hits"][0]["relevance"] == 1.0


def test_check_speaks_plainly_and_counts_as_the_window_does(demo, tmp_path):
    # a review record with no signed event behind it: reported with its line in engrams.yaml, never "line None"
    path = demo / "engrams.yaml"
    text = path.read_text()
    anchor = "  - id: ENG-2026-12-02-016\n"
    text = text.replace(anchor, anchor + "    review:\n      state: approved\n      by: Mallory\n      at: x\n", 1)
    path.write_text(text)
    done = _run("check", str(demo), home=tmp_path)
    out = done.stdout
    assert "line None" not in out and "1 months" not in out
    events = sum(1 for _ in (demo / "history" / "2026-12.jsonl").open())
    assert f"history: {events} events in 1 month;" in out
    assert "chain: legacy (events are not hash-chained" in out
    line = text[: text.index(anchor)].count("\n") + 1
    assert f"engrams.yaml line {line}: " in out
    waiting = _waiting(demo)
    assert f"drafts waiting for review: {waiting} " in out  # what the window's "N drafts waiting" counts
    assert (
        json.loads(_run("check", str(demo), "--json", home=tmp_path).stdout)["engrams"]["waiting_for_review"] == waiting
    )


def test_self_check_counts_the_whole_demo_store_as_check_does(tmp_path):
    shown = _run("check", str(demo_source()), "--json", home=tmp_path)
    engrams = json.loads(shown.stdout)["engrams"]
    done = _run("--self-check", home=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{engrams['total']} engrams, {engrams['waiting_for_review']} drafts waiting for review" in done.stdout, (
        done.stdout
    )
