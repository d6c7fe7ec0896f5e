"""PLUR's history log, `history/YYYY-MM.jsonl`: reading every month, appending events safely.

Append: one complete JSON line per `os.write` on an O_APPEND descriptor, then fsync (PLUR 0.20's shape:
event, engram_id, timestamp, data, actor). On a hash-chained store the append happens under
`history/chain.lock` with `prev` and `hash`, so `plur verify` stays green; on a 0.20 store no chain is started.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from plur_desk.domain.plur_rules.rekey import rekeyed_pair
from plur_desk.infra.crash import crash_point
from plur_desk.infra.errors import LockTimeout, Outcome, WriteFailed
from plur_desk.store.history.chain import (
    ChainMode,
    HashScan,
    detect_mode,
    event_hash,
    hash_of_line,
    js_stringify,
    predecessor_line,
)
from plur_desk.store.locking.lock import CHAIN_POLICY, locked
from plur_desk.store.safe_open import NotRegularFile, open_for_append, read_regular, special_file_problem


@dataclass
class MalformedLine:
    """A history line that could not be read, and where it is."""

    file: str
    line: int
    reason: str


@dataclass
class HistoryRead:
    """The events read from the history, and the lines that could not be read."""

    events: list[dict[str, object]] = field(default_factory=list)
    malformed: list[MalformedLine] = field(default_factory=list)


@dataclass
class AppendResult:
    """How the events were appended (the chain mode) and what the reviewer should be told."""

    mode: ChainMode
    warnings: list[str] = field(default_factory=list)


def _parse_lines(data: bytes) -> Iterator[tuple[int, bytes, dict[str, object] | None, str | None]]:
    """(line number, raw, event, None) for each JSON object line; (number, raw, None, reason) for a malformed one."""
    lines = data.split(b"\n")
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            event = json.loads(raw)
        except ValueError as exc:
            cut = " (cut off: the last line has no end)" if number == len(lines) else ""
            what = getattr(exc, "msg", None) or ("invalid UTF-8" if isinstance(exc, UnicodeDecodeError) else str(exc))
            yield number, raw, None, f"not valid JSON: {what}{cut}"
            continue
        except RecursionError:  # `[[[[…` deeper than the decoder goes: an agent's line, never an event
            yield number, raw, None, "not valid JSON: nested too deeply"
            continue
        if not isinstance(event, dict):
            yield number, raw, None, "not a JSON object"
            continue
        yield number, raw, event, None


def read_file(path: Path, result: HistoryRead) -> None:
    month = path.stem
    try:
        data, _ = read_regular(path)
    except (NotRegularFile, FileNotFoundError) as exc:
        result.malformed.append(MalformedLine(path.name, 0, str(exc)))
        return
    for number, _raw, event, reason in _parse_lines(data):
        if event is None:
            result.malformed.append(MalformedLine(path.name, number, str(reason)))
            continue
        event["_month"] = month
        event["_line"] = number
        result.events.append(event)


@dataclass(frozen=True)
class MonthSummary:
    """What `plur-desk check` reports of one month file, a function of its bytes alone (so it is cached by digest).
    Human claims are kept as raw lines: their trust depends on keys.yaml and is decided on every run."""

    events: int
    types: dict[str, int]
    malformed: list[tuple[int, str]]
    claims: list[tuple[int, bytes]]  # (line, raw) of events whose actor claims a human
    ours: list[tuple[str, str]]  # (engram id, timestamp) of complete lines naming the plur-desk runtime
    rekeyed: list[tuple[str, str, str]]  # (from, to, timestamp) of PLUR 0.21's `engram_rekeyed` events


def summarize_month(data: bytes) -> MonthSummary:
    types: dict[str, int] = {}
    malformed, claims, ours = [], [], []
    rekeyed: list[tuple[str, str, str]] = []
    last = data.count(b"\n") + 1  # the number of a cut-off last line (no line feed after it)
    events = 0
    for number, raw, event, reason in _parse_lines(data):
        if event is None:
            malformed.append((number, str(reason)))
        else:
            events += 1
            kind = str(event.get("event"))
            types[kind] = types.get(kind, 0) + 1
            actor = event.get("actor")
            if isinstance(actor, dict) and actor.get("kind") == "human":  # as signatures.claimed_human decides
                claims.append((number, raw))
            pair = rekeyed_pair(event)
            if pair is not None:
                rekeyed.append(pair)
        if b'"plur-desk"' in raw and number < last:  # a cut-off line is not ours yet (as the window reads it)
            ours.append(("", "") if event is None else (str(event.get("engram_id")), str(event.get("timestamp"))))
    return MonthSummary(events, types, malformed, claims, ours, rekeyed)


HISTORY_CACHE_FORMAT = 3  # 2: engram_rekeyed pairs; 3: with their timestamps


def summarize_history(log: HistoryLog, cache_file: Path | None) -> list[tuple[str, MonthSummary]]:
    """Every month file's summary, by file name, in file order: from the cache when the file's bytes are the same
    (a digest of the whole file), else read line by line. A file that cannot be read is one malformed line."""
    from plur_desk.store.lists.parse_cache import cache_tag, read_private, write_private

    tag = f"{HISTORY_CACHE_FORMAT}:{cache_tag()}"
    stored = read_private(cache_file, tag) if cache_file is not None else {}
    out: list[tuple[str, MonthSummary]] = []
    fresh: dict[bytes, object] = {}
    for path in log.month_files():
        try:
            data, _ = read_regular(path)
        except (NotRegularFile, FileNotFoundError) as exc:
            out.append((path.name, MonthSummary(0, {}, [(0, str(exc))], [], [], [])))
            continue
        digest = hashlib.blake2b(data, digest_size=16).digest()
        packed = stored.get(digest)
        summary = MonthSummary(*packed) if isinstance(packed, tuple) else summarize_month(data)
        fresh[digest] = _packed(summary)
        out.append((path.name, summary))
    if cache_file is not None and fresh.keys() != stored.keys():
        write_private(cache_file, tag, fresh)
    return out


def _packed(summary: MonthSummary) -> tuple[object, ...]:
    return (summary.events, summary.types, summary.malformed, summary.claims, summary.ours, summary.rekeyed)


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


def _is_special(path: Path) -> bool:
    return special_file_problem(path) is not None


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
        return sorted(p for p in self.dir.glob("*.jsonl") if p.is_file() and not _is_special(p))

    def special_files(self) -> list[str]:
        """Month files that are not regular files (FIFOs, sockets, devices, directories, dangling links)."""
        if not self.dir.is_dir():
            if not os.path.lexists(self.dir):
                return []
            return [special_file_problem(self.dir) or "history is a file, not a directory"]
        found = []
        for path in sorted(self.dir.glob("*.jsonl")):
            problem = special_file_problem(path)
            if problem:
                found.append(f"history/{problem}")
        return found

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
        prepared = self.prepare(events)
        try:
            return prepared.commit()
        finally:
            prepared.close()

    def prepare(self, events: list[dict[str, object]]) -> PreparedAppend:
        """Pre-flight: open every month file the events go to (O_APPEND, a regular file inside the store) and
        check a chained tail is intact. Raises WriteFailed, having written nothing, when any of that fails."""
        by_month: dict[str, list[dict[str, object]]] = {}
        for event in events:
            by_month.setdefault(str(event["timestamp"])[:7], []).append(event)
        prepared = PreparedAppend(self)
        if not by_month:
            return prepared
        try:
            if not self.dir.is_dir():
                if os.path.lexists(self.dir):
                    raise WriteFailed(
                        f"{self.dir} is not a directory; history cannot be appended",
                        outcome=Outcome.NOTHING_WRITTEN,
                    )
                self.dir.mkdir(parents=True, exist_ok=True)
                prepared.created.append(self.dir)
            for month, month_events in by_month.items():
                path = self.dir / f"{month}.jsonl"
                existed = os.path.lexists(path)
                fd = open_for_append(path, self.dir.parent)
                if not existed:
                    prepared.created.insert(0, path)
                size = os.fstat(fd).st_size
                prepared.months.append(_MonthAppend(path, fd, self.mode(month), month_events, size))
                if prepared.months[-1].mode is not ChainMode.LEGACY:
                    _refuse_torn_tail(path)
        except BaseException:
            prepared.close()
            raise
        return prepared

    def _append_chained(self, month: _MonthAppend, result: AppendResult) -> None:
        try:
            with locked(self.dir / "chain", CHAIN_POLICY):
                self._chain_and_write(month, gap=False)
        except LockTimeout:
            result.warnings.append(
                "history/chain.lock stayed busy; the review events were appended without a link (a declared gap "
                "in `plur verify`, not tampering)"
            )
            self._chain_and_write(month, gap=True)
        if month.mode is ChainMode.MIXED:
            result.warnings.append(
                "a writer that does not chain history (an older PLUR process) wrote last; `plur verify` will show a "
                "declared gap there"
            )

    def _chain_and_write(self, month: _MonthAppend, *, gap: bool) -> None:
        _refuse_torn_tail(month.path)
        prev = None if gap else hash_of_line(predecessor_line(self.dir, month.path))
        lines = []
        for event in month.events:
            event["prev"] = prev
            self._resign(event)
            event["hash"] = event_hash(event)
            prev = event["hash"]  # type: ignore[assignment]
            lines.append(js_stringify(event))
        _write_lines(month.fd, month.path, lines)
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
        """Append complete lines (the caller holds whatever lock the mode needs) to a regular file in the store."""
        fd = open_for_append(path, self.dir.parent)
        try:
            _write_lines(fd, path, lines)
        finally:
            os.close(fd)


@dataclass
class _MonthAppend:
    """One month file opened for an append: its descriptor, chain mode, events, and size at pre-flight."""

    path: Path
    fd: int
    mode: ChainMode
    events: list[dict[str, object]]
    offset: int  # the file's size at pre-flight: our lines come after it


class PreparedAppend:
    """Month files opened for append and checked; `commit` writes the events, `close` releases the descriptors."""

    def __init__(self, log: HistoryLog) -> None:
        self.log = log
        self.months: list[_MonthAppend] = []
        self.created: list[Path] = []  # month files and folder the pre-flight created (removed if never used)
        self.committed = False

    @property
    def offsets(self) -> dict[str, int]:
        return {m.path.name: m.offset for m in self.months}

    def commit(self) -> AppendResult:
        self.committed = True
        result = AppendResult(ChainMode.LEGACY)
        for month in self.months:
            result.mode = month.mode
            if month.mode is ChainMode.LEGACY:
                for event in month.events:
                    self.log._resign(event)
                lines = [js_stringify(e) for e in month.events]
                if _ends_mid_line(month.path):
                    # Seal the cut-off line on its own line (it stays a skipped, malformed line) so it cannot
                    # swallow the start of ours.
                    lines[0] = "\n" + lines[0]
                    result.warnings.append(
                        f"{month.path.name} ended in a cut-off line; it was left as it is, and the "
                        "review events start on a new line"
                    )
                _write_lines(month.fd, month.path, lines)
            else:
                self.log._append_chained(month, result)
        return result

    def close(self) -> None:
        for month in self.months:
            if month.fd >= 0:
                os.close(month.fd)
                month.fd = -1
        if not self.committed:  # refused before appending: leave no empty month file behind
            for path in self.created:
                with contextlib.suppress(OSError):
                    if path.is_dir():
                        path.rmdir()
                    elif path.stat().st_size == 0:
                        path.unlink()


def _refuse_torn_tail(path: Path) -> None:
    if _ends_mid_line(path):
        raise WriteFailed(
            f"{path} ends in a cut-off line (a writer crashed mid-line); appending would bury it inside the chain",
            outcome=Outcome.NOTHING_WRITTEN,
            then="Let PLUR repair it or remove the partial line.",
        )


def _write_lines(fd: int, path: Path, lines: list[str]) -> None:
    try:
        for line in lines:
            payload = (line + "\n").encode("utf-8")
            written = os.write(fd, payload)
            if written != len(payload):
                raise WriteFailed(f"short write to {path} ({written} of {len(payload)} bytes)")
            crash_point("event-appended")
        os.fsync(fd)
    except OSError as exc:
        raise WriteFailed(f"cannot append history to {path}: {exc.strerror}") from exc
