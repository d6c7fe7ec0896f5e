"""Writing the History pane's filtered view to a file, in the format the reviewer chose (CSV or JSONL)."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from pathlib import Path

from plur_desk.app.history.history_index import actor_kind, actor_name

FORMATS = {"csv": "CSV (*.csv)", "jsonl": "JSON Lines (*.jsonl)"}


def format_of_filter(name_filter: str) -> str:
    """The format a file dialog's chosen name filter stands for."""
    return next((fmt for fmt, text in FORMATS.items() if text == name_filter), "jsonl")


def with_suffix(path: str, fmt: str) -> str:
    """`path`, given the format's suffix when the name has none (a name with another suffix is kept as typed)."""
    return path if Path(path).suffix else f"{path}.{fmt}"


def write_events(path: str, events: Iterable[dict[str, object]], fmt: str) -> int:
    """Write `events` (fields starting with _ left out) as CSV or JSONL; returns how many. Raises OSError."""
    clean = [{k: v for k, v in e.items() if not k.startswith("_")} for e in events]
    with open(path, "w", encoding="utf-8", newline="") as handle:
        if fmt == "csv":
            writer = csv.writer(handle)
            writer.writerow(["timestamp", "event", "engram_id", "actor_kind", "actor", "data"])
            for e in clean:
                data = json.dumps(e.get("data"), ensure_ascii=False)
                writer.writerow(
                    [e.get("timestamp"), e.get("event"), e.get("engram_id"), actor_kind(e), actor_name(e), data]
                )
        else:
            for e in clean:
                handle.write(json.dumps(e, ensure_ascii=False) + "\n")
    return len(clean)
