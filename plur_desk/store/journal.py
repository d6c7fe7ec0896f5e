"""The write-ahead journal in `<store>/.plur-desk/journal/`: one record per review action, written (fsynced) before
the first store file is replaced and removed after the last history event is appended.

A record lists the action's steps in order. Each step names one file (`engrams` or `tensions`), the entries it
changes as top-level field patches (before -> after), the file's SHA-256 before and after, the exact history events
to append and the size of each month file at pre-flight (our events come after it). A step written from the
reviewer's snapshot before its file was locked is `planned`; it is made exact just before its file is replaced.
Any plur_desk that opens the store for review can finish the work (store/recovery.py). The folder is inside the
store, so engram text is never kept anywhere less private than the store; PLUR reads only its own files and
`plur sync` stages only its own paths, so neither reads nor commits it.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, cast

from plur_desk.domain.review import ABSENT, Patch
from plur_desk.infra.crash import crash_point
from plur_desk.infra.errors import WriteFailed
from plur_desk.store.atomic import atomic_write, fsync_dir
from plur_desk.store.safe_open import read_regular

JOURNAL_DIR = Path(".plur-desk") / "journal"
FORMAT = 1
_counter = itertools.count(1)


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
    def __init__(self, path: Path, action: str, label: str, created_at: str, host: str, pid: int) -> None:
        self.path = path
        self.action = action
        self.label = label
        self.created_at = created_at
        self.host = host
        self.pid = pid
        self.steps: list[Step] = []
        self.saved = False

    def to_bytes(self) -> bytes:
        payload = {
            "format": FORMAT,
            "action": self.action,
            "label": self.label,
            "created_at": self.created_at,
            "host": self.host,
            "pid": self.pid,
            "steps": [s.to_json() for s in self.steps],
        }
        return (json.dumps(payload, ensure_ascii=False, indent=1) + "\n").encode("utf-8")

    @staticmethod
    def read(path: Path) -> JournalRecord:
        data, _ = read_regular(path)
        payload = json.loads(data)
        if not isinstance(payload, dict) or payload.get("format") != FORMAT:
            raise ValueError("not a plur_desk journal record of a known format")
        record = JournalRecord(
            path,
            str(payload["action"]),
            str(payload.get("label", "")),
            str(payload.get("created_at", "")),
            str(payload.get("host", "")),
            int(payload.get("pid", 0)),
        )
        record.steps = [Step.from_json(s) for s in payload["steps"]]
        record.saved = True
        return record

    def save(self) -> None:
        """Durably replace the record (temp file, fsync, rename, directory fsync). WriteFailed says nothing of the
        store was written by this step."""
        try:
            _make_private_dir(self.path.parent)
            atomic_write(self.path, self.to_bytes(), default_mode=0o600)
        except OSError as exc:
            raise WriteFailed(
                f"cannot write the write-ahead journal in {self.path.parent}: {exc.strerror}. Nothing was written."
            ) from exc
        self.saved = True
        crash_point("journal-saved")

    def finish(self) -> None:
        """The last event is appended: the record is done."""
        if self.saved:
            crash_point("journal-removing")
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            fsync_dir(self.path.parent)
            self.saved = False

    def describe(self) -> str:
        return self.label or self.action


def _make_private_dir(directory: Path) -> None:
    for folder in (directory.parent, directory):
        if not folder.is_dir():
            folder.mkdir(mode=0o700, exist_ok=True)


class Journal:
    def __init__(self, root: Path) -> None:
        self.dir = root / JOURNAL_DIR

    def begin(self, action: str, label: str) -> JournalRecord:
        """A new record (nothing is written until its first step is saved)."""
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        name = f"{stamp}-{os.getpid()}-{next(_counter)}.json"
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        return JournalRecord(self.dir / name, action, label, now, socket.gethostname(), os.getpid())

    def pending(self) -> tuple[list[JournalRecord], list[str]]:
        """Records left by actions that did not finish, oldest first, and the records that cannot be read."""
        if not self.dir.is_dir():
            return [], []
        records, unreadable = [], []
        for path in sorted(self.dir.glob("*.json")):
            try:
                records.append(JournalRecord.read(path))
            except (OSError, ValueError, KeyError, TypeError) as exc:
                unreadable.append(f"{JOURNAL_DIR / path.name}: {exc}")
        return records, unreadable
