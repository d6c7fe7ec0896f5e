"""`plur-desk changes [STORE] [--json]`: agent changes since the watched baseline (read-only); `--start --reviewer
NAME` starts watching a store that has no baseline.

Exit codes: 0 no agent change (or watching started, or already watched), 1 agent changes listed or baseline
lines that do not verify, 2 the store (or
the reviewer's key) could not be used. `--json` is a stable interface: `{"store", "watched", "watching_since",
"baseline_problems": [...], "changes": [{"id", "kind", "target", "before", "after", "fields", "writer", "session",
"events", "silent", "also", "session_from"}]}` (`session_from`: how the session was found when no record or event
names it, "" when one does).
"""

from __future__ import annotations

import json
import sys

from plur_desk.app.changes.changes_fast import changes_fast
from plur_desk.domain.agents.agent_changes import AgentChange
from plur_desk.infra.errors import PlurDeskError
from plur_desk.infra.paths import default_store_path, store_parser


def _brief(values: dict[str, object] | None, fields: tuple[str, ...]) -> str:
    if values is None:
        return "(none)"
    return ", ".join(f"{k}={values.get(k)!r}" for k in fields) or "(same)"


def _text(change: AgentChange) -> list[str]:
    silent = " SILENT (no history event records it)" if change.silent else ""
    where = f" session {change.session}" if change.session else ""
    lines = [f"{change.kind:<18} {change.id}  by {change.writer}{where}{silent}"]
    lines.append(f"    before: {_brief(change.before, change.fields)}")
    lines.append(f"    after:  {_brief(change.after, change.fields)}")
    if change.also:
        lines.append(f"    also retired: {', '.join(change.also)}")
    for event in change.events[:5]:
        lines.append(f"    event: {event.get('timestamp')} {event.get('event')}")
    return lines


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")


def _err(text: str) -> None:
    sys.stderr.write(text + "\n")


def main(argv: list[str]) -> int:
    parser = store_parser(
        "changes",
        "What agents changed since the watched baseline, around the draft gate. Writes nothing, unless --start.",
    )
    parser.add_argument("--start", action="store_true", help="start watching this store from its current state")
    parser.add_argument("--reviewer", help="with --start: your name, which signs the baseline's first line")
    args = parser.parse_args(argv)
    if args.start and not args.reviewer:
        parser.error("--start needs --reviewer NAME (the baseline is signed with that reviewer's key)")
    from plur_desk.store.plur_store import find_store_problem

    root = default_store_path(args.store)
    problem = find_store_problem(root)
    if problem:
        _err(f"plur-desk changes: {problem}")
        return 2
    try:
        if not args.start:
            read, changes = changes_fast(root)
        else:
            from plur_desk.app.review.bootstrap import open_session

            session = open_session(root, args.reviewer, load_history=False)
            if session.read_only_reasons:
                _err(f"plur-desk changes: {'; '.join(session.read_only_reasons)}")
                return 2
            started = session.watch.start()
            _say(
                f"{root}: watching from here (signed by {session.reviewer.name}); later agent changes will be listed"
                if started
                else f"{root}: already watched; nothing written"
            )
            for notice in session.signing.key_notices():
                _say(notice)
            return 0
    except PlurDeskError as exc:
        _err(f"plur-desk changes: {exc}")
        return 2
    baseline = read.baseline
    if args.json:
        out = {
            "store": str(root),
            "watched": baseline.watched,
            "watching_since": baseline.started,
            "baseline_problems": read.problem_lines(),
            "changes": [c.to_json() for c in changes],
        }
        _say(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        for line in read.problem_lines():
            _say(f"BASELINE {line}")
        if not baseline.watched:
            _say(f"{root} is not watched yet: plur-desk changes --start --reviewer NAME starts watching it")
        else:
            _say(f"watching since {baseline.started} (started by {baseline.started_by}): {len(changes)} agent changes")
        for change in changes:
            _say("\n".join(_text(change)))
    return 1 if changes or read.problems else 0
