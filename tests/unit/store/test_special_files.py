"""Special files and unusual stores: a FIFO, socket, device or directory where a store file should be, a dangling
link, no engrams.yaml, a history month linked out of the store, an oversized entry, YAML anchors, a nested
`data.hash`. Each gets a true message and the right exit code without hanging, and every file stays byte-identical."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from unit.store.test_hostile_stores import approve_first, good_engrams, session_for, snapshot, write_store

from plur_desk.app.check import run_check
from plur_desk.domain.commands import ApproveDrafts
from plur_desk.infra.errors import NotAPlurStore, PlurDeskError
from plur_desk.store.history.chain import ChainMode
from plur_desk.store.plur_store import PlurStore

ROOT = Path(__file__).resolve().parents[3]
NO_KEYRING = "keyring.backends.fail.Keyring"  # child processes never touch a real keyring
MONTH = "2026-12"  # the month of the events an approve appends (the system clock: today)


def _now_month() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).strftime("%Y-%m")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """A terminal command in a child process, so a hang fails the test (timeout) instead of blocking the suite."""
    env = dict(os.environ, PYTHON_KEYRING_BACKEND=NO_KEYRING, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "plur_desk", *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _socket(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    return sock


def _state(root: Path) -> dict[str, object]:
    """Every entry of the store, special files included (by kind), and the bytes of every regular file."""
    out: dict[str, object] = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            out[rel] = f"link to {os.readlink(path)}"
        elif path.is_file():
            out[rel] = snapshot(path)[""]
        else:
            out[rel] = oct(path.lstat().st_mode)
    return out


ENGRAMS_CASES = {
    "fifo": (_fifo, "is a FIFO (named pipe), not a regular file"),
    "directory": (lambda p: p.mkdir(), "is a directory, not a regular file"),
    "device": (lambda p: p.symlink_to("/dev/null"), "is a device, not a regular file"),
    "dangling_link": (lambda p: p.symlink_to(p.parent / "gone.yaml"), "which does not exist"),
}


@pytest.mark.parametrize("case", sorted(ENGRAMS_CASES))
def test_special_engrams_file_is_refused_with_exit_2(case, tmp_path):
    root = tmp_path / "store"
    write_store(root, None, "[]\n")
    make, message = ENGRAMS_CASES[case]
    make(root / "engrams.yaml")
    before = _state(root)
    check = _cli("check", str(root))
    assert check.returncode == 2, check.stdout + check.stderr
    assert message in check.stdout and "Traceback" not in check.stderr
    search = _cli("search", str(root), "build")
    assert search.returncode == 2, search.stdout + search.stderr
    assert message in search.stderr and "Traceback" not in search.stderr
    with pytest.raises(NotAPlurStore, match=re.escape(message)):
        PlurStore(root)
    assert _state(root) == before


def test_socket_as_engrams_file(tmp_path):
    root = tmp_path / "store"
    write_store(root, None, "[]\n")
    sock = _socket(root / "engrams.yaml")
    try:
        report = run_check(root)
        assert report.exit_code == 2
        assert "engrams.yaml is a socket, not a regular file" in report.to_text()
    finally:
        sock.close()


@pytest.mark.parametrize(
    ("layout", "message"),
    [
        ({"history": True}, "has no engrams.yaml (only history)"),
        ({"tensions": True}, "has no engrams.yaml (only tensions.yaml)"),
    ],
)
def test_store_without_engrams_file(layout, message, tmp_path):
    root = tmp_path / "store"
    root.mkdir()
    if layout.get("history"):
        (root / "history").mkdir()
        (root / "history" / "2026-12.jsonl").write_text('{"event":"engram_created","engram_id":"E"}\n')
    if layout.get("tensions"):
        (root / "tensions.yaml").write_text("[]\n")
    before = _state(root)
    report = run_check(root)
    assert report.exit_code == 2
    assert message in report.to_text()
    search = _cli("search", str(root), "build")
    assert search.returncode == 2 and message in search.stderr and "Traceback" not in search.stderr
    assert _state(root) == before


@pytest.mark.parametrize("where", ["tensions", "history"])
def test_fifo_elsewhere_makes_the_store_read_only_without_hanging(where, tmp_path):
    root = write_store(tmp_path / "store", good_engrams(), None if where == "tensions" else "[]\n")
    if where == "tensions":
        _fifo(root / "tensions.yaml")
        name = "tensions.yaml"
    else:
        (root / "history").mkdir()
        _fifo(root / "history" / f"{_now_month()}.jsonl")
        name = f"{_now_month()}.jsonl"
    before = _state(root)
    check = _cli("check", str(root))
    assert check.returncode == 2, check.stdout + check.stderr
    assert f"{name} is a FIFO (named pipe), not a regular file" in check.stdout
    search = _cli("search", str(root), "build")
    assert search.returncode == 2 and "is a FIFO" in search.stderr
    with pytest.raises(PlurDeskError, match="read-only"):
        approve_first(root)
    assert _state(root) == before
    assert not (root / "engrams.yaml.lock").exists()


def test_history_month_that_is_a_directory_refuses_before_the_first_byte(tmp_path):
    root = write_store(tmp_path / "store", good_engrams())
    (root / "history" / f"{_now_month()}.jsonl").mkdir(parents=True)
    session = session_for(root)
    session.store.history.special_files = lambda: []  # type: ignore[method-assign]  # only the pre-flight refuses
    before = _state(root)
    with pytest.raises(PlurDeskError, match="Nothing was written") as refused:
        session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-12-01-001"]))))
    assert "is a directory" in str(refused.value)
    assert _state(root) == before


def test_history_month_linked_out_of_the_store_is_never_written(tmp_path):
    root = write_store(tmp_path / "store", good_engrams())
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text('{"event":"engram_created","engram_id":"X"}\n')
    (root / "history").mkdir()
    (root / "history" / f"{_now_month()}.jsonl").symlink_to(outside)
    before, outside_before = _state(root), outside.read_bytes()
    with pytest.raises(PlurDeskError, match="leads out of the store") as refused:
        approve_first(root)
    assert "Nothing was written" in str(refused.value)
    assert _state(root) == before
    assert outside.read_bytes() == outside_before


def test_history_month_linked_inside_the_store_is_written(tmp_path):
    root = write_store(tmp_path / "store", good_engrams())
    (root / "history").mkdir()
    (root / "history" / "real.jsonl.txt").write_text("")
    (root / "history" / f"{_now_month()}.jsonl").symlink_to("real.jsonl.txt")
    approve_first(root)
    assert "ENG-2026-12-01-001" in (root / "history" / "real.jsonl.txt").read_text()


def test_torn_chained_tail_refuses_before_engrams_change(tmp_path):
    from plur_desk.store.history.chain import event_hash, js_stringify

    event: dict[str, object] = {"event": "engram_created", "engram_id": "E", "timestamp": "2026-11-01T00:00:00.000Z"}
    event["prev"] = None
    event["hash"] = event_hash(event)
    root = write_store(tmp_path / "store", good_engrams())
    (root / "history").mkdir()
    (root / "history" / f"{_now_month()}.jsonl").write_text(js_stringify(event) + '\n{"event":"engram_upd')
    before = _state(root)
    with pytest.raises(PlurDeskError, match="cut-off line") as refused:
        approve_first(root)
    assert "Nothing was written" in str(refused.value)
    assert _state(root) == before


def test_oversized_entry_is_refused_unparsed_and_the_rest_stays_readable(tmp_path):
    from unit.store.test_hostile_stores import engram

    from plur_desk.store.lists.list_file import MAX_ENTRY_BYTES
    from plur_desk.store.lists.yaml_dump import dump_engrams_document

    big = "x" * (MAX_ENTRY_BYTES + 10)
    text = dump_engrams_document({"engrams": [engram(1), engram(2, statement=big), engram(3)]})
    root = write_store(tmp_path / "store", text)
    before = _state(root)
    report = run_check(root)
    assert report.exit_code == 1
    assert f"above plur_desk's limit of {MAX_ENTRY_BYTES} bytes per entry" in report.to_text()
    assert "ENG-2026-12-01-002" in report.to_text()
    session = session_for(root)
    assert {r.id for r in session.queue.rows()} == {"ENG-2026-12-01-001", "ENG-2026-12-01-003"}
    with pytest.raises(PlurDeskError, match="above plur_desk's limit"):
        session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-12-01-002"]))))
    assert _state(root) == before


def test_anchors_and_merge_keys_get_a_true_message(tmp_path):
    text = good_engrams().replace("engrams:\n", "engrams:\n  - &base {id: ENG-X, statement: s}\n  - <<: *base\n", 1)
    root = write_store(tmp_path / "store", text)
    before = _state(root)
    report = run_check(root)
    assert report.exit_code == 2
    out = report.to_text()
    assert "anchors and aliases" in out and "open read-only" in out
    assert "PLUR cannot read" not in out
    assert _state(root) == before


def test_nested_data_hash_is_not_a_chain(tmp_path):
    line = {"event": "engram_updated", "engram_id": "ENG-2026-12-01-001", "timestamp": "2026-11-01T00:00:00.000Z"}
    line["data"] = {"hash": "0" * 64, "field": "x"}  # type: ignore[assignment]
    root = write_store(tmp_path / "store", good_engrams())
    (root / "history").mkdir()
    (root / "history" / "2026-11.jsonl").write_text(json.dumps(line) + "\n")
    store = PlurStore(root)
    assert store.history.mode(_now_month()) is ChainMode.LEGACY
    result = (_s := session_for(root)).execute(ApproveDrafts(tuple(_s.writes.seen(["ENG-2026-12-01-001"]))))
    assert [w for w in result.warnings if "chain" in w or "gap" in w] == []
    appended = [json.loads(x) for x in (root / "history" / f"{_now_month()}.jsonl").read_text().splitlines()]
    assert all("hash" not in e and "prev" not in e for e in appended)


def test_fifo_as_lock_file_does_not_hang(tmp_path):
    root = write_store(tmp_path / "store", good_engrams())
    _fifo(root / "engrams.yaml.lock")
    before = _state(root)
    with pytest.raises(PlurDeskError, match="Nothing was written"):
        approve_first(root)  # the lock policy gives up after 0.5 s instead of blocking on the pipe
    assert _state(root) == before
