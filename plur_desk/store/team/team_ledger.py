"""The store's local record of team merges: disagreements the merge found and ids it renumbered.

Kept in the store's hidden `.plur-desk/` folder as JSON lines, one entry per line, never duplicated. PLUR's
sync never commits this folder: it is this machine's account of what its merges decided. Disagreements that can
travel (those on engrams) are also written on the engrams themselves.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

FOLDER = ".plur-desk"
DISAGREEMENTS = "team-disagreements.jsonl"
RENUMBERED = "renumbered.jsonl"


def _line(entry: dict[str, object]) -> str:
    return json.dumps(entry, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def read(store: Path, name: str) -> list[dict[str, object]]:
    path = store / FOLDER / name
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    entries = []
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            continue  # a torn last line from a crash: skip it, as PLUR does with history
        if isinstance(value, dict):
            entries.append(value)
    return entries


def append(store: Path, name: str, entries: list[dict[str, object]]) -> int:
    """Append the entries not already recorded; returns how many were new."""
    if not entries:
        return 0
    known = {_line(e) for e in read(store, name)}
    fresh = []
    for entry in entries:
        line = _line(entry)
        if line not in known:
            known.add(line)
            fresh.append(line)
    if not fresh:
        return 0
    folder = store / FOLDER
    folder.mkdir(exist_ok=True)
    fd = os.open(folder / name, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, ("\n".join(fresh) + "\n").encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    return len(fresh)
