"""Finishing what a killed plur_desk left in the write-ahead journal, when a store is opened for review.

The journal is in the store folder, which any agent can write, so a record counts only when its signature (made
over the whole record by the reviewer who started the action) and each of its events verify against a trusted key
(`proven`, given by the app). An unverifiable record is never touched: it is reported and stays until the reviewer
discards it. For a verified record (oldest first): if its first step's file never changed, the action never happened
and the record is dropped (rolled back). Otherwise every step is completed in order: a step whose file is not
changed yet is applied now (its patches, under the file's lock, through the normal write path), and its events
missing from history are appended exactly as they were signed when the action was journaled, never one whose
signature history already holds. Recovery signs nothing; a reviewer completing another reviewer's action adds one
line of their own saying so (`completion`, signed by the app). Then the record is removed. A step that can be
neither confirmed nor applied (someone changed the same fields since) is left pending and reported. `inspect` does
the same examination without writing anything (for `plur-desk check`).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

from plur_desk.domain.plur_rules.engram_rules import engram_problems, tension_problems
from plur_desk.domain.plur_rules.rekey import Renames
from plur_desk.domain.review import ABSENT, Patch, engram_fingerprint, tension_fingerprint
from plur_desk.infra.errors import PlurDeskError
from plur_desk.store.history.chain import js_stringify
from plur_desk.store.journal import JOURNAL_DIR, JournalRecord, Step
from plur_desk.store.keys.signatures import claimed_human
from plur_desk.store.lists.list_file import ENGRAMS, TENSIONS, ListFile
from plur_desk.store.locking.lock import LockPolicy, holder_alive, locked
from plur_desk.store.safe_open import read_regular

if TYPE_CHECKING:
    from plur_desk.store.plur_store import PlurStore

OTHER_HOST_GRACE_SECONDS = 600.0  # a record from another computer may belong to an action still running there


class StepState(Enum):
    APPLIED = "applied"
    NOT_APPLIED = "not applied"
    CONFLICT = "changed since"


@dataclass
class RecoveryReport:
    """What recovery on open did with the journal's records: completed, rolled back, stuck."""

    completed: list[str] = field(default_factory=list)
    rolled_back: list[str] = field(default_factory=list)
    stuck: list[str] = field(default_factory=list)
    unverifiable: list[str] = field(default_factory=list)  # `.plur-desk/journal/<name>: why`, never applied
    events_appended: int = 0

    @property
    def anything(self) -> bool:
        return bool(self.completed or self.rolled_back or self.stuck or self.unverifiable)

    def line(self) -> str:
        """One line for the reviewer."""
        parts = []
        if self.completed:
            parts.append(
                f"completed {len(self.completed)} interrupted action(s) ({'; '.join(self.completed[:3])}"
                f"{' …' if len(self.completed) > 3 else ''}), {self.events_appended} history event(s) appended "
                "as their reviewer signed them"
            )
        if self.rolled_back:
            parts.append(
                f"rolled back {len(self.rolled_back)} interrupted action(s) that had not changed any file "
                f"({'; '.join(self.rolled_back[:3])})"
            )
        if self.stuck:
            parts.append(f"could not finish {len(self.stuck)}: {'; '.join(self.stuck[:2])}")
        if self.unverifiable:
            parts.append(
                f"{len(self.unverifiable)} journal record(s) not applied because no trusted key verifies them "
                f"({'; '.join(self.unverifiable[:2])}{' …' if len(self.unverifiable) > 2 else ''}); nothing of them "
                "was written, and each can be discarded (moved to .plur-desk/journal-discarded/)"
            )
        return "Recovery: " + "; ".join(parts) if parts else ""


def _live_elsewhere(record: JournalRecord) -> bool:
    """True when the record may belong to an action still running (a live process here, or another host's)."""
    if record.host == socket.gethostname():
        if record.pid == os.getpid():
            return False
        return holder_alive(f"{record.host}:{record.pid}") is True
    try:
        age = time.time() - record.path.stat().st_mtime
    except FileNotFoundError:
        return True
    return age < OTHER_HOST_GRACE_SECONDS


