"""Finishing what a killed plur_desk left in the write-ahead journal, when a store is opened for review.

For each record (oldest first): if its first step's file never changed, the action never happened and the record is
dropped (rolled back). Otherwise every step is completed in order: a step whose file is not changed yet is applied
now (its patches, under the file's lock, through the normal write path), and any of its events missing from history
are appended with `data.recovered: true` and their original timestamp and actor. Then the record is removed. A step
that can be neither confirmed nor applied (someone changed the same fields since) is left pending and reported.
`inspect` does the same examination without writing anything (for `plur-desk check`).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from plur_desk.domain.engram_rules import engram_problems, tension_problems
from plur_desk.domain.rekey import Renames
from plur_desk.domain.review import ABSENT, Patch, engram_fingerprint, tension_fingerprint
from plur_desk.infra.errors import PlurDeskError
from plur_desk.store.chain import js_stringify
from plur_desk.store.journal import JournalRecord, Step
from plur_desk.store.list_file import ENGRAMS, TENSIONS, ListFile
from plur_desk.store.lock import LockPolicy, holder_alive, locked
from plur_desk.store.safe_open import read_regular
from plur_desk.store.signatures import claimed_human

if TYPE_CHECKING:
    from plur_desk.store.plur_store import PlurStore

OTHER_HOST_GRACE_SECONDS = 600.0  # a record from another computer may belong to an action still running there


class StepState(Enum):
    APPLIED = "applied"
    NOT_APPLIED = "not applied"
    CONFLICT = "changed since"


@dataclass
class RecoveryReport:
    completed: list[str] = field(default_factory=list)
    rolled_back: list[str] = field(default_factory=list)
    stuck: list[str] = field(default_factory=list)
    events_appended: int = 0

    @property
    def anything(self) -> bool:
        return bool(self.completed or self.rolled_back or self.stuck)

    def line(self) -> str:
        """One line for the reviewer."""
        parts = []
        if self.completed:
            parts.append(
                f"completed {len(self.completed)} interrupted action(s) ({'; '.join(self.completed[:3])}"
                f"{' …' if len(self.completed) > 3 else ''}), {self.events_appended} history event(s) appended "
                "with data.recovered"
            )
        if self.rolled_back:
            parts.append(
                f"rolled back {len(self.rolled_back)} interrupted action(s) that had not changed any file "
                f"({'; '.join(self.rolled_back[:3])})"
            )
        if self.stuck:
            parts.append(f"could not finish {len(self.stuck)}: {'; '.join(self.stuck[:2])}")
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


def recover(store: PlurStore, proven: Proven | None = None) -> RecoveryReport:
    """Finish or roll back what killed writers left. `proven(event)` says whether a journaled human decision's
    signature verifies (the reopening reviewer's own key, or the named reviewer's key in keys.yaml): the journal
    lies in the store folder, which any agent can write, so a step not yet written whose human events are not
    proven is never carried out; the record stays in the journal, reported. Without `proven` no such step is."""
    report = RecoveryReport()
    records, unreadable = store.journal.pending()
    report.stuck += [f"unreadable journal record {u}" for u in unreadable]
    if not records:
        return report
    with locked(store.journal.dir.parent / "recovery", LockPolicy(max_wait=10.0)):
        records, _ = store.journal.pending()  # re-read: another plur_desk may have finished them meanwhile
        for record in records:
            if _live_elsewhere(record):
                continue
            try:
                _recover_one(store, record, report, proven)
            except PlurDeskError as exc:
                report.stuck.append(f"{record.describe()}: {exc}")
    return report


def _recover_one(store: PlurStore, record: JournalRecord, report: RecoveryReport, proven: Proven | None) -> None:
    if not record.steps or step_state(store, record.steps[0]) is StepState.NOT_APPLIED:
        record.finish()
        report.rolled_back.append(record.describe())
        return
    for index in range(len(record.steps)):
        step = record.steps[index]
        state = step_state(store, step)
        if state is StepState.CONFLICT:
            keys = ", ".join(p.key for p in step.changes)
            report.stuck.append(
                f"{record.describe()}: {keys} in {step.file}.yaml changed since; journal record "
                f"{record.path.name} was kept"
            )
            return
        if state is StepState.NOT_APPLIED:
            unproven = [e for e in step.events if claimed_human(e) is not None]
            if proven is not None:
                unproven = [e for e in unproven if not proven(as_signed(e))]
            if unproven:  # a human decision nobody can show was made is never carried out
                names = ", ".join(sorted({str(claimed_human(e)) for e in unproven}))
                report.stuck.append(
                    f"{record.describe()}: it records a decision by {names} whose signature does not verify with "
                    f"that reviewer's key; that step was not applied and journal record {record.path.name} was kept "
                    "(if nobody made that decision, delete the record)"
                )
                return
            _apply_step(store, record, index)
            report.events_appended += len(step.events)
        else:
            missing = missing_events(store, step)
            if missing:
                store.history.append([_recovered(e) for e in missing])
                report.events_appended += len(missing)
    record.finish()
    report.completed.append(record.describe())


def as_signed(event: dict[str, object]) -> dict[str, object]:
    """A journaled or recovered event as its writer signed it: without the chain's `prev`/`hash` and the
    `data.recovered` mark (a recovery killed midway journals it again marked recovered)."""
    plain = {k: v for k, v in event.items() if k not in ("prev", "hash")}
    data = plain.get("data")
    if isinstance(data, dict) and data.get("recovered") is True:
        plain["data"] = {k: v for k, v in data.items() if k != "recovered"}
    return plain


def _recovered(event: dict[str, object]) -> dict[str, object]:
    out = copy.deepcopy({k: v for k, v in event.items() if k not in ("prev", "hash")})
    data = out.get("data")
    out["data"] = {**(data if isinstance(data, dict) else {}), "recovered": True}
    return out


def _apply_step(store: PlurStore, record: JournalRecord, index: int) -> None:
    """Write a step whose file never changed: its patches, through the normal (journaled) write path."""
    from plur_desk.store.plur_store import Edit

    step = record.steps[index]
    events = [_recovered(e) for e in step.events]
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
    digest = hashlib.sha256(data).hexdigest()
    if step.after_sha256 and digest == step.after_sha256:
        return StepState.APPLIED
    if step.before_sha256 and digest == step.before_sha256:
        return StepState.NOT_APPLIED
    layout, validate = (ENGRAMS, engram_problems) if step.file == "engrams" else (TENSIONS, tension_problems)
    snapshot = ListFile.read(path, layout, validate)
    by_key = snapshot.by_key()
    renames = _renames(store) if step.file == "engrams" else Renames()
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


def _renames(store: PlurStore) -> Renames:
    """PLUR 0.21's `engram_rekeyed` trail in the store's history (read only when a step is not settled by hashes)."""
    from plur_desk.store.history import HistoryLog, summarize_history

    return Renames(pair for _name, month in summarize_history(HistoryLog(store.root), None) for pair in month.rekeyed)


def _patch_state(patch: Patch, value: dict[str, object]) -> StepState:
    """`updated_at` does not count: PLUR's own writes move it on entries it touches."""
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
    # signatures are made again over the final bytes (chained `prev`, `data.recovered`): not part of the identity
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
        except ValueError:
            continue
        if isinstance(event, dict):
            out.append(_norm(event))
    return out


def inspect(store: PlurStore) -> list[str]:
    """What pending records would do, without writing anything (for `plur-desk check`)."""
    records, unreadable = store.journal.pending()
    lines = [f"unreadable journal record {u}" for u in unreadable]
    for record in records:
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
