"""The watched baseline travels with `plur-desk sync` and merges as a set of lines when both reviewers added some
(plain git, no Node)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from plur_desk.app.team.sync import run_sync
from plur_desk.store import baseline
from plur_desk.store.lists.yaml_dump import dump_engrams_document


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode().strip()


def _engrams(store: Path) -> None:
    record = {
        "id": "ENG-2026-12-02-001",
        "status": "active",
        "type": "behavioral",
        "scope": "project:team",
        "visibility": "public",
        "statement": "Rule one",
        "commitment": "draft",
    }
    (store / "engrams.yaml").write_text(dump_engrams_document({"engrams": [record]}))


def test_both_reviewers_lines_reach_both_clones_each_once(tmp_path: Path) -> None:
    remote, ann, bob = tmp_path / "remote.git", tmp_path / "ann", tmp_path / "bob"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    ann.mkdir()
    git(ann, "init", "-q", "-b", "main")
    _engrams(ann)
    (ann / "tensions.yaml").write_text("[]\n")
    git(ann, "config", "user.name", "Ann")
    git(ann, "config", "user.email", "ann@example.test")
    git(ann, "add", ".")
    git(ann, "commit", "-q", "-m", "seed")
    git(ann, "remote", "add", "origin", str(remote))
    git(ann, "push", "-q", "-u", "origin", "main")
    git(tmp_path, "clone", "-q", str(remote), str(bob))
    git(bob, "config", "user.name", "Bob")
    git(bob, "config", "user.email", "bob@example.test")

    baseline.append(ann, ['{"line":"watching, by Ann"}'])
    assert run_sync(ann).exit_code == 0
    assert run_sync(bob).exit_code == 0
    assert baseline.path_of(bob).read_text() == '{"line":"watching, by Ann"}\n'
    baseline.append(ann, ['{"line":"Ann ratified"}'])
    baseline.append(bob, ['{"line":"Bob ratified"}'])
    assert run_sync(ann).exit_code == 0
    assert run_sync(bob).exit_code == 0  # both changed the file: the driver merges it
    assert run_sync(ann).exit_code == 0
    for clone in (ann, bob):
        lines = baseline.path_of(clone).read_text().splitlines()
        assert sorted(lines) == sorted(
            ['{"line":"watching, by Ann"}', '{"line":"Ann ratified"}', '{"line":"Bob ratified"}']
        ), clone.name