Proven = Callable[[dict[str, object]], bool]
Completion = Callable[[JournalRecord, int], "dict[str, object] | None"]


def recover(store: PlurStore, proven: Proven | None = None, completion: Completion | None = None) -> RecoveryReport:
    """Finish or roll back what killed writers left. `proven(claim)` says whether a signed human claim (a journal
    record as a whole, or one of its events) verifies against a key the reviewer trusts; without it nothing is
    verified, so nothing is applied. `completion(record, events appended)` gives the reopening reviewer's own
    signed line saying they completed another reviewer's action (None: nothing to add)."""
    report = RecoveryReport()
    records, unreadable = store.journal.pending()
    report.unverifiable += unreadable
    if not records:
        return report
    resign, store.history.resign = store.history.resign, None  # events go to history as they were signed
    try:
        with locked(store.journal.dir.parent / "recovery", LockPolicy(max_wait=10.0, name_holder_after=None)):
            records, _ = store.journal.pending()  # re-read: another plur_desk may have finished them meanwhile
            present = _Signatures(store)
            for record in records:
                if _live_elsewhere(record):
                    continue
                why = unverified(record, proven)
                if why:
                    report.unverifiable.append(f"{JOURNAL_DIR / record.path.name}: {why}")
                    continue
                try:
                    _recover_one(store, record, report, present, completion)
                except PlurDeskError as exc:
                    report.stuck.append(f"{record.describe()}: {exc}")
    finally:
        store.history.resign = resign
    return report


def unverified(record: JournalRecord, proven: Proven | None) -> str | None:
    """Why a record may not be acted on (None when it and every event in it verify against a trusted key)."""
    signer = record.signer
    name = claimed_human(record.payload)
    if signer is None or not isinstance(record.payload.get("signature"), str) or name is None:
        return "it is not signed (an older plur_desk's record, or not written by plur_desk at all)"
    if proven is None or not proven(record.payload):
        return f"its signature, claimed by {signer}, does not verify with a key you trust"
    for step in record.steps:
        for event in step.events:
            if claimed_human(event) != name:
                return f"it carries an event that is not {name}'s own decision"
            if not proven(event):
                return f"it carries an event of {name}'s whose signature does not verify"
    return None


class _Signatures:
    """The signatures history holds now (read once, on the first question; recovery is rare)."""

    _FOUND = re.compile(rb'"signature":"([A-Za-z0-9+/=]+)"')

    def __init__(self, store: PlurStore) -> None:
        self.store = store
        self._known: set[str] | None = None

    def known(self) -> set[str]:
        if self._known is None:
            self._known = set()
            for path in self.store.history.month_files():
                try:
                    data, _ = read_regular(path)
                except OSError:
                    continue
                self._known.update(m.decode("ascii") for m in self._FOUND.findall(data))
        return self._known

    def fresh(self, events: list[dict[str, object]]) -> list[dict[str, object]]:
        """The events whose signature is not in history yet (an event is never appended twice)."""
        known = self.known()
        out = []
        for event in events:
            signature = event.get("signature")
            if isinstance(signature, str) and signature in known:
                continue
            if isinstance(signature, str):
                known.add(signature)
            out.append(event)
        return out


