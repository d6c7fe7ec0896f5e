"""Rebuilds the bundled demo store: the real PLUR writes it (tests/node/make_demo_store.mjs), a reviewer's earlier
decisions are made with plur_desk itself, then an agent re-asserts a rejected statement (shown as "rejected before")
and three agents write one lesson in their own words (a near-duplicate cluster).

    python packaging/make_demo_store.py
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import keyring  # noqa: E402
from keyring.backends import fail  # noqa: E402

from plur_desk.app.session import ReviewSession  # noqa: E402
from plur_desk.app.signing import ReviewerKeys  # noqa: E402
from plur_desk.app.vault import KeyVault  # noqa: E402
from plur_desk.domain.commands import ApproveDrafts, ConfirmTension, RejectDrafts  # noqa: E402
from plur_desk.domain.review import Reviewer  # noqa: E402
from plur_desk.infra.clock import FixedClock  # noqa: E402
from plur_desk.store.plur_store import PlurStore  # noqa: E402

from support.node import plur_env, run_node  # noqa: E402

TARGET = ROOT / "plur_desk" / "resources" / "demo_store"
NEAR_DUPLICATES = (
    ("agent:codex", "Run the linter before every commit to the web repo"),
    ("agent:claude-code", "Always run the linter before you commit to the web repo"),
    ("agent:cursor", "Before every commit to the web repo, run the linter"),
)
NEAR_DUPLICATE_OPTIONS = {"scope": "project:web", "domain": "dev.ci", "type": "procedural", "commitment": "draft"}


def _id_of(session: ReviewSession, statement: str) -> str:
    return next(str(e["id"]) for e in session.all_engrams() if e.get("statement") == statement)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="plur-demo-") as tmp:
        store, home = Path(tmp) / "store", Path(tmp) / "home"
        home.mkdir()
        run_node("make_demo_store.mjs", env=plur_env(store, home))
        plur_store = PlurStore(store)
        plur_store.load()
        # The demo reviewer's key lives in the temporary folder and is thrown away with it: her decisions verify
        # against keys.yaml, and nobody can sign as her again. Never the real keyring.
        keyring.set_keyring(fail.Keyring())
        ada = Reviewer("Ada Lovelace")
        keys = ReviewerKeys(store, ada, KeyVault(Path(tmp) / "reviewer"))
        session = ReviewSession(plur_store, ada, FixedClock(datetime.now(UTC)), keys)
        session.load_history()
        session.execute(
            RejectDrafts(
                tuple(session.seen([_id_of(session, "Use spaces for indentation in every file")])),
                "Makefiles need tabs; the style guide only bans tabs elsewhere",
            )
        )
        session.execute(
            ApproveDrafts(
                tuple(
                    session.seen([_id_of(session, "The design system lives in packages/ui and uses Radix primitives")])
                ),
                "decided",
                "checked against the repo",
            )
        )
        session.execute(ConfirmTension(session.seen_tension(next(t.id for t in session.tensions(("detected",))))))
        # An agent asserts the rejected statement again, in another session.
        run_node(
            "plur_ops.mjs",
            payload=[
                {
                    "op": "learn",
                    "statement": "Use spaces for indentation in every file",
                    "options": {"scope": "global", "domain": "dev.style", "commitment": "draft"},
                }
            ],
            env=plur_env(store, home),
        )
        # Three agents write the same lesson in their own words: a near-duplicate cluster for the Clusters pane.
        for writer, statement in NEAR_DUPLICATES:
            (store / "config.yaml").write_text(f"provenance:\n  identity: {writer}\n", encoding="utf-8")
            run_node(
                "plur_ops.mjs",
                payload=[{"op": "learn", "statement": statement, "options": NEAR_DUPLICATE_OPTIONS}],
                env=plur_env(store, home),
            )
        for leftover in ("packs", "backups", "config.yaml"):
            path = store / leftover
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()
        shutil.rmtree(TARGET, ignore_errors=True)
        shutil.copytree(store, TARGET)
    print("demo store written to", TARGET)


if __name__ == "__main__":
    main()
