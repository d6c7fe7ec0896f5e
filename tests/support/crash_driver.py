"""Crash trials of the write path, run as a subprocess of the test: `python -m support.crash_driver BASE WORK`.

For every action kind it first counts how often each crash point is passed (a run without a crash), then, for
every point and every pass, forks a writer that is SIGKILLed there (PLUR_DESK_CRASH_AT), forks a reopen for review
that is itself killed inside its recovery for every other trial, and a last clean reopen. Each trial store must then
hold exactly the state before the action or exactly the state after it, with the action's events each exactly once
(compared with a run without a crash), no journal record left, an intact hash chain, and nothing `check` would
report (no unfinished write, every human claim validly signed: the same reviewer reopens, so her own key verifies
her journal record, the events it carries are appended exactly as she signed them, and her key registers itself).
Prints a JSON summary on stdout.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import shutil
import signal
import sys
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from plur_desk.app.check import run_check
from plur_desk.app.review.session import ReviewSession
from plur_desk.domain.commands import (
    ApproveDrafts,
    ConfirmTension,
    DismissTension,
    EditStatement,
    ExpireNow,
    RejectDrafts,
    ResolveTension,
    SetValidity,
    SplitInTime,
)
from plur_desk.domain.plur_rules.engram_rules import engram_problems, tension_problems
from plur_desk.domain.review import Reviewer
from plur_desk.infra import crash
from plur_desk.infra.clock import FixedClock
from plur_desk.store.history.chain import event_hash, js_stringify
from plur_desk.store.lists.list_file import ENGRAMS, TENSIONS, ListFile
from plur_desk.store.plur_store import PlurStore

from support.moments import NOW

POINTS = (
    "store-staged",
    "journal-saved",
    "store-temp-written",
    "store-renamed",
    "event-appended",
    "step-done",
    "journal-removing",
)
RECOVERY_POINTS = ("journal-saved", "store-renamed", "event-appended", "journal-removing")
Act = Callable[[ReviewSession], object]


def session_of(root: Path) -> ReviewSession:
    store = PlurStore(root)
    store.load()
    return ReviewSession(store, Reviewer("Crash Tester"), FixedClock(NOW))


def actions(root: Path) -> dict[str, tuple[Act | None, Act]]:
    s = session_of(root)
    drafts = [r.id for r in s.queue.rows()]
    pairs = [t for t in s.tensions() if s.engram(t.engram_a) and s.engram(t.engram_b)]
    t, a = pairs[0].id, pairs[0].engram_a
    d0, d3 = drafts[0], drafts[:3]
    return {
        "approve": (None, lambda s: s.execute(ApproveDrafts(tuple(s.writes.seen([d0]))))),
        "approve_bulk": (None, lambda s: s.execute(ApproveDrafts(tuple(s.writes.seen(d3)), note="bulk"))),
        "reject": (None, lambda s: s.execute(RejectDrafts(tuple(s.writes.seen([d0])), "crash trial"))),
        "reject_bulk": (None, lambda s: s.execute(RejectDrafts(tuple(s.writes.seen(d3)), "crash trial"))),
        "edit": (
            None,
            lambda s: s.execute(EditStatement(s.writes.seen([d0])[0], "A new statement written during a crash trial")),
        ),
        "validity_bulk": (
            None,
            lambda s: s.execute(SetValidity(tuple(s.writes.seen(d3[:2])), "2026-01-01", "2027-01-01")),
        ),
        "expire": (None, lambda s: s.execute(ExpireNow(tuple(s.writes.seen([d0]))))),
        "confirm": (None, lambda s: s.execute(ConfirmTension(s.writes.seen_tension(t)))),
        "dismiss": (None, lambda s: s.execute(DismissTension(s.writes.seen_tension(t), "not a real conflict"))),
        "resolve": (None, lambda s: s.execute(ResolveTension(s.writes.seen_tension(t), a))),
        "split": (None, lambda s: s.execute(SplitInTime(s.writes.seen_tension(t), "2026-06-01"))),
        "undo_resolve": (lambda s: s.execute(ResolveTension(s.writes.seen_tension(t), a)), lambda s: s.undo()),
        "undo_approve_bulk": (lambda s: s.execute(ApproveDrafts(tuple(s.writes.seen(d3)))), lambda s: s.undo()),
    }


def state(root: Path) -> dict[str, object]:
    engrams = ListFile.read(root / "engrams.yaml", ENGRAMS, engram_problems)
    tensions = ListFile.read(root / "tensions.yaml", TENSIONS, tension_problems)
    events = []
    for path in sorted((root / "history").glob("*.jsonl")):
        for line in path.read_bytes().splitlines():
            if not line.strip():
                continue
            event = json.loads(line)
            for key in ("prev", "hash", "signature", "signer"):  # re-made over the final bytes
                event.pop(key, None)
            if isinstance(event.get("data"), dict):
                event["data"].pop("recovered", None)
            events.append(js_stringify(event, sort=True))
    return {
        "engrams": {e.key: e.value for e in engrams.entries},
        "tensions": {e.key: e.value for e in tensions.entries},
        "events": sorted(events),
        "invalid": [f.line(e) for f in (engrams, tensions) for e in f.entries if not e.valid],
    }


def chain_breaks(root: Path) -> list[str]:
    """Lines whose `hash` is not their canonical hash, or whose `prev` is not the hash of the line before."""
    breaks, before = [], None
    for path in sorted((root / "history").glob("*.jsonl")):
        for number, line in enumerate(path.read_bytes().splitlines(), start=1):
            event = json.loads(line)
            if "hash" in event:
                if event_hash(event) != event["hash"]:
                    breaks.append(f"{path.name}:{number} hash")
                if event.get("prev") is not None and event["prev"] != before:
                    breaks.append(f"{path.name}:{number} prev")
            before = event.get("hash")
    return breaks


def fork(body: Callable[[], None]) -> int:
    """Run `body` in a child; its wait status. A child that finishes tells this process which modules it has
    imported, and this process imports those it lacks (`_import`): the write path, the key vault (keyring), signing
    and recovery import theirs on first use, and ~600 children each importing them again from the start was most of
    the trials' CPU. Nothing else passes back; each child still loads its store from disk itself."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        code = 0
        try:
            body()
        except BaseException as exc:
            print(f"child failed: {exc!r}", file=sys.stderr)
            code = 3
        with open(write, "w", encoding="utf-8") as names:
            names.write("\n".join(sys.modules))
        os._exit(code)
    os.close(write)
    with open(read, encoding="utf-8") as names:  # empty when the child was killed
        imported = names.read().split()
    status = os.waitpid(pid, 0)[1]
    _import(name for name in imported if name not in sys.modules)
    return status