def _recover_one(
    store: PlurStore,
    record: JournalRecord,
    report: RecoveryReport,
    present: _Signatures,
    completion: Completion | None,
) -> None:
    if not record.steps or step_state(store, record.steps[0]) is StepState.NOT_APPLIED:
        record.finish()
        report.rolled_back.append(record.describe())
        return
    appended = 0
    for index in range(len(record.steps)):
        step = record.steps[index]
        state = step_state(store, step)
        if state is StepState.CONFLICT:
            keys = ", ".join(p.key for p in step.changes) or "(no change recorded)"
            report.stuck.append(
                f"{record.describe()}: {keys} in {step.file}.yaml changed since; journal record "
                f"{record.path.name} was kept"
            )
            return
        if state is StepState.NOT_APPLIED:
            events = present.fresh([copy.deepcopy(e) for e in step.events])
            if len(events) != len(step.events):  # its decision is in history already: this is a replay
                report.stuck.append(
                    f"{record.describe()}: {step.file}.yaml does not show this step, but history already holds its "
                    f"event(s); it was not applied again and journal record {record.path.name} was kept"
                )
                return
            _apply_step(store, record, index, events)
            appended += len(events)
        else:
            missing = present.fresh(missing_events(store, step))
            if missing:
                store.history.append(copy.deepcopy(missing))
                appended += len(missing)
    if completion is not None and appended:
        line = completion(record, appended)
        if line is not None:
            store.history.append([line])
    report.events_appended += appended
    record.finish()
    report.completed.append(record.describe())


def as_signed(event: dict[str, object]) -> dict[str, object]:
    """A journaled or recovered event as its writer signed it: without the chain's `prev`/`hash` and the
    `data.recovered` mark older versions added."""
    plain = {k: v for k, v in event.items() if k not in ("prev", "hash")}
    data = plain.get("data")
    if isinstance(data, dict) and data.get("recovered") is True:
        plain["data"] = {k: v for k, v in data.items() if k != "recovered"}
    return plain


def _apply_step(store: PlurStore, record: JournalRecord, index: int, events: list[dict[str, object]]) -> None:
    """Write a step whose file never changed: its patches and `events` (as signed), through the normal write path
    (the record, read from disk, is not saved again)."""
    from plur_desk.store.plur_store import Edit

    step = record.steps[index]
    edits = []
    for n, patch in enumerate(step.changes):

        def apply(
            value: dict[str, object], patch: Patch = patch, first: bool = n == 0
        ) -> tuple[dict[str, object], list[dict[str, object]]]:
            # `updated_at` may have been moved by PLUR meanwhile: it is set, not checked
            loose = Patch(
                patch.file,
                patch.key,
                tuple((k, value.get(k, ABSENT) if k == "updated_at" else old, new) for k, old, new in patch.changes),
            )
            return loose.apply(value), (events if first else [])

        edits.append(Edit(patch.key, apply))
    if step.file == "engrams":
        store.write_engrams(edits, engram_fingerprint, record, index)
    else:
        store.write_tensions(edits, tension_fingerprint, record, index)


def step_state(store: PlurStore, step: Step) -> StepState:
    path = store.engrams_path if step.file == "engrams" else store.tensions_path
    try:
        data, _ = read_regular(path)
    except OSError:
        return StepState.CONFLICT
    if not any(_changes_something(p) for p in step.changes):
        return StepState.CONFLICT  # a step that changes nothing proves nothing: never "applied"
    digest = hashlib.sha256(data).hexdigest()
    if step.after_sha256 and digest == step.after_sha256:
        return StepState.APPLIED
    if step.before_sha256 and digest == step.before_sha256:
        return StepState.NOT_APPLIED
    layout, validate = (ENGRAMS, engram_problems) if step.file == "engrams" else (TENSIONS, tension_problems)
    snapshot = ListFile.read(path, layout, validate)
    by_key = snapshot.by_key()
    renames = rename_trail(store.root) if step.file == "engrams" else Renames()
    states = set()
    for patch in step.changes:
        # PLUR 0.21 may have renamed the engram since (`engram_rekeyed`, a duplicate id): the write landed if it is
        # on the engram under its new id; judging only the old id would weigh another engram that now has it
        later = renames.later(patch.key, by_key)
        moved = by_key.get(later, []) if later is not None else []
        if (
            len(moved) == 1
            and isinstance(moved[0].value, dict)
            and _patch_state(patch, moved[0].value) is StepState.APPLIED
        ):
            states.add(StepState.APPLIED)
            continue
        found = by_key.get(patch.key, [])
        if len(found) != 1 or not isinstance(found[0].value, dict):
            return StepState.CONFLICT
        state = _patch_state(patch, found[0].value)
        states.add(StepState.CONFLICT if later is not None and state is StepState.NOT_APPLIED else state)
    if states == {StepState.APPLIED}:
        return StepState.APPLIED
    if states == {StepState.NOT_APPLIED}:
        return StepState.NOT_APPLIED
    return StepState.CONFLICT


