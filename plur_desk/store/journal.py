"""The write-ahead journal in `<store>/.plur-desk/journal/`: one record per review action, written (fsynced) before
the first store file is replaced and removed after the last history event is appended.

A record lists the action's steps in order. Each step names one file (`engrams` or `tensions`), the entries it
changes as top-level field patches (before -> after), the file's SHA-256 before and after, the exact history events
to append and the size of each month file at pre-flight (our events come after it). A step written from the
reviewer's snapshot before its file was locked is `planned`; it is made exact just before its file is replaced.
Any plur_desk that opens the store for review can finish the work (store/recovery.py). The folder is inside the
store, so engram text is never kept anywhere less private than the store; PLUR reads only its own files and
`plur sync` stages only its own paths, so neither reads nor commits it.

Any agent can write that folder, so a record is signed as a whole by the reviewer who started the action: the
payload carries `actor` (the reviewer, as events do) and `timestamp`, and `signature`/`signer` are made over its
canonical bytes exactly as an event's are (store/keys/signatures.py), every save again. A record read back from disk is
`frozen`: recovery never saves (so never signs) it, it only finishes or removes it.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, cast

from plur_desk.domain.review import ABSENT, Patch
from plur_desk.infra import json_pieces
from plur_desk.infra.crash import crash_point
from plur_desk.infra.errors import Outcome, WriteFailed, refused_by_system
from plur_desk.store.atomic import atomic_write, fsync_dir
from plur_desk.store.safe_open import StoreFileRefused, inside, read_store_file

JOURNAL_DIR = Path(".plur-desk") / "journal"
DISCARDED_DIR = Path(".plur-desk") / "journal-discarded"
FORMAT = 1  # unchanged: signed records only add fields; an unsigned one reads as unverifiable
RECORD_LIMIT = 16 << 20  # bytes: a record holds only the fields an action changes
PENDING_LIMIT = 200  # records looked at per open: plur_desk leaves at most a few; more are someone else's doing
_counter = itertools.count(1)
Sign = Callable[[dict[str, object]], dict[str, object]]


@dataclass
class Step:
    file: Literal["engrams", "tensions"]
    changes: list[Patch]
    events: list[dict[str, object]]
    before_sha256: str | None = None
    after_sha256: str | None = None
    offsets: dict[str, int] = field(default_factory=dict)
    planned: bool = False

    def to_json(self) -> dict[str, object]:
        return {
            "file": self.file,
            "before_sha256": self.before_sha256,
            "after_sha256": self.after_sha256,
            "planned": self.planned,
            "changes": [
                {"key": p.key, "fields": [[k, _enc(old), _enc(new)] for k, old, new in p.changes]} for p in self.changes
            ],
            "events": self.events,
            "history_offsets": self.offsets,
        }

    @staticmethod
    def placeholder(file: Literal["engrams", "tensions"]) -> Step:
        """A step planned before its changes can be known (they are read inside its file's lock)."""
        return Step(file, [], [], planned=True)

    @staticmethod
    def from_json(data: dict[str, object]) -> Step:
        file = cast(Literal["engrams", "tensions"], data["file"])
        if file not in ("engrams", "tensions"):
            raise ValueError(f"unknown file {file!r}")
        changes = [
            Patch(file, str(c["key"]), tuple((str(k), _dec(old), _dec(new)) for k, old, new in c["fields"]))
            for c in cast(list[dict[str, list[list[object]]]], data["changes"])
        ]
        return Step(
            file,
            changes,
            cast(list[dict[str, object]], data["events"]),
            cast("str | None", data.get("before_sha256")),
            cast("str | None", data.get("after_sha256")),
            cast(dict[str, int], data.get("history_offsets") or {}),
            bool(data.get("planned")),
        )


def _enc(value: object) -> object:
    return {"$absent": True} if value is ABSENT else value


def _dec(value: object) -> object:
    return ABSENT if value == {"$absent": True} else value


class JournalRecord:
    def __init__(
        self, path: Path, action: str, label: str, created_at: str, host: str, pid: int, root: Path | None = None
    ) -> None:
        self.path = path
        self.root = root if root is not None else path.parent.parent.parent
        self.action = action
        self.label = label
        self.created_at = created_at
        self.host = host
        self.pid = pid
        self._steps: list[Step] = []
        self.saved = False
        self.sign: Sign | None = None  # the reviewer's signature over the whole record (set by the journal)
        self.actor: dict[str, object] | None = None
        self.payload: dict[str, object] = {}  # as read from disk: what its signature covers
        self.frozen = False  # read back from disk: never saved again (recovery signs nothing)

    # -- the steps: only `add`, `make_exact` and `drop_from` change them ----------------------------------------

    @property
    def steps(self) -> tuple[Step, ...]:
        return tuple(self._steps)

    def add(self, *steps: Step) -> int:
        """Steps to come after the present ones, planned (or, for a record made by hand, exact); nothing is saved
        until a step is made exact. Returns the index of the first."""
        first = len(self._steps)
        self._steps.extend(steps)
        return first

    def make_exact(self, index: int, step: Step) -> None:
        """Step `index` as it will be written (its plan replaced, or the next step), saved before its file is
        replaced. WriteFailed: nothing of this step was written."""
        if index > len(self._steps):
            raise ValueError(f"step {index} of a record with {len(self._steps)} steps")
        if index < len(self._steps):
            self._steps[index] = step
        else:
            self._steps.append(step)
        self.save()

    def drop_from(self, index: int, *, set_back_next: bool = False) -> None:
        """The one way a step is taken back: steps `index` and later will not happen (their file was not
        replaced). The record is saved without them, or removed when nothing is left of it. With `set_back_next`
        (a set-back's step comes next, through `make_exact`) the record on disk keeps them until that step
        replaces them: a crash in between leaves recovery the whole plan, never a half action it calls done."""
        if index >= len(self._steps):
            return
        del self._steps[index:]
        if set_back_next:
            return
        if not self._steps:
            self.finish()
        elif self.saved:
            self.save()

    def to_payload(self) -> dict[str, object]:
        payload: dict[str, object] = {
            "format": FORMAT,
            "action": self.action,
            "label": self.label,
            "created_at": self.created_at,
            "host": self.host,
            "pid": self.pid,
            "steps": [s.to_json() for s in self.steps],
        }
        if self.sign is not None and self.actor is not None:
            payload["actor"] = self.actor
            payload["timestamp"] = _iso_ms()
            # through JSON first, so the signed value is exactly what a reader parses back
            payload = self.sign(cast(dict[str, object], json_pieces.through_json(payload)))
        return payload

    def to_bytes(self) -> bytes:
        # one line, through the json module's C encoder (an indent sends it to the pure-Python one: ~80 ms of a
        # bulk approve of 500), a piece at a time (a bulk's record in one call held the interpreter lock ~10 ms)
        return (json_pieces.dumps(self.to_payload()) + "\n").encode("utf-8")

    @staticmethod
    def read(path: Path, root: Path | None = None) -> JournalRecord:
        store = root if root is not None else path.parent.parent.parent
        data = read_store_file(path, store, RECORD_LIMIT)
        try:
            payload = json.loads(data)
        except RecursionError:
            raise ValueError("nested too deeply to be a journal record") from None
        except UnicodeDecodeError as exc:
            raise ValueError(f"not UTF-8 (byte {exc.start})") from None
        if not isinstance(payload, dict) or payload.get("format") != FORMAT:
            raise ValueError("not a plur_desk journal record of a known format")
        record = JournalRecord(
            path,
            str(payload["action"]),
            str(payload.get("label", "")),
            str(payload.get("created_at", "")),
            str(payload.get("host", "")),
            int(payload.get("pid", 0)),
            store,
        )
        record._steps = [Step.from_json(s) for s in payload["steps"]]
        record.saved = True
        record.frozen = True
        record.payload = payload
        return record

    @property
    def signer(self) -> str | None:
        signer = self.payload.get("signer")
        return signer if isinstance(signer, str) else None

    def save(self) -> None:
        """Durably replace the record (temp file, fsync, rename, directory fsync). WriteFailed says nothing of the
        store was written by this step. A record read back from disk is never rewritten: its signature stays the
        one its reviewer made."""
        if self.frozen:
            return
        try:
            _make_private_dir(self.root, self.path.parent)
            atomic_write(self.path, self.to_bytes(), default_mode=0o600)
        except StoreFileRefused as exc:
            raise WriteFailed(f"cannot write the write-ahead journal: {exc}", outcome=Outcome.NOTHING_WRITTEN) from exc
        except OSError as exc:
            raise refused_by_system(f"cannot write the write-ahead journal in {self.path.parent}", exc) from exc
        self.saved = True
        crash_point("journal-saved")

    def finish(self) -> None:
        """The last event is appended: the record is done, and its removal durable (the folder fsynced: without
        it a power loss could bring back a finished record, and recovery would report a done action again, or call
        it stuck once an agent had edited the same fields since)."""
        if self.saved:
            crash_point("journal-removing")
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            fsync_dir(self.path.parent)
            self.saved = False

    def describe(self) -> str:
        return self.label or self.action


def _iso_ms() -> str:
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"


def _make_private_dir(root: Path, directory: Path) -> None:
    for folder in (directory.parent, directory):
        if not inside(root, folder):
            raise StoreFileRefused(
                f"{folder.relative_to(root)} is a link out of the store (to {os.path.realpath(folder)}); plur_desk "
                "never writes through it"
            )
        if not folder.is_dir():
            folder.mkdir(mode=0o700, exist_ok=True)


class Journal:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.dir = root / JOURNAL_DIR
        self.sign: Sign | None = None  # set by the app: a record leaves it signed by the reviewer
        self.actor: dict[str, object] | None = None

    def begin(self, action: str, label: str) -> JournalRecord:
        """A new record (nothing is written until its first step is saved)."""
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        name = f"{stamp}-{os.getpid()}-{next(_counter)}.json"
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        record = JournalRecord(self.dir / name, action, label, now, socket.gethostname(), os.getpid(), self.root)
        record.sign, record.actor = self.sign, self.actor
        return record

    def folder_problem(self) -> str | None:
        """Why the journal folder cannot be used: a link (or a link's target) leaving the store, not a folder."""
        for folder in (self.dir.parent, self.dir):
            if not os.path.lexists(folder):
                return None
            name = folder.relative_to(self.root)
            if os.path.islink(folder) and not inside(self.root, folder):
                return f"{name} is a link out of the store (to {os.path.realpath(folder)}); it is never followed"
            if not folder.is_dir():
                return f"{name} is not a folder"
        return None

    def pending(self) -> tuple[list[JournalRecord], list[str]]:
        """Records left by actions that did not finish, oldest first, and the records that cannot be read (each
        `name: why`)."""
        problem = self.folder_problem()
        if problem:
            return [], [f"{JOURNAL_DIR}: {problem}"]
        if not self.dir.is_dir():
            return [], []
        records, unreadable = [], []
        paths = sorted(self.dir.glob("*.json"))
        if len(paths) > PENDING_LIMIT:
            unreadable.append(
                f"{JOURNAL_DIR}: {len(paths)} records, more than plur_desk ever leaves; only the oldest "
                f"{PENDING_LIMIT} were looked at"
            )
        for path in paths[:PENDING_LIMIT]:
            try:
                records.append(JournalRecord.read(path, self.root))
            except (OSError, ValueError, KeyError, TypeError, OverflowError, StoreFileRefused) as exc:
                # OverflowError: a number JSON reads as infinity where an integer (the pid) belongs
                unreadable.append(f"{JOURNAL_DIR / path.name}: {exc}")
        return records, unreadable

    def discard(self, name: str) -> Path:
        """Move a record the reviewer chose not to apply out of the journal (kept, never deleted); its new path."""
        source = self.dir / Path(name).name
        if os.path.islink(source) or not source.is_file() or self.folder_problem():
            raise StoreFileRefused(f"{JOURNAL_DIR / Path(name).name} is not a journal record")
        target_dir = self.root / DISCARDED_DIR
        _make_private_dir(self.root, target_dir)
        target, n = target_dir / source.name, 1
        while os.path.lexists(target):  # an earlier record of that name stays too
            target, n = target_dir / f"{source.stem}.{n}{source.suffix}", n + 1
        os.replace(source, target)
        fsync_dir(self.dir)
        fsync_dir(target_dir)
        return target
