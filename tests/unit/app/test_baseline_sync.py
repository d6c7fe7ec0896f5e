"""The watched baseline travels with `plur-desk sync` and merges as a set of lines when both reviewers added some
(plain git, no Node)."""

from __future__ import annotations

from pathlib import Path

from plur_desk.app.team.sync import run_sync
from plur_desk.store import baseline

from support.plain_team import rule, two_clones, write_engrams


def _seed(ann: Path) -> None:
    write_engrams(ann, rule("ENG-2026-12-02-001", 1))
    (ann / "tensions.yaml").write_text("[]\n")


def test_both_reviewers_lines_reach_both_clones_each_once(tmp_path: Path) -> None:
    ann, bob = two_clones(tmp_path, _seed)

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
