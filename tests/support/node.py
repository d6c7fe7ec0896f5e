"""Runs the real PLUR and js-yaml (npm packages under tests/node) from the tests."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

NODE_DIR = Path(__file__).resolve().parent.parent / "node"


def ensure_node_modules() -> Path:
    """tests/node/node_modules, installed from the lock file when missing (CI installs it up front), without PLUR's
    optional packages as dev.sh does (the SQLite index's better-sqlite3 is for the benchmarks: docs/benchmarks.md)."""
    if not (NODE_DIR / "node_modules" / "@plur-ai" / "core").is_dir():
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError("npm is required for the interop tests (install Node.js 20 and npm)")
        subprocess.run([npm, "ci", "--omit=optional", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True)
    return NODE_DIR


def require_sqlite_index() -> None:
    """For a benchmark whose figures are PLUR's with its own SQLite index (`engrams.db`): that index is the optional
    package better-sqlite3, which ./dev.sh test leaves out; without it PLUR runs with no index at all, and a "warm"
    figure would silently be another thing."""
    built = NODE_DIR / "node_modules" / "better-sqlite3" / "build" / "Release" / "better_sqlite3.node"
    if not built.is_file():
        raise SystemExit(
            "PLUR's SQLite index (the optional package better-sqlite3) is not installed: run `npm ci` in tests/node "
            "first, which installs PLUR with its optional packages (docs/benchmarks.md)"
        )


def plur_env(store: Path, home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        HOME=str(home), PLUR_PATH=str(store), PLUR_DISABLE_EMBEDDINGS="1", PLUR_AUTO_DISCOVER="0", PLUR_TELEMETRY="0"
    )
    return env


def run_node(script: str, *, payload: object = None, env: dict[str, str] | None = None, timeout: float = 300) -> object:
    """Run tests/node/<script> with `payload` as JSON on stdin; its stdout is parsed as JSON."""
    ensure_node_modules()
    proc = subprocess.run(
        ["node", str(NODE_DIR / script)],
        input=json.dumps(payload).encode() if payload is not None else b"null",
        capture_output=True,
        env=env,
        cwd=NODE_DIR,
        timeout=timeout,
    )
    if proc.returncode != 0:
        stderr = proc.stderr.decode()[-4000:]
        if "better-sqlite3 is required" in stderr:  # PLUR's index for 5,000 engrams or more: an optional package
            stderr += "\n(install PLUR with its optional packages: `npm ci` in tests/node; docs/benchmarks.md)"
        raise RuntimeError(f"node {script} failed ({proc.returncode}):\n{stderr}")
    return json.loads(proc.stdout)
