"""Two reviewers' clones of one store with plain git (no Node): a bare remote, Ann's seeded clone and Bob's, and the
engram records the sync and merge tests write into them, with the case PLUR 0.21's rename of a repeated id makes."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from plur_desk.domain.plur_rules.rekey import fresh_duplicate_id
from plur_desk.store.lists.yaml_dump import dump_engrams_document
from plur_desk.store.lists.yaml_load import load_general

Record = dict[str, object]


def git(cwd: Path, *args: str, check: bool = True) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=60)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr.decode()}")
    return proc.stdout.decode().strip()


def identity(clone: Path, name: str) -> None:
    git(clone, "config", "user.name", name)
    git(clone, "config", "user.email", f"{name.lower()}@example.test")


def two_clones(base: Path, seed: Callable[[Path], None], add: Sequence[str] = (".",)) -> tuple[Path, Path]:
    """Ann's clone seeded by `seed(ann)` (its `add` paths committed and pushed to a bare remote), and Bob's clone of
    that remote."""
    remote, ann, bob = base / "remote.git", base / "ann", base / "bob"
    git(base, "init", "-q", "--bare", "-b", "main", str(remote))
    ann.mkdir()
    git(ann, "init", "-q", "-b", "main")
    seed(ann)
    identity(ann, "Ann")
    git(ann, "add", *add)
    git(ann, "commit", "-q", "-m", "seed")
    git(ann, "remote", "add", "origin", str(remote))
    git(ann, "push", "-q", "-u", "origin", "main")
    git(base, "clone", "-q", str(remote), str(bob))
    identity(bob, "Bob")
    return ann, bob


def rule(engram_id: str, n: int, **extra: object) -> Record:
    """A draft engram of the team's project, as PLUR writes one: "Rule number `n`", created at second `n`."""
    record: Record = {
        "id": engram_id,
        "status": "active",
        "type": "behavioral",
        "scope": "project:team",
        "visibility": "public",
        "statement": f"Rule number {n}",
        "commitment": "draft",
        "created_at": f"2026-12-02T08:00:0{n}.000Z",
        "updated_at": "2026-12-02T08:00:00.000Z",
    }
    record.update(extra)
    return record


def engrams_document(*records: Record) -> str:
    return dump_engrams_document({"engrams": list(records)})


def write_engrams(store: Path, *records: Record) -> None:
    (store / "engrams.yaml").write_text(engrams_document(*records))


def engrams_in(store: Path) -> list[Record]:
    return list(load_general((store / "engrams.yaml").read_text())["engrams"])


# Two machines minted one id K the same day; PLUR 0.21 renames the later, different copy to `<K>-D<8 hex>` (NEW).
K = "ENG-2026-12-02-001"
FIRST, LATER, OTHER = rule(K, 1), rule(K, 2), rule("ENG-2026-12-02-003", 3)
NEW = fresh_duplicate_id(K, LATER, {K, str(OTHER["id"])})
