"""Rebuilds the bundled demo store: the real PLUR writes it (tests/node/make_demo_store.mjs), a reviewer's earlier
decisions are made with plur_desk itself, then an agent re-asserts a rejected statement (shown as "rejected before")
and three agents write one lesson in their own words (a near-duplicate cluster). Last, one agent session's story
around the draft gate (`agent_session`): it drafts and records a contradiction between two of its own engrams, a
second demo reviewer starts watching the store (a signed baseline), then the agent promotes its own draft and
resolves the tension on its own, which the Changes queue lists.

    python packaging/make_demo_store.py                    # everything, from nothing (new keys, new ids)
    python packaging/make_demo_store.py --agent-session    # only the last step, added to the bundled store
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

from plur_desk.app.changes.watch import ChangeWatch  # noqa: E402
from plur_desk.app.review.session import ReviewSession  # noqa: E402
from plur_desk.app.trust.signing import ReviewerKeys  # noqa: E402
from plur_desk.app.trust.trust_file import TrustFile  # noqa: E402
from plur_desk.app.trust.vault import KeyVault  # noqa: E402
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
WATCHER = "Charles Babbage"  # the second demo reviewer: he started watching the store (app/demo.py DEMO_REVIEWERS)
NEAR_DUPLICATE_OPTIONS = {"scope": "project:web", "domain": "dev.ci", "type": "procedural", "commitment": "draft"}


AGENT_SESSION = "sess-codex-20261206-a41f"  # the agent session of the Changes queue's demo
SESSION_OPTIONS = {"scope": "project:web", "domain": "dev.e2e", "session_episode_id": AGENT_SESSION}
SESSION_DRAFTS = (
    "End-to-end tests run in Playwright against the PR's preview deploy",
    "Preview deploys are deleted 48 hours after their PR closes",
)
SESSION_PAIR = (
    "E2E test runs get a fresh seeded database for every run",
    "E2E test runs share one long-lived seeded database, reset nightly",
)


def agent_session(store: Path, home: Path, vault: Path) -> None:
    """An agent session writes drafts and two engrams that contradict each other (a tension it records); the
    second demo reviewer starts watching; then the agent promotes its own draft (updateEngram: no history event)
    and resolves the tension itself, retiring the loser. The reviewer's key, and the note that it is his,
    stay in `vault` (thrown away): never the real keyring or the user's trust file."""
    env = plur_env(store, home)
    (store / "config.yaml").write_text("provenance:\n  identity: agent:codex\n", encoding="utf-8")
    drafted = run_node(
        "plur_ops.mjs",
        payload=[
            *(
                {"op": "learn", "statement": s, "options": {**SESSION_OPTIONS, "commitment": "draft"}}
                for s in SESSION_DRAFTS
            ),
            *({"op": "learn", "statement": s, "options": SESSION_OPTIONS} for s in SESSION_PAIR),
        ],
        env=env,
    )
    assert isinstance(drafted, list)
    draft, _kept_draft, fresh, shared = (str(e["id"]) for e in drafted)
    pair = {"id_a": fresh, "id_b": shared, "statement_a": SESSION_PAIR[0], "statement_b": SESSION_PAIR[1]}
    recorded = run_node(
        "plur_ops.mjs",
        payload=[{"op": "recordTensions", "pairs": [{**pair, "confidence": 0.86, "reason": "Fresh or shared DB"}]}],
        env=env,
    )
    assert isinstance(recorded, list)
    tension = str(recorded[0]["records"][0]["id"])
    plur_store = PlurStore(store)
    plur_store.load()
    watcher = Reviewer(WATCHER)
    session = ReviewSession(
        plur_store,
        watcher,
        FixedClock(datetime.now(UTC)),
        ReviewerKeys(store, watcher, KeyVault(vault), trust_file=TrustFile(vault)),
    )
    session.load_history()
    assert ChangeWatch(session).start()
    run_node(
        "plur_ops.mjs",
        payload=[
            {"op": "update", "id": draft, "fields": {"commitment": "decided"}},
            {"op": "resolve", "id": tension, "winner": fresh},
        ],
        env=env,
    )
    (store / "config.yaml").unlink()


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
        keys = ReviewerKeys(store, ada, KeyVault(Path(tmp) / "reviewer"), trust_file=TrustFile(Path(tmp) / "reviewer"))
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
        agent_session(store, home, Path(tmp) / "watcher")
        _put_in_place(store)


def add_agent_session() -> None:
    """Only the last step, on a copy of the bundled store: its ids, decisions and Ada's signatures stay as they are."""
    with tempfile.TemporaryDirectory(prefix="plur-demo-") as tmp:
        store, home = Path(tmp) / "store", Path(tmp) / "home"
        home.mkdir()
        shutil.copytree(TARGET, store)
        keyring.set_keyring(fail.Keyring())
        agent_session(store, home, Path(tmp) / "watcher")
        _put_in_place(store)


def _put_in_place(store: Path) -> None:
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
    add_agent_session() if "--agent-session" in sys.argv[1:] else main()
