"""Review at scale on stores the real PLUR wrote: `plur-desk clusters` and `plur-desk writers`, read-only."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from plur_desk.app.review.bootstrap import open_session
from plur_desk.app.scale.review_at_scale import ScaleView
from plur_desk.cli import main

from support.stores import plur

pytestmark = pytest.mark.interop

LEARN = [
    ("The CI pipeline uses Node 20 for all builds", "project:web"),
    ("All CI builds run on Node 20", "project:web"),
    ("The CI pipeline uses Node 22 for all builds", "project:web"),
    ("Run the test suite before pushing to main", "project:api"),
    ("Always run the tests before you push to main", "project:api"),
    ("Run the tests before pushing to main", "project:web"),  # alike, but another scope: not a duplicate
]


def _fingerprint(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def learned(tmp_path: Path) -> Path:
    root = tmp_path / "learned"
    ops = [{"op": "learn", "statement": s, "options": {"scope": scope, "commitment": "draft"}} for s, scope in LEARN]
    ids = [e["id"] for e in plur(root, tmp_path / "home", ops)]
    (root / "ids.json").write_text(json.dumps(ids))
    return root


def test_clusters_cli_on_a_plur_store(learned: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ids = json.loads((learned / "ids.json").read_text())
    before = _fingerprint(learned)
    assert main(["clusters", str(learned), "--json", "--no-semantic"]) == 0
    out = json.loads(capsys.readouterr().out)
    sets = [{m["id"] for m in c["members"]} for c in out["clusters"]]
    assert not any({ids[0], ids[2]} <= s for s in sets)  # Node 20 and Node 22 stay apart
    assert len(set(ids)) == 6
    assert not any({ids[3], ids[5]} <= s for s in sets)  # different scopes stay apart
    assert all(m["joined_by"] for c in out["clusters"] for m in c["members"])
    assert _fingerprint(learned) == before  # read-only


def test_embedding_clusters_find_the_paraphrases(learned: Path) -> None:
    from plur_desk.index.embeddings import Embedder

    if Embedder.model_file() is None:
        pytest.skip("embedding model package not installed")
    ids = json.loads((learned / "ids.json").read_text())
    view = ScaleView.open(open_session(learned, "test"), None)
    view.refresh()
    sets = [{m.id for m in c.members} for c in view.clusters()]
    assert {ids[0], ids[1]} in sets
    assert not any(ids[2] in s for s in sets)


def test_writers_cli_on_a_plur_store(learned: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _fingerprint(learned)
    assert main(["writers", str(learned), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    [writer] = out["writers"]
    assert writer["writer"]["asserted_by"] == "unidentified" and writer["writer"]["runtime"] == "plur-core"
    assert (writer["drafts"], writer["pending"], writer["created"]) == (6, 6, 6)
    assert main(["writers", str(learned)]) == 0
    assert "unidentified · plur-core" in capsys.readouterr().out
    assert _fingerprint(learned) == before


def test_cli_refuses_a_missing_store_with_a_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["writers", str(tmp_path / "nowhere")]) == 2
    assert "plur-desk writers" in capsys.readouterr().err


def test_a_settled_cluster_is_what_plur_reads_and_survives_its_rewrite(learned: Path, tmp_path: Path) -> None:
    """Keep one, reject the others as its duplicates: PLUR quarantines nothing and keeps the link to the kept
    engram through its own rewrite of the file."""
    ids = json.loads((learned / "ids.json").read_text())
    session = open_session(learned, "Ada Reviewer")
    view = ScaleView(session)  # word overlap, as the terminal view without the model
    view.refresh()
    [cluster] = [c for c in view.clusters() if {ids[3], ids[4]} <= {m.id for m in c.members}]
    view.settle(cluster)
    keep = cluster.representative
    dropped = [m.id for m in cluster.members if m.id != keep]
    home = tmp_path / "home2"
    loaded, _learned, reloaded = plur(
        learned,
        home,
        [
            {"op": "load"},
            {
                "op": "learn",
                "statement": "A statement that makes PLUR rewrite the file",
                "options": {"scope": "global"},
            },
            {"op": "load"},
        ],
    )
    assert loaded["quarantined"] == [] and reloaded["quarantined"] == []
    assert reloaded["engrams"][keep]["commitment"] == "decided"
    for engram_id in dropped:
        engram = reloaded["engrams"][engram_id]
        assert engram["status"] == "retired"
        assert engram["review"]["duplicate_of"] == keep
