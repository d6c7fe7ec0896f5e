"""Malformed and hostile stores: each gets a clear message saying what and where, and every file stays
byte-identical (check writes nothing; a refused action writes nothing)."""

from __future__ import annotations

import hashlib
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from plur_desk.app.check import run_check
from plur_desk.app.review.session import ReviewSession
from plur_desk.domain.commands import ApproveDrafts, ConfirmTension, RejectDrafts, ResolveTension
from plur_desk.domain.review import Reviewer
from plur_desk.domain.seen import Seen
from plur_desk.infra.errors import PlurDeskError
from plur_desk.store.lists.yaml_dump import dump_engrams_document, dump_tensions_document
from plur_desk.store.lists.yaml_load import load_general
from plur_desk.store.locking.lock import LockPolicy
from plur_desk.store.plur_store import PlurStore


def engram(i: int, **extra) -> dict:
    base = {
        "id": f"ENG-2026-12-01-{i:03d}",
        "version": 2,
        "status": "active",
        "type": "behavioral",
        "scope": "project:web",
        "statement": f"Fact number {i} about the build",
        "commitment": "draft",
        "content_hash": "0" * 64,
        "created_at": "2026-12-01T10:00:00.000Z",
        "activation": {"retrieval_strength": 0.7, "storage_strength": 1, "frequency": 0, "last_accessed": "2026-12-01"},
    }
    base.update(extra)
    return base


def good_engrams(count: int = 3) -> str:
    return dump_engrams_document({"engrams": [engram(i) for i in range(1, count + 1)]})


def tension(**extra) -> dict:
    base = {
        "id": "T-2026-1201-001",
        "engram_a": "ENG-2026-12-01-001",
        "engram_b": "ENG-2026-12-01-002",
        "statement_a": "a",
        "statement_b": "b",
        "confidence": 0.9,
        "reason": "r",
        "detected_at": "2026-12-01T10:00:00.000Z",
        "status": "detected",
        "resolved_by": None,
        "resolved_at": None,
        "category": "factual",
    }
    base.update(extra)
    return base


