"""The few git calls team review needs, run as subprocesses with a timeout (as PLUR's own sync does)."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

GIT_TIMEOUT = 60.0


class GitError(Exception):
    """A git command failed; the message carries git's own words."""


@dataclass(frozen=True)
class Repo:
    """A work tree (`top`), its git directory, and where the PLUR store sits inside it (`store`)."""

    top: Path
    git_dir: Path
    store: Path

    @property
    def store_prefix(self) -> str:
        """The store's path inside the repository, '' when the store is the repository's top level."""
        rel = os.path.relpath(self.store, self.top)
        return "" if rel == "." else rel.replace(os.sep, "/") + "/"

    def run(
        self, *args: str, check: bool = True, input: bytes | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        full_env = dict(os.environ)
        full_env.update(env or {})
        full_env.setdefault("GIT_TERMINAL_PROMPT", "0")
        try:
            proc = subprocess.run(
                ["git", *args], cwd=self.top, input=input, capture_output=True, timeout=GIT_TIMEOUT, env=full_env
            )
        except subprocess.TimeoutExpired:
            raise GitError(f"git {args[0]} did not finish within {GIT_TIMEOUT:.0f} s") from None
        if check and proc.returncode != 0:
            words = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip()
            raise GitError(f"git {' '.join(args[:2])} failed: {words}")
        return proc

    def text(self, *args: str) -> str:
        return self.run(*args).stdout.decode("utf-8", "replace").strip()

    def ok(self, *args: str) -> bool:
        return self.run(*args, check=False).returncode == 0

    def blob(self, spec: str) -> bytes | None:
        """The bytes of `<rev>:<path>` (or `:<stage>:<path>`), None when it does not exist."""
        proc = self.run("cat-file", "blob", spec, check=False)
        return proc.stdout if proc.returncode == 0 else None

    def config(self, key: str) -> str | None:
        proc = self.run("config", "--local", "--get", key, check=False)
        return proc.stdout.decode().strip() if proc.returncode == 0 else None

    def remote_refs(self) -> list[str]:
        out = self.run("for-each-ref", "--format=%(refname)", "refs/remotes", check=False).stdout.decode()
        return [line for line in out.splitlines() if line and not line.endswith("/HEAD")]


def find_repo(store: Path) -> Repo | None:
    """The git repository holding `store`, or None when the store is not in one."""
    store = store.resolve()
    try:
        proc = subprocess.run(
            ["git", "rev-parse", "--show-toplevel", "--absolute-git-dir"],
            cwd=store,
            capture_output=True,
            timeout=GIT_TIMEOUT,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    lines = proc.stdout.decode().splitlines()
    if len(lines) < 2:
        return None
    return Repo(Path(lines[0]).resolve(), Path(lines[1]).resolve(), store)
