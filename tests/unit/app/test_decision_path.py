"""What one plain decision loads: a ratification's module and the agent-change commands wait for the first ratify or
revert (docs/architecture.md, "One decision, end to end"); the decision itself is followed into the baseline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import json, sys
from pathlib import Path
import keyring
from keyring.backends import fail
keyring.set_keyring(fail.Keyring())
sys.path.insert(0, "tests")
from support.sessions import small_session
from plur_desk.domain.commands import ApproveDrafts
session = small_session(Path(sys.argv[1]))
session.watch.start()
before = session.watch.read().lines
session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"]))))
print(json.dumps({
    "lines": session.watch.read().lines - before,
    "loaded": sorted(m for m in sys.modules if m.endswith(("ratification", "agent_change_commands"))),
}))
"""


def test_an_approval_in_a_watched_store_loads_no_ratification(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
    }
    root = Path(__file__).resolve().parents[3]
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout.splitlines()[-1])
    assert report["lines"] == 1, report  # the approval joined the baseline as a `decided` line
    assert report["loaded"] == [], report
