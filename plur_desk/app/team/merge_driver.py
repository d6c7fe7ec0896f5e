"""`plur-desk merge-driver`: the git merge driver for engrams.yaml and tensions.yaml, and its per-clone install.

git runs `plur-desk merge-driver %O %A %B %P` whenever two versions of a store file meet (rebase, merge, the
autostash pop of `plur sync`); the merged file replaces %A. A driver that cannot merge exits 1 and leaves %A
exactly as git gave it, so the store never holds conflict markers. `--install` registers the driver in the
clone's `.git/info/attributes` and `.git/config` (neither is committed by `plur sync`) and turns on
`rebase.autoStash`, without which git refuses to pull over PLUR's stripped, never-committed records.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

import plur_desk
from plur_desk.app.team.git_repo import GitError, Repo, find_repo
from plur_desk.infra.paths import default_store_path
from plur_desk.store import baseline
from plur_desk.store.atomic import atomic_write
from plur_desk.store.locking.lock import TENSIONS_POLICY, locked
from plur_desk.store.team import team_ledger
from plur_desk.store.team.merge import (
    FileMerge,
    MergeError,
    merge_engram_files,
    merge_tension_files,
    rewrite_tension_refs,
)

DRIVERS = {"engrams.yaml": "plur-engrams", "tensions.yaml": "plur-tensions", baseline.RELATIVE: "plur-baseline"}
BEGIN = "# >>> plur-desk merge driver (plur-desk merge-driver --uninstall removes this block)"
END = "# <<< plur-desk merge driver"
OWN_SETTINGS = ("rebase.autoStash",)  # not merge.autoStash: its pop would line-merge files without a driver
MARK = "plur-desk.set"


def driver_command() -> str:
    """The command git runs: this interpreter and this copy of plur_desk, whatever PATH holds later."""
    if getattr(sys, "frozen", False):  # a bundled build: the executable itself takes the terminal commands
        return f"{shlex.quote(sys.executable)} merge-driver %O %A %B %P"
    package_parent = Path(plur_desk.__file__).resolve().parent.parent
    python = shlex.quote(sys.executable)
    return f"env PYTHONPATH={shlex.quote(str(package_parent))} {python} -m plur_desk merge-driver %O %A %B %P"


def _attributes_block(repo: Repo) -> str:
    lines = [BEGIN]
    lines += [f"/{repo.store_prefix}{name} merge={driver}" for name, driver in DRIVERS.items()]
    lines.append(END)
    return "\n".join(lines) + "\n"


def _without_block(text: str) -> str:
    out, skipping = [], False
    for line in text.splitlines(keepends=True):
        if line.startswith(BEGIN):
            skipping = True
            continue
        if skipping:
            if line.startswith(END):
                skipping = False
            continue
        out.append(line)
    return "".join(out)


def _edit_info_file(repo: Repo, name: str, block: str | None) -> None:
    path = repo.git_dir / "info" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    new = _without_block(old)
    if block:
        new = (new if not new or new.endswith("\n") else new + "\n") + block
    if new != old:
        atomic_write(path, new.encode("utf-8"))


HOOKS = ("post-merge", "post-rewrite")
HOOK_MARK = "# plur-desk: tensions follow renumbered engrams"


def hook_text(store: Path) -> str:
    command = driver_command().replace(" %O %A %B %P", f" --follow-renumbered {shlex.quote(str(store))}")
    return f"#!/bin/sh\n{HOOK_MARK}\n{command} >/dev/null 2>&1 || true\n"


def _install_hooks(repo: Repo) -> list[str]:
    """After PLUR's own sync merges or rebases: tensions recorded for a renumbered engram follow it. A hook the
    user already has is left alone (and said so)."""
    done = []
    hooks = Path(repo.text("rev-parse", "--git-path", "hooks"))
    hooks = hooks if hooks.is_absolute() else repo.top / hooks
    hooks.mkdir(parents=True, exist_ok=True)
    for name in HOOKS:
        path = hooks / name
        if path.exists() and HOOK_MARK not in path.read_text(encoding="utf-8", errors="replace"):
            done.append(f"left your own {name} hook alone (tensions on renumbered engrams follow at plur-desk sync)")
            continue
        text = hook_text(repo.store)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            path.chmod(0o755)
            done.append(f"installed the {name} hook")
    return done


def _uninstall_hooks(repo: Repo) -> list[str]:
    hooks = Path(repo.text("rev-parse", "--git-path", "hooks"))
    hooks = hooks if hooks.is_absolute() else repo.top / hooks
    done = []
    for name in HOOKS:
        path = hooks / name
        if path.exists() and HOOK_MARK in path.read_text(encoding="utf-8", errors="replace"):
            path.unlink()
            done.append(f"removed the {name} hook")
    return done


def install(repo: Repo) -> list[str]:
    """Register the driver in this clone; returns what was done, in plain words."""
    done = _install_hooks(repo)
    _edit_info_file(repo, "attributes", _attributes_block(repo))
    _edit_info_file(repo, "exclude", f"{BEGIN}\n/{repo.store_prefix}{team_ledger.FOLDER}/\n{END}\n")
    command = driver_command()
    for driver in DRIVERS.values():
        if repo.config(f"merge.{driver}.driver") != command:
            repo.run("config", "--local", f"merge.{driver}.name", "PLUR store three-way merge (plur-desk)")
            repo.run("config", "--local", f"merge.{driver}.driver", command)
            done.append(f"registered the {driver} merge driver")
    for key in OWN_SETTINGS:
        if repo.config(key) is None:
            repo.run("config", "--local", key, "true")
            repo.run("config", "--local", "--add", MARK, key)
            done.append(f"set {key}=true")
    return done or ["already installed"]


def uninstall(repo: Repo) -> list[str]:
    _edit_info_file(repo, "attributes", None)
    _edit_info_file(repo, "exclude", None)
    done = ["removed the driver from .git/info/attributes", *_uninstall_hooks(repo)]
    for driver in DRIVERS.values():
        if repo.ok("config", "--local", "--remove-section", f"merge.{driver}"):
            done.append(f"removed merge.{driver}")
    marked = repo.run("config", "--local", "--get-all", MARK, check=False).stdout.decode().split()
    for key in marked:
        repo.run("config", "--local", "--unset", key, check=False)
        done.append(f"unset {key} (plur-desk had set it)")
    repo.run("config", "--local", "--unset-all", MARK, check=False)
    return done


def installed(repo: Repo) -> list[str]:
    """What is missing for merges to go through the driver ([] when everything is in place)."""
    missing = []
    for name, driver in DRIVERS.items():
        attr = repo.text("check-attr", "merge", "--", f"{repo.store_prefix}{name}")
        if not attr.endswith(f": {driver}"):
            missing.append(f"{name} is not assigned to the {driver} driver")
        if not repo.config(f"merge.{driver}.driver"):
            missing.append(f"merge.{driver}.driver is not configured")
    if (repo.config("rebase.autoStash") or "").lower() != "true":
        missing.append("rebase.autoStash is off (git cannot pull over PLUR's stripped records)")
    return missing


# -- the driver itself ----------------------------------------------------------------------------------------


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def _pushed(repo: Repo | None, path: str) -> tuple[bytes, ...]:
    if repo is None:
        return ()
    blobs = (repo.blob(f"{ref}:{path}") for ref in repo.remote_refs())
    return tuple(b for b in blobs if b)


def merge_versions(
    name: str,
    base: bytes,
    ours: bytes,
    theirs: bytes,
    pushed: tuple[bytes, ...],
    store: Path,
    *,
    theirs_order: bool = False,
) -> FileMerge:
    if name == "engrams.yaml":
        return merge_engram_files(base, ours, theirs, pushed, theirs_order=theirs_order)
    if name == "tensions.yaml":
        mapping = [{k: str(v) for k, v in m.items()} for m in team_ledger.read(store, team_ledger.RENUMBERED)]
        engram_moves = [m for m in mapping if m.get("old", "").startswith(("ENG-", "ABS-", "META-"))]
        ours, theirs = (rewrite_tension_refs(x, engram_moves) for x in (ours, theirs))
        return merge_tension_files(base, ours, theirs, pushed, theirs_order=theirs_order)
    if name == Path(baseline.RELATIVE).name:  # signed claims: a set of lines, none dropped (store/baseline.py)
        return FileMerge(baseline.merge_lines(base, ours, theirs))
    raise MergeError(f"{name} is not a file plur-desk knows how to merge")


def run_driver(base: str, ours: str, theirs: str, path: str) -> int:
    name = Path(path).name
    try:
        repo = find_repo(Path.cwd())
        store = (repo.top if repo else Path.cwd()) / Path(path).parent
        if path.endswith(baseline.RELATIVE):  # the ledger belongs to the store, not to the baseline's folder
            store = (repo.top if repo else Path.cwd()) / path[: -len(baseline.RELATIVE)]
        result = merge_versions(name, _read(base), _read(ours), _read(theirs), _pushed(repo, path), store)
        atomic_write(Path(ours), result.data)
    except Exception as exc:  # whatever went wrong, %A must stay as git gave it
        sys.stderr.write(f"plur-desk merge-driver: {path} not merged, left as it was: {exc}" + "\n")
        return 1
    if repo is not None:  # the ledger belongs to a clone's store, never to wherever the driver was run from
        team_ledger.append(store, team_ledger.RENUMBERED, [{**m, "file": name} for m in result.renumbered])
        team_ledger.append(store, team_ledger.DISAGREEMENTS, [{**d, "file": name} for d in result.disagreements])
    for move in result.renumbered:
        sys.stderr.write(
            f"plur-desk: {move['old']} was taken on the remote; this machine's record is now {move['new']}" + "\n"
        )
    return 0


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")


def follow_renumbered(store: Path) -> bool:
    """Tensions recorded here for an engram a merge renumbered point at its new id. git runs the tensions driver
    only when both sides changed tensions.yaml, so the driver alone cannot always do this; `plur-desk sync` does it
    after each merge, and the post-merge/post-rewrite hooks after PLUR's own sync."""
    moves = [
        {k: str(v) for k, v in m.items()}
        for m in team_ledger.read(store, team_ledger.RENUMBERED)
        if str(m.get("old", "")).startswith(("ENG-", "ABS-", "META-"))
    ]
    file = store / "tensions.yaml"
    if not moves or not file.exists():
        return False
    with locked(file, TENSIONS_POLICY):
        data = file.read_bytes()
        fixed = rewrite_tension_refs(data, moves)
        if fixed == data:
            return False
        atomic_write(file, fixed)
    return True


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="plur-desk merge-driver",
        description="Three-way merge of engrams.yaml/tensions.yaml for git, or its install in a store's clone.",
        epilog="git calls it as: plur-desk merge-driver BASE OURS THEIRS PATH",
    )
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--install", action="store_true", help="register the driver in STORE's git clone")
    action.add_argument("--uninstall", action="store_true", help="remove what --install added")
    action.add_argument("--status", action="store_true", help="say whether merges go through the driver")
    action.add_argument(
        "--follow-renumbered", action="store_true", help="point tensions at renumbered engrams (the hooks run it)"
    )
    parser.add_argument("args", nargs="*", help="[STORE] with an option; BASE OURS THEIRS PATH when git calls it")
    args = parser.parse_args(argv)
    if not (args.install or args.uninstall or args.status or args.follow_renumbered):
        if len(args.args) != 4:
            parser.error("git passes four arguments: BASE OURS THEIRS PATH")
        return run_driver(*args.args)
    if len(args.args) > 1:
        parser.error("give at most one STORE")
    store = default_store_path(args.args[0] if args.args else None)
    repo = find_repo(store)
    if repo is None:
        _say(f"{store} is not inside a git clone; PLUR's sync creates one (plur sync) before a driver is useful")
        return 2
    try:
        if args.follow_renumbered:
            follow_renumbered(repo.store)
            return 0
        if args.status:
            missing = installed(repo)
            _say("\n".join(missing) if missing else "installed: merges of engrams.yaml and tensions.yaml use plur-desk")
            return 1 if missing else 0
        for line in install(repo) if args.install else uninstall(repo):
            _say(line)
    except GitError as exc:
        _say(str(exc))
        return 2
    return 0
