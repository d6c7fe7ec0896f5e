"""The watched baseline's file: `.plur-desk/baseline/baseline.jsonl` in the store, one signed line per claim.

Append-only (one `write` with O_APPEND per batch, then fsync), so an agent's concurrent write can never tear ours
and a crash leaves at most a cut-off last line, which readers skip as PLUR does with history. It travels with
`plur-desk sync` (committed with the store's files) and git merges it as a set of lines (`merge_lines`). What the
lines say is trusted only once verified (app/changes/watch.py): this module reads and writes bytes.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from plur_desk.infra.errors import Outcome, WriteFailed
from plur_desk.store.safe_open import NotRegularFile, inside, read_regular, special_file_problem

FOLDER = ".plur-desk"
RELATIVE = f"{FOLDER}/baseline/baseline.jsonl"


def path_of(root: Path) -> Path:
    return root / RELATIVE


def problem(root: Path) -> str | None:
    """Why the baseline file cannot be read (a FIFO, a directory, a dangling link), or None."""
    return special_file_problem(path_of(root))


def read_lines(root: Path) -> list[tuple[int, bytes]]:
    """(line number, bytes) of every complete line; [] when there is no baseline. A last line without its newline
    is a write cut off by a crash and is left out. NotRegularFile when the path is not a regular file."""
    return lines_of(read_bytes(root))


def read_bytes(root: Path) -> bytes:
    """The whole file (b"" when there is none); NotRegularFile when the path is not a regular file."""
    try:
        return read_regular(path_of(root))[0]
    except FileNotFoundError:
        return b""


def lines_of(data: bytes) -> list[tuple[int, bytes]]:
    lines = data.split(b"\n")
    lines.pop()  # after the last newline: empty, or a torn line
    return [(number, line) for number, line in enumerate(lines, 1) if line.strip()]


def append(root: Path, lines: list[str]) -> None:
    """Append complete lines (JSON without newlines) in one write, then fsync the file (and the folder when new)."""
    if not lines:
        return
    path = path_of(root)
    if not inside(root, path):  # checked before any folder is made: a planted link must not lead our write out
        raise WriteFailed(
            f"{path} leads out of the store (to {os.path.realpath(path)})", outcome=Outcome.NOTHING_WRITTEN
        )
    problem_now = special_file_problem(path)
    if problem_now:
        raise WriteFailed(problem_now, outcome=Outcome.NOTHING_WRITTEN)
    created = not path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = "".join(line + "\n" for line in lines).encode("utf-8")
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags, 0o644)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise WriteFailed(f"{path.name} is not a regular file", outcome=Outcome.NOTHING_WRITTEN)
        os.set_blocking(fd, True)
        if _torn(fd):
            os.write(fd, b"\n")  # a cut-off last line stays a line of its own, never the start of ours
        written = 0
        while written < len(payload):
            written += os.write(fd, payload[written:])
        os.fsync(fd)
    finally:
        os.close(fd)
    if created:
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _torn(fd: int) -> bool:
    size = os.fstat(fd).st_size
    return size > 0 and os.pread(fd, 1, size - 1) != b"\n"


VERIFIED_TAG = "baseline-verified-1"


def verified_cache(cache_file: Path) -> Path:
    """Where the verified reading of a baseline is kept, beside the window's parse cache (derived, user-owned)."""
    return cache_file.with_name("baseline-verified.marshal")


def merge_lines(base: bytes, ours: bytes, theirs: bytes) -> bytes:
    """git's three versions of the file merged as a set of lines: ours in order, then theirs' lines ours lacks
    (a line is a signed claim: none is ever dropped, and a line both sides hold is kept once). `base` is not
    needed: lines are never removed except by compaction, which keeps every claim in force."""
    del base
    out: list[bytes] = []
    known: set[bytes] = set()
    for data in (ours, theirs):
        for line in data.split(b"\n"):
            if line.strip() and line not in known:
                known.add(line)
                out.append(line)
    return b"".join(line + b"\n" for line in out)


_NAMING = ("engram_b", "winner", "loser", "earlier", "later")


def events_naming(months: Iterable[Path], ids: Iterable[str]) -> dict[str, list[dict[str, object]]]:
    """History events naming any of `ids` (as `engram_id` or a second engram in `data`, as the History pane's
    timeline reads them), oldest first per id, from these month files: a byte search per id, so only the lines
    that mention one are parsed (a month that is not a regular file, or a line that is not JSON, is skipped)."""
    wanted = set(ids)
    found: dict[str, list[dict[str, object]]] = {i: [] for i in wanted}
    for month in months:
        try:
            data, _st = read_regular(month)
        except (OSError, NotRegularFile):
            continue
        starts: set[int] = set()
        for ident in wanted:
            needle = b'"' + ident.encode("utf-8") + b'"'
            at = data.find(needle)
            while at >= 0:
                starts.add(data.rfind(b"\n", 0, at) + 1)
                at = data.find(needle, at + len(needle))
        for start in sorted(starts):
            end = data.find(b"\n", start)
            try:
                event = json.loads(data[start : end if end >= 0 else len(data)])
            except (ValueError, RecursionError):
                continue
            if not isinstance(event, dict):
                continue
            named = {event.get("engram_id")}
            extra = event.get("data")
            if isinstance(extra, dict):
                named.update(extra.get(k) for k in _NAMING)
            for ident in wanted.intersection(n for n in named if isinstance(n, str)):
                found[ident].append(event)
    for events in found.values():
        events.sort(key=lambda e: str(e.get("timestamp", "")))
    return found
