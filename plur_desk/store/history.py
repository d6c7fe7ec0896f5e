"""PLUR's history log, `history/YYYY-MM.jsonl`: reading every month, appending events safely.

Append: one complete JSON line per `os.write` on an O_APPEND descriptor, then fsync (PLUR 0.20's shape:
event, engram_id, timestamp, data, actor). On a hash-chained store the append happens under
`history/chain.lock` with `prev` and `hash`, so `plur verify` stays green; on a 0.20 store no chain is started.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from plur_desk.infra.errors import LockTimeout, WriteFailed
from plur_desk.store.chain import (
    ChainMode,
    HashScan,
    detect_mode,
    event_hash,
    hash_of_line,
    js_stringify,
    predecessor_line,
)
from plur_desk.store.lock import CHAIN_POLICY, locked


@dataclass
class MalformedLine:
    file: str
    line: int
    reason: str


@dataclass
class HistoryRead:
    events: list[dict[str, object]] = field(default_factory=list)
    malformed: list[MalformedLine] = field(default_factory=list)


@dataclass
class AppendResult:
    mode: ChainMode
    warnings: list[str] = field(default_factory=list)


def read_file(path: Path, result: HistoryRead) -> None:
    month = path.stem
    with open(path, "rb") as handle:
        data = handle.read()
    lines = data.split(b"\n")
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            event = json.loads(raw)
        except ValueError as exc:
            cut = " (cut off: the last line has no end)" if number == len(lines) else ""
            what = getattr(exc, "msg", None) or ("invalid UTF-8" if isinstance(exc, UnicodeDecodeError) else str(exc))
            result.malformed.append(MalformedLine(path.name, number, f"not valid JSON: {what}{cut}"))
            continue
        if not isinstance(event, dict):
            result.malformed.append(MalformedLine(path.name, number, "not a JSON object"))
            continue
        event["_month"] = month
        event["_line"] = number
        result.events.append(event)


def _ends_mid_line(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            if handle.tell() == 0:
                return False
            handle.seek(-1, os.SEEK_END)
            return handle.read(1) != b"\n"
    except FileNotFoundError:
        return False


class HistoryLog:
    def __init__(self, root: Path) -> None:
        self.dir = root / "history"
        self._hash_scan = HashScan()
        # Re-signs an already signed event over its final bytes (on a chained store `prev` is only known under the
        # chain lock, and the signature covers it); set by the app.
        self.resign: Callable[[dict[str, object]], dict[str, object]] | None = None

    def month_files(self) -> list[Path]:
        if not self.dir.is_dir():
            return []
        return sorted(p for p in self.dir.glob("*.jsonl") if p.is_file())

    def read_all(self) -> HistoryRead:
        result = HistoryRead()
        for path in self.month_files():
            read_file(path, result)
        return result

    def mode(self, month: str) -> ChainMode:
        if not self.dir.is_dir():
            return ChainMode.LEGACY
        return detect_mode(self.dir, self.dir / f"{month}.jsonl", self._hash_scan)

    def append(self, events: list[dict[str, object]]) -> AppendResult:
        """Append events (each with a `timestamp` in toISOString form). Raises WriteFailed on I/O errors."""
        if not events:
            return AppendResult(ChainMode.LEGACY)
        self.dir.mkdir(parents=True, exist_ok=True)
        by_month: dict[str, list[dict[str, object]]] = {}
        for event in events:
            by_month.setdefault(str(event["timestamp"])[:7], []).append(event)
        result = AppendResult(ChainMode.LEGACY)
        for month, month_events in by_month.items():
            mode = self.mode(month)
            result.mode = mode
            if mode is ChainMode.LEGACY:
                path = self.dir / f"{month}.jsonl"
                for event in month_events:
                    self._resign(event)
                lines = [js_stringify(e) for e in month_events]
                if _ends_mid_line(path):
                    # Seal the cut-off line on its own line (it stays a skipped, malformed line) so it cannot
                    # swallow the start of ours.
                    lines[0] = "\n" + lines[0]
                    result.warnings.append(
                        f"{path.name} ended in a cut-off line; it was left as it is, and the "
                        "review events start on a new line"
                    )
                self._write(path, lines)
            else:
                self._append_chained(month, month_events, mode, result)
        return result

    def _append_chained(
        self, month: str, events: list[dict[str, object]], mode: ChainMode, result: AppendResult
    ) -> None:
        month_file = self.dir / f"{month}.jsonl"
        try:
            with locked(self.dir / "chain", CHAIN_POLICY):
                self._chain_and_write(month_file, events, gap=False)
        except LockTimeout:
            result.warnings.append(
                "history/chain.lock stayed busy; the review events were appended without a link (a declared gap "
                "in `plur verify`, not tampering)"
            )
            self._chain_and_write(month_file, events, gap=True)
        if mode is ChainMode.MIXED:
            result.warnings.append(
                "a writer that does not chain history (an older PLUR process) wrote last; `plur verify` will show a "
                "declared gap there"
            )

    def _chain_and_write(self, month_file: Path, events: list[dict[str, object]], *, gap: bool) -> None:
        if month_file.exists() and month_file.stat().st_size:
            with open(month_file, "rb") as handle:
                handle.seek(-1, os.SEEK_END)
                if handle.read(1) != b"\n":
                    raise WriteFailed(
                        f"{month_file} ends in a cut-off line (a writer crashed mid-line); appending would bury it "
                        "inside the chain. Nothing was written; let PLUR repair it or remove the partial line."
                    )
        prev = None if gap else hash_of_line(predecessor_line(self.dir, month_file))
        lines = []
        for event in events:
            event["prev"] = prev
            self._resign(event)
            event["hash"] = event_hash(event)
            prev = event["hash"]  # type: ignore[assignment]
            lines.append(js_stringify(event))
        self._write(month_file, lines)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.dir / ".chain-head")

    def _resign(self, event: dict[str, object]) -> None:
        """A signed event is signed again over its final bytes (Ed25519 is deterministic: unchanged bytes give the
        same signature); an unsigned one is left alone."""
        if self.resign is not None and "signature" in event:
            signed = self.resign(event)
            event.clear()
            event.update(signed)

    def write_lines(self, path: Path, lines: list[str]) -> None:
        """Append complete lines (the caller holds whatever lock the mode needs)."""
        self._write(path, lines)

    @staticmethod
    def _write(path: Path, lines: list[str]) -> None:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise WriteFailed(f"cannot open {path} to append history: {exc.strerror}") from exc
        try:
            for line in lines:
                payload = (line + "\n").encode("utf-8")
                written = os.write(fd, payload)
                if written != len(payload):
                    raise WriteFailed(f"short write to {path} ({written} of {len(payload)} bytes)")
            os.fsync(fd)
        except OSError as exc:
            raise WriteFailed(f"cannot append history to {path}: {exc.strerror}") from exc
        finally:
            os.close(fd)