def _import(names: Iterable[str]) -> None:
    for name in names:
        with contextlib.suppress(ImportError):  # an extension's inner module (`_openssl.lib`): its package made it
            importlib.import_module(name)


def run_action(root: Path, setup: Act | None, act: Act, crash_at: str | None, out: Path | None = None) -> int:
    def body() -> None:
        session = session_of(root)
        if setup is not None:
            setup(session)
        if out is not None:
            (out / "before.json").write_text(json.dumps(state(root)))
        crash.reset()
        if crash_at:
            os.environ[crash.ENV] = crash_at
        act(session)
        if out is not None:
            (out / "passes.json").write_text(json.dumps(crash.passes()))
            (out / "after.json").write_text(json.dumps(state(root)))

    return fork(body)


def reopen(root: Path, crash_at: str | None) -> int:
    def body() -> None:
        if crash_at:
            os.environ[crash.ENV] = crash_at
        note = session_of(root).recover_on_open()
        appended = re.search(r"(\d+) history event\(s\) appended", note)
        if appended:  # how many events this recovery appended (beside the store: never part of it)
            root.with_name(root.name + ".appended").write_text(appended.group(1))

    return fork(body)


def chained_copy(base: Path, dest: Path) -> None:
    """The same store with a hash-chained history tail (newer PLUR), so appends take the chained path."""
    shutil.copytree(base, dest)
    newest = sorted((dest / "history").glob("*.jsonl"))[-1]
    event: dict[str, object] = {
        "event": "engram_updated",
        "engram_id": "ENG-2026-01-01-001",
        "timestamp": "2026-11-30T00:00:00.000Z",
        "data": {"field": "x"},
        "prev": None,
    }
    event["hash"] = event_hash(event)
    with open(newest, "a", encoding="utf-8") as handle:
        handle.write(js_stringify(event) + "\n")


