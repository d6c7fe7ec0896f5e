"""A first run that reads right: the embedding model's build step prints one plain progress line and no warning,
and the demo store has something in every pane (a near-duplicate cluster included)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from plur_desk.app.demo import demo_source

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=300, cwd=ROOT, env=env, check=False
    )


def test_the_embedding_model_build_step_is_one_quiet_line(tmp_path):
    pytest.importorskip("onnx")
    from plur_desk.index.embeddings import Embedder

    if Embedder.package_model_file() is None:
        pytest.skip("the embedding model package is not installed")
    target = tmp_path / "model.onnx"
    done = _run("packaging/build_embed_model.py", "--force", "--target", str(target))
    assert done.returncode == 0 and target.is_file()
    assert done.stderr == ""  # onnxruntime's "consider pre-processing" warning is not shown to a new user
    (line,) = done.stdout.splitlines()
    assert line.startswith("embedding model: prepared") and "NaN" not in line and "cosine" not in line
    again = _run("packaging/build_embed_model.py", "--target", str(target))
    assert again.stdout == "embedding model: up to date\n" and again.stderr == ""


def test_the_demo_store_has_a_near_duplicate_cluster():
    done = _run("-m", "plur_desk", "clusters", str(demo_source()))
    assert done.returncode == 0, done.stderr
    assert "cluster of 3 around" in done.stdout
    members = [line for line in done.stdout.splitlines() if line.startswith("  ENG-")]
    assert len(members) == 3 and all("run the linter" in m.lower() for m in members)


def test_demo_help_says_each_start_is_fresh():
    assert "fresh copy" in _run("-m", "plur_desk", "--help").stdout