def write_store(
    root: Path,
    engrams: str | bytes | None = None,
    tensions: str | bytes | None = None,
    history: str | bytes | None = None,
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, content in (("engrams.yaml", engrams), ("tensions.yaml", tensions)):
        if content is not None:
            (root / name).write_bytes(content.encode() if isinstance(content, str) else content)
    if history is not None:
        (root / "history").mkdir(exist_ok=True)
        (root / "history" / "2026-12.jsonl").write_bytes(history.encode() if isinstance(history, str) else history)
    return root


def snapshot(root: Path) -> dict[str, str]:
    if not root.exists():
        return {}
    if root.is_file():
        return {"": hashlib.sha256(root.read_bytes()).hexdigest()}
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            out[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def session_for(root: Path) -> ReviewSession:
    store = PlurStore(root, engrams_policy=LockPolicy(max_wait=0.5))
    store.load()
    return ReviewSession(store, Reviewer("Tester"))


def decide(root: Path, command: Callable[..., Any], target: str | list[str], *args: object, **kwargs: object) -> object:
    """A command on the session's own snapshot (ids for engrams, one id for a tension)."""
    session = session_for(root)
    seen = session.writes.seen_tension(target) if isinstance(target, str) else tuple(session.writes.seen(target))
    return session.execute(command(seen, *args, **kwargs))


def approve_first(root: Path, engram_id: str = "ENG-2026-12-01-001") -> None:
    decide(root, ApproveDrafts, [engram_id])


def indent_engram_block(text: str) -> str:
    return text


CASES = {
    # name: (build(root), expected exit code, text expected in the report, action, text expected in the refusal)
    "zero_bytes": (lambda r: write_store(r, b""), 2, "empty (0 bytes)", approve_first, "read-only"),
    "truncated": (lambda r: write_store(r, good_engrams()[:-40]), 2, "cut short", approve_first, "read-only"),
    "invalid_utf8": (
        lambda r: write_store(r, good_engrams().encode().replace(b"Fact number 2", b"Fact \xff\xfe 2")),
        2,
        "invalid UTF-8",
        approve_first,
        "read-only",
    ),
    "tabs": (
        lambda r: write_store(r, good_engrams().replace("    status: active", "\tstatus: active", 1)),
        2,
        "YAML error",
        approve_first,
        "read-only",
    ),
    "alias_bomb": (
        lambda r: write_store(
            r,
            "engrams:\n  - &a [x, x, x, x]\n  - &b [*a, *a, *a, *a]\n"
            "  - &c [*b, *b, *b, *b]\n  - [*c, *c, *c, *c, *c]\n",
        ),
        2,
        "aliases",
        approve_first,
        "read-only",
    ),
    "null_document": (lambda r: write_store(r, "~\n"), 2, "parses to null", approve_first, "read-only"),
    "engrams_null": (lambda r: write_store(r, "engrams: null\n"), 2, "'engrams' is null", approve_first, "read-only"),
    "engrams_not_list": (lambda r: write_store(r, "engrams:\n  a: 1\n"), 2, "not a list", approve_first, "read-only"),
    "top_level_list": (
        lambda r: write_store(r, "- id: ENG-2026-12-01-001\n"),
        2,
        "not a mapping",
        approve_first,
        "read-only",
    ),
    "no_engrams_key": (lambda r: write_store(r, "memories: []\n"), 2, "no 'engrams' key", approve_first, "read-only"),
    "syntax_error": (
        lambda r: write_store(
            r, good_engrams().replace("statement: Fact number 2 about the build", 'statement: "Fact number 2', 1)
        ),
        2,
        "YAML error in the entry at line",
        approve_first,
        "read-only",
    ),
    "duplicate_key": (
        lambda r: write_store(
            r, good_engrams().replace("    type: behavioral\n", "    type: behavioral\n    type: procedural\n", 1)
        ),
        2,
        "duplicated mapping key",
        approve_first,
        "read-only",
    ),
    "merge_key": (
        lambda r: write_store(r, "engrams:\n  - id: ENG-2026-12-01-001\n    <<: {status: active}\n"),
        2,
        "merge keys",
        approve_first,
        "read-only",
    ),
    "deep_nesting": (
        lambda r: write_store(r, "engrams:\n  - id: ENG-2026-12-01-001\n    x: " + "[" * 200000 + "]" * 200000 + "\n"),
        2,
        "nesting is too deep",
        approve_first,
        "read-only",
    ),
    "deep_nesting_whole_file": (
        lambda r: write_store(r, "engrams: " + "[" * 300000 + "]" * 300000 + "\n"),
        2,
        "nesting is too deep",
        approve_first,
        "read-only",
    ),
    "alias_whole_file": (lambda r: write_store(r, "engrams: &x\n- *x\n"), 2, "aliases", approve_first, "read-only"),
    "wrong_types": (
        lambda r: write_store(r, dump_engrams_document({"engrams": [engram(1, status=5, tags="ci")]})),
        1,
        "tags must be a list of strings",
        approve_first,
        "quarantines",
    ),
    "unknown_enum": (
        lambda r: write_store(r, dump_engrams_document({"engrams": [engram(1, commitment="approved")]})),
        1,
        "commitment is 'approved'",
        approve_first,
        "quarantines",
    ),
    "unquoted_date": (
        lambda r: write_store(
            r,
            good_engrams().replace('created_at: "2026-12-01T10:00:00.000Z"', "created_at: 2026-12-01T10:00:00.000Z", 1),
        ),
        1,
        "unquoted YAML timestamp",
        approve_first,
        "quarantines",
    ),
    "unquoted_date_in_flow_list": (
        lambda r: write_store(
            r, good_engrams().replace("    commitment: draft\n", "    commitment: draft\n    tags: [2026-01-01]\n", 1)
        ),
        1,
        "tags[0] is an unquoted YAML timestamp",
        approve_first,
        "quarantines",
    ),
    "temporal_without_learned_at": (
        lambda r: write_store(
            r, dump_engrams_document({"engrams": [engram(1, temporal={"valid_until": "2027-01-01"})]})
        ),
        1,
        "temporal.learned_at is required",
        approve_first,
        "quarantines",
    ),
    "missing_statement": (
        lambda r: write_store(
            r, dump_engrams_document({"engrams": [{k: v for k, v in engram(1).items() if k != "statement"}]})
        ),
        1,
        "required field statement",
        approve_first,
        "quarantines",
    ),
    "long_summary": (
        lambda r: write_store(r, dump_engrams_document({"engrams": [engram(1, summary="s" * 81)]})),
        1,
        "at most 80",
        approve_first,
        "quarantines",
    ),
    "bad_id": (
        lambda r: write_store(r, dump_engrams_document({"engrams": [engram(1, id="note-1")]})),
        1,
        "does not match",
        lambda root: approve_first(root, "note-1"),
        "quarantines",
    ),
    "tension_missing_engram": (
        lambda r: write_store(r, good_engrams(), dump_tensions_document([tension(engram_b="ENG-2026-01-01-999")])),
        0,
        "not in engrams.yaml",
        lambda root: decide(root, ResolveTension, "T-2026-1201-001", "ENG-2026-12-01-001"),
        "not in the store",
    ),
    "tension_bad_status": (
        lambda r: write_store(r, good_engrams(), dump_tensions_document([tension(status="open")])),
        1,
        "status is 'open'",
        lambda root: decide(root, ConfirmTension, "T-2026-1201-001"),
        "not in tensions.yaml",
    ),
    "tensions_is_mapping": (
        lambda r: write_store(r, good_engrams(), "tensions: []\n"),
        2,
        "not a list",
        approve_first,
        "read-only",
    ),
    "history_cut_in_half": (
        lambda r: write_store(
            r, good_engrams(), None, '{"event":"engram_created","engram_id":"ENG-2026-12-01-001"}\n{"event":"engram_upd'
        ),
        1,
        "line 2: not valid JSON",
        lambda root: decide(root, ApproveDrafts, ["ENG-2026-12-01-001"], level="sure"),
        "not a commitment level",
    ),
    "history_invalid_utf8": (
        lambda r: write_store(r, good_engrams(), None, b'{"event":"engram_created"}\n{"event":"x\xff\xfe"}\n'),
        1,
        "line 2: not valid JSON: invalid UTF-8",
        lambda root: decide(root, RejectDrafts, ["ENG-2026-12-01-001"], ""),
        "needs a reason",
    ),
    "history_not_objects": (
        lambda r: write_store(r, good_engrams(), None, '[1,2]\n"text"\n'),
        1,
        "not a JSON object",
        lambda root: decide(root, RejectDrafts, ["ENG-2026-12-01-001"], "  "),
        "needs a reason",
    ),
    "not_a_store": (
        lambda r: (r.mkdir(), (r / "notes.txt").write_text("hello"))[0],
        2,
        "is not a PLUR store",
        lambda root: PlurStore(root),
        "is not a PLUR store",
    ),
    "store_is_a_file": (
        lambda r: (r.write_text("engrams: []\n"), r)[1],
        2,
        "is not a directory",
        lambda root: PlurStore(root),
        "is not a directory",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_store(name, tmp_path):
    build, exit_code, report_text, action, refusal_text = CASES[name]
    root = tmp_path / "store"
    build(root)
    before = snapshot(root)
    report = run_check(root)
    text = report.to_text()
    assert report.exit_code == exit_code, text
    assert report_text in text + report.to_json(), text
    with pytest.raises(PlurDeskError) as refused:
        action(root)
    assert refusal_text in str(refused.value)
    assert snapshot(root) == before


def _records(root: Path) -> list[dict]:
    return list(load_general((root / "engrams.yaml").read_text(encoding="utf-8"))["engrams"])


def test_a_repeated_id_is_read_and_decided_as_plur_021_reads_it(tmp_path):
    # PLUR 0.20 reads every copy of a repeated id; 0.21 reads an exact repeat once and renames a different later
    # copy (CHANGELOG 0.21.0, "Duplicate engram ids are kept"): neither quarantines one, and a decision on either
    # copy lands on the copy the reviewer saw (exact repeats changed together, so they stay exact repeats).
    root = write_store(
        tmp_path / "store",
        dump_engrams_document({"engrams": [engram(1), engram(2), engram(1), engram(1, statement="B")]}),
    )
    report = run_check(root)
    text = report.to_text()
    assert report.exit_code == 0, text
    assert "repeats the engram at line 2 exactly; PLUR 0.21 reads it once" in text
    assert "PLUR 0.21 keeps both and reads this one as ENG-2026-12-01-001-D" in text
    session = session_for(root)
    later = next(d.id for d in session.queue.rows() if d.id.startswith("ENG-2026-12-01-001-D"))
    digests = session.snapshot.digests()  # what the search index reads: each engram once, under its shown id
    assert digests["ENG-2026-12-01-001"][1]["statement"] == "Fact number 1 about the build"
    assert digests[later][1]["statement"] == "B"
    approve_first(root)
    records = _records(root)
    assert [r["id"][-3:] for r in records] == ["001", "002", "001", "001"]
    assert records[0] == records[2] and records[0]["commitment"] != "draft"
    assert records[3]["commitment"] == "draft" and records[3]["statement"] == "B"
    approve_first(root, later)  # written under the id 0.21 gives it, so the decision keeps naming it
    after = _records(root)
    assert after[3]["id"] == later and after[3]["statement"] == "B" and after[3]["commitment"] != "draft"
    assert after[:3] == records[:3]


def test_big_statement_loads_and_conflicts_are_refused(tmp_path):
    big = "word " * 2_000_000  # a 10 MB statement
    root = write_store(tmp_path / "store", dump_engrams_document({"engrams": [engram(1, statement=big.strip())]}))
    before = snapshot(root)
    report = run_check(root)
    assert report.exit_code == 0
    session = session_for(root)
    assert session.queue.rows()[0].statement.startswith("word word")
    seen = Seen("engram", "ENG-2026-12-01-001", (("statement", "something else the reviewer saw"),))
    with pytest.raises(PlurDeskError, match="changed since you looked"):
        session.execute(ApproveDrafts((seen,)))
    assert snapshot(root) == before


def test_lock_held_by_a_live_process_is_respected(tmp_path):
    root = write_store(tmp_path / "store", good_engrams())
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        (root / "engrams.yaml.lock").write_text(f"{socket.gethostname()}:{sleeper.pid}:1700000000000:1")
        before = snapshot(root)
        with pytest.raises(PlurDeskError, match=f"held by process {sleeper.pid}"):
            approve_first(root)
        assert snapshot(root) == before
    finally:
        sleeper.kill()
        sleeper.wait()


_FULL_DISK = r"""
import resource, signal, sys
from pathlib import Path
from plur_desk.store.plur_store import PlurStore
from plur_desk.app.review.session import ReviewSession
from plur_desk.domain.commands import ApproveDrafts
from plur_desk.domain.review import Reviewer
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
root = Path(sys.argv[1])
store = PlurStore(root); store.load()
session = ReviewSession(store, Reviewer("Tester"))
limit = (root / "engrams.yaml").stat().st_size // 2
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
from plur_desk.infra.errors import PlurDeskError
try:
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-12-01-001"]))))
except PlurDeskError as exc:
    print("refused:", exc); sys.exit(0)
sys.exit(1)
"""


def test_full_disk_leaves_the_old_file(tmp_path):
    """The disk fills up mid-write (a file-size limit makes write() fail): the old file stays, no temp is left, and
    the reviewer is told in plain words (not a raw OSError) that the disk is full and nothing was written."""
    root = write_store(tmp_path / "store", good_engrams(40))
    before = snapshot(root)
    out = subprocess.run([sys.executable, "-c", _FULL_DISK, str(root)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    said = out.stdout.strip()
    assert said.startswith("refused: cannot write the new engrams.yaml: the disk is full (")  # EFBIG here: a limit
    assert said.endswith("). Nothing was written."), said
    assert snapshot(root) == before
    assert not list((root / ".plur-desk").rglob("*.json"))


def test_read_only_directory(tmp_path):
    """As an unprivileged user on a directory they cannot write: check works, a write is refused cleanly."""
    base = Path(tempfile.mkdtemp(prefix="plur-ro-"))
    try:
        os.chmod(base, 0o755)
        root = write_store(base / "store", good_engrams())
        before = snapshot(root)
        script = (
            "import sys; from pathlib import Path; from plur_desk.app.check import run_check;"
            "from plur_desk.store.plur_store import PlurStore; r = run_check(Path(sys.argv[1]));"
            "s = PlurStore(Path(sys.argv[1])); s.load(); print('reasons:', s.read_only_reasons());"
            "print('exit', r.exit_code)"
        )
        cmd = [sys.executable, "-c", script, str(root)]
        if os.geteuid() == 0:
            cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *cmd]
        env = dict(os.environ, HOME=str(base), PYTHONPATH=str(Path(__file__).resolve().parents[3]))
        out = subprocess.run(cmd, capture_output=True, text=True, env=env)
        assert out.returncode == 0, out.stderr
        assert "is not writable" in out.stdout and "exit 0" in out.stdout
        assert snapshot(root) == before
    finally:
        subprocess.run(["rm", "-rf", str(base)], check=False)


del resource, signal
