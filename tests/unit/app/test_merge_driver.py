"""The merge driver under real git: install/uninstall, merges in both directions, and failure without markers."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from plur_desk import cli
from plur_desk.app.team.git_repo import find_repo
from plur_desk.app.team.merge_driver import install, installed, uninstall
from plur_desk.store.lists.yaml_dump import dump_engrams_document
from plur_desk.store.team import team_ledger


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=60)
    assert proc.returncode == 0 or args[0] in ("merge", "rebase"), proc.stderr.decode()
    return proc.stdout.decode().strip()


def _engram(n: int, **extra: object) -> dict[str, object]:
    record: dict[str, object] = {
        "id": f"ENG-2026-12-02-{n:03d}",
        "status": "active",
        "type": "behavioral",
        "scope": "project:team",
        "statement": f"Rule number {n}",
        "commitment": "draft",
        "updated_at": "2026-12-02T08:00:00.000Z",
    }
    record.update(extra)
    return record


def _write(repo: Path, engrams: list[dict[str, object]]) -> None:
    (repo / "engrams.yaml").write_text(dump_engrams_document({"engrams": engrams}))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Ann")
    git(root, "config", "user.email", "ann@example.test")
    _write(root, [_engram(1), _engram(2)])
    git(root, "add", "engrams.yaml")
    git(root, "commit", "-q", "-m", "base")
    return root


def _branches(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "bob")
    _write(repo, [_engram(1, status="retired", updated_at="2026-12-02T10:00:00.000Z"), _engram(2), _engram(3)])
    git(repo, "commit", "-q", "-am", "bob")
    git(repo, "checkout", "-q", "main")
    _write(
        repo,
        [
            _engram(1, commitment="decided", updated_at="2026-12-02T09:00:00.000Z"),
            _engram(2),
            _engram(3, statement="Other"),
        ],
    )
    git(repo, "commit", "-q", "-am", "ann")


def test_install_status_uninstall_round_trip(repo: Path) -> None:
    found = find_repo(repo)
    assert found is not None
    assert installed(found)  # nothing yet
    assert cli.main(["merge-driver", "--status", str(repo)]) == 1
    assert cli.main(["merge-driver", "--install", str(repo)]) == 0
    assert installed(found) == []
    assert "merge=plur-engrams" in (found.git_dir / "info" / "attributes").read_text()
    assert git(repo, "check-attr", "merge", "tensions.yaml").endswith("plur-tensions")
    assert git(repo, "config", "rebase.autoStash") == "true"
    hook = found.git_dir / "hooks" / "post-rewrite"
    assert "--follow-renumbered" in hook.read_text() and hook.stat().st_mode & 0o100
    assert install(found) == ["already installed"]  # idempotent
    uninstall(found)
    assert not hook.exists()
    assert "plur-desk" not in (found.git_dir / "info" / "attributes").read_text()
    assert git(repo, "check-attr", "merge", "engrams.yaml").endswith("unspecified")
    assert subprocess.run(["git", "config", "rebase.autoStash"], cwd=repo).returncode == 1  # we had set it


def test_uninstall_keeps_a_setting_the_user_had(repo: Path) -> None:
    git(repo, "config", "rebase.autoStash", "true")
    found = find_repo(repo)
    assert found is not None
    install(found)
    uninstall(found)
    assert git(repo, "config", "rebase.autoStash") == "true"


@pytest.mark.parametrize("how", ["merge", "rebase"])
def test_git_merges_through_the_driver_the_same_way_in_both_directions(repo: Path, how: str) -> None:
    found = find_repo(repo)
    assert found is not None
    install(found)
    _branches(repo)
    if how == "merge":
        git(repo, "merge", "-q", "--no-edit", "bob")
    else:
        git(repo, "checkout", "-q", "bob")
        git(repo, "rebase", "-q", "main")
    data = (repo / "engrams.yaml").read_text()
    assert "<<<<<<<" not in data
    assert git(repo, "status", "--porcelain") == ""
    assert "status: retired" in data and "commitment: decided" in data
    assert "ENG-2026-12-02-004" in data  # the two different -003 records: one moved to -004
    moved = team_ledger.read(repo, team_ledger.RENUMBERED)
    assert [m["old"] for m in moved] == ["ENG-2026-12-02-003"]


def test_a_failing_driver_leaves_no_conflict_markers(repo: Path) -> None:
    found = find_repo(repo)
    assert found is not None
    install(found)
    _branches(repo)
    git(repo, "checkout", "-q", "bob")
    broken = (repo / "engrams.yaml").read_text() + "  - id: [unclosed\n"
    (repo / "engrams.yaml").write_text(broken)
    git(repo, "commit", "-q", "-am", "broken")
    git(repo, "checkout", "-q", "main")
    ours = (repo / "engrams.yaml").read_bytes()
    proc = subprocess.run(["git", "merge", "--no-edit", "bob"], cwd=repo, capture_output=True)
    assert proc.returncode != 0
    assert "not merged, left as it was" in proc.stderr.decode() + proc.stdout.decode()
    assert (repo / "engrams.yaml").read_bytes() == ours  # %A untouched: no markers
    git(repo, "merge", "--abort")


def test_driver_exit_codes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # not inside any clone
    base, ours, theirs = (tmp_path / n for n in ("o", "a", "b"))
    base.write_text(dump_engrams_document({"engrams": [_engram(1)]}))
    ours.write_text(dump_engrams_document({"engrams": [_engram(1, commitment="decided")]}))
    theirs.write_text(dump_engrams_document({"engrams": [_engram(1), _engram(2)]}))
    assert cli.main(["merge-driver", str(base), str(ours), str(theirs), "engrams.yaml"]) == 0
    merged = ours.read_text()
    assert "commitment: decided" in merged and "ENG-2026-12-02-002" in merged
    theirs.write_bytes(b"engrams:\n  - id: x\n  bad: [\n")
    before = ours.read_bytes()
    assert cli.main(["merge-driver", str(base), str(ours), str(theirs), "engrams.yaml"]) == 1
    assert ours.read_bytes() == before
    with pytest.raises(SystemExit):
        cli.main(["merge-driver", str(base), str(ours)])


def test_driver_command_runs_this_copy_of_plur_desk(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from plur_desk.app.team.merge_driver import driver_command

    assert driver_command().endswith("-m plur_desk merge-driver %O %A %B %P")
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", "/opt/plur desk/plur-desk-cli")
    assert driver_command() == "'/opt/plur desk/plur-desk-cli' merge-driver %O %A %B %P"


def test_a_users_own_hook_is_left_alone(repo: Path) -> None:
    found = find_repo(repo)
    assert found is not None
    own = found.git_dir / "hooks" / "post-merge"
    own.parent.mkdir(exist_ok=True)
    own.write_text("#!/bin/sh\necho mine\n")
    done = install(found)
    assert any("left your own post-merge hook alone" in line for line in done)
    uninstall(found)
    assert own.read_text() == "#!/bin/sh\necho mine\n"