@dataclass
class Summary:
    trials: int = 0
    before: int = 0
    after: int = 0
    recovered_events: int = 0
    recovery_kills: int = 0  # reopens killed inside their own recovery (then reopened again)
    failures: list[str] = field(default_factory=list)
    stores: list[str] = field(default_factory=list)
    kinds: dict[str, int] = field(default_factory=dict)


def main(base: Path, work: Path) -> dict[str, object]:
    summary = Summary()
    chained = work / "base-chained"
    chained_copy(base, chained)
    for mode, mode_base in (("legacy", base), ("chained", chained)):
        for name, (setup, act) in actions(mode_base).items():
            ref = work / f"{mode}-{name}-ref"
            shutil.copytree(mode_base, ref)
            status = run_action(ref, setup, act, None, ref)
            if status != 0:
                summary.failures.append(f"{mode}/{name}: the run without a crash failed ({status})")
                continue
            before = json.loads((ref / "before.json").read_text())
            after = json.loads((ref / "after.json").read_text())
            passes = json.loads((ref / "passes.json").read_text())
            for point in POINTS:
                for n in range(1, passes.get(point, 0) + 1):
                    root = work / f"{mode}-{name}-{point}-{n}"
                    shutil.copytree(mode_base, root)
                    trial(summary, root, (setup, act), f"{point}:{n}", (before, after))
                    summary.kinds[name] = summary.kinds.get(name, 0) + 1
    return asdict(summary)


def trial(
    summary: Summary, root: Path, action: tuple[Act | None, Act], crash_at: str, states: tuple[object, object]
) -> None:
    """Kill the writer at `crash_at`; every other trial kill the first reopen inside its recovery too; reopen."""
    summary.trials += 1
    status = run_action(root, *action, crash_at)
    if not (os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL):
        summary.failures.append(f"{root.name}: the writer was not killed there ({status})")
        return
    if summary.trials % 2 == 0:
        killed = reopen(root, f"{RECOVERY_POINTS[summary.trials % len(RECOVERY_POINTS)]}:1")
        summary.recovery_kills += os.WIFSIGNALED(killed) and os.WTERMSIG(killed) == signal.SIGKILL
    if reopen(root, None) != 0:
        summary.failures.append(f"{root.name}: reopening for review failed")
        return
    got = json.loads(json.dumps(state(root)))
    left = [p.name for p in (root / ".plur-desk" / "journal").glob("*.json")]
    if left:
        summary.failures.append(f"{root.name}: journal records left: {left}")
    before, after = states
    if got == before:
        summary.before += 1
    elif got == after:
        summary.after += 1
    else:
        summary.failures.append(f"{root.name}: neither the state before nor after ({_diff(before, after, got)})")  # type: ignore[arg-type]
    # read-only: what a person checking the store would be told, every block read (a store is checked once: a parse
    # cache written for it would never be read)
    report = run_check(root, use_cache=False)
    if report.unfinished or report.untrusted:
        summary.failures.append(
            f"{root.name}: check still reports {report.unfinished[:1]} {[c['trust'] for c in report.untrusted][:3]}"
        )
    breaks = chain_breaks(root)
    if breaks:
        summary.failures.append(f"{root.name}: hash chain broken: {breaks[:2]}")
    summary.stores.append(str(root))
    appended = root.with_name(root.name + ".appended")
    summary.recovered_events += int(appended.read_text()) if appended.exists() else 0


def _diff(before: dict[str, object], after: dict[str, object], got: dict[str, object]) -> str:
    out = []
    for part in ("engrams", "tensions", "events", "invalid"):
        if got[part] != after[part]:
            if part == "events":
                extra = sorted(set(got[part]) - set(after[part]))  # type: ignore[arg-type]
                missing = sorted(set(after[part]) - set(got[part]))  # type: ignore[arg-type]
                out.append(f"events: {len(got[part])} vs {len(after[part])}, extra {extra[:2]}, missing {missing[:2]}")  # type: ignore[arg-type]
            else:
                keys = (
                    [k for k in set(got[part]) | set(after[part]) if got[part].get(k) != after[part].get(k)]
                    if isinstance(got[part], dict)
                    else got[part]
                )  # type: ignore[union-attr,attr-defined]
                out.append(f"{part} differ: {keys}")
    return "; ".join(out)


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]), Path(sys.argv[2]))))