def rename_trail(root: Path) -> Renames:
    """PLUR 0.21's `engram_rekeyed` trail in the history of the store at `root` (read only when needed: a journal
    step not settled by hashes, a watched engram missing under a renamed id)."""
    from plur_desk.store.history.log import HistoryLog, summarize_history

    return Renames(pair for _name, month in summarize_history(HistoryLog(root), None) for pair in month.rekeyed)


def _changes_something(patch: Patch) -> bool:
    return any(old != new for name, old, new in patch.changes if name != "updated_at")


def _patch_state(patch: Patch, value: dict[str, object]) -> StepState:
    """`updated_at` does not count: PLUR's own writes move it on entries it touches. A patch that changes nothing
    else is never applied (it would say so of any file)."""
    if not _changes_something(patch):
        return StepState.CONFLICT
    at_after = at_before = 0
    changes = [c for c in patch.changes if c[0] != "updated_at"] or list(patch.changes)
    for name, old, new in changes:
        now = value.get(name, ABSENT)
        if now == new:
            at_after += 1
        elif now == old:
            at_before += 1
    if at_before == len(changes):
        return StepState.NOT_APPLIED
    if at_after and not at_before:
        return StepState.APPLIED  # a later writer may have moved an unrelated field (PLUR's updated_at)
    return StepState.CONFLICT


def _norm(event: dict[str, object]) -> str:
    # a chained append re-signs over `prev`; older recoveries marked `data.recovered`: not part of the identity
    plain = {k: v for k, v in as_signed(event).items() if k not in ("signature", "signer", "_month", "_line")}
    return js_stringify(plain, sort=True)


def missing_events(store: PlurStore, step: Step) -> list[dict[str, object]]:
    """The step's events not found in history after the month file's pre-flight size."""
    wanted: dict[str, list[dict[str, object]]] = {}
    for event in step.events:
        wanted.setdefault(str(event["timestamp"])[:7] + ".jsonl", []).append(event)
    missing = []
    for name, events in wanted.items():
        present = _lines_after(store.history.dir / name, step.offsets.get(name, 0))
        for event in events:
            key = _norm(event)
            if key in present:
                present.remove(key)
            else:
                missing.append(event)
    return missing


def _lines_after(path: os.PathLike[str], offset: int) -> list[str]:
    try:
        data, st = read_regular(path)  # type: ignore[arg-type]
    except OSError:
        return []
    if offset > st.st_size:
        offset = 0
    out = []
    for raw in data[offset:].split(b"\n"):
        try:
            event = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if isinstance(event, dict):
            out.append(_norm(event))
    return out


def inspect(store: PlurStore, proven: Proven | None = None) -> list[str]:
    """What pending records would do, without writing anything (for `plur-desk check`). A record no trusted key
    verifies is `unverifiable_journal_record`: it would never be applied."""
    records, unreadable = store.journal.pending()
    lines = [f"unverifiable_journal_record {u}" for u in unreadable]
    for record in records:
        why = unverified(record, proven)
        if why:
            lines.append(
                f"unverifiable_journal_record {JOURNAL_DIR / record.path.name} ({record.describe()}): {why}; it is "
                "never applied (discard it from the window, or move it out of the journal)"
            )
            continue
        states = [step_state(store, s) for s in record.steps]
        missing = sum(
            len(missing_events(store, s)) for s, st in zip(record.steps, states, strict=True) if st is StepState.APPLIED
        )
        summary = ", ".join(f"{s.file}.yaml {st.value}" for s, st in zip(record.steps, states, strict=True))
        lines.append(
            f"pending journal record {record.path.name} ({record.describe()}, {record.created_at}): {summary}; "
            f"{missing} history event(s) missing; it is finished when the store is opened for review"
        )
    return lines
