"""A signed checkpoint at the end of a review session on a hash-chained store, in PLUR's shape (§3).

`{event: checkpoint, engram_id: "", timestamp, data: {chain_head, store_hash, engram_count, actor}, prev,
signature, signer, hash}`, built inside `history/chain.lock` from the predecessor it chains onto, so
`data.chain_head == prev`. `store_hash` is SHA-256 of the canonical JSON of engrams.yaml as js-yaml loads it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from plur_desk.infra.clock import iso_ms
from plur_desk.infra.errors import LockTimeout
from plur_desk.infra.jsvalues import JsTimestamp
from plur_desk.store.history.chain import ChainMode, event_hash, hash_of_line, js_stringify, predecessor_line
from plur_desk.store.history.log import HistoryLog
from plur_desk.store.lists.yaml_load import YamlSyntaxError, load_general
from plur_desk.store.locking.lock import CHAIN_POLICY, locked

_STAMP = re.compile(
    r"(\d{4})-(\d\d?)-(\d\d?)(?:(?:[Tt]|[ \t]+)(\d\d?):(\d\d):(\d\d)(?:\.(\d*))?"
    r"(?:[ \t]*(Z|([-+])(\d\d?)(?::(\d\d))?))?)?\Z"
)


def _js_date(text: str) -> str:
    """What JSON.stringify writes for js-yaml's Date of an unquoted timestamp (toISOString, UTC, ms)."""
    m = _STAMP.match(text)
    if m is None:
        return text
    year, month, day = int(m[1]), int(m[2]), int(m[3])
    if m[4] is None:
        moment = datetime(year, month, day, tzinfo=UTC)
    else:
        millis = int((m[7] or "")[:3].ljust(3, "0"))
        moment = datetime(year, month, day, int(m[4]), int(m[5]), int(m[6]), millis * 1000, tzinfo=UTC)
        if m[9]:
            offset = timedelta(hours=int(m[10]), minutes=int(m[11] or 0))
            moment -= offset if m[9] == "+" else -offset
    return iso_ms(moment.astimezone(UTC))


def _js_values(value: object) -> object:
    if isinstance(value, JsTimestamp):
        return _js_date(str(value))
    if isinstance(value, list):
        return [_js_values(v) for v in value]
    if isinstance(value, dict):
        return {k: _js_values(v) for k, v in value.items()}
    return value


def store_digest(engrams_path: Path) -> tuple[str, int]:
    """(store_hash, engram_count) as PLUR computes them; raises ValueError when PLUR would refuse a checkpoint."""
    try:
        doc = _js_values(load_general(engrams_path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, YamlSyntaxError) as exc:
        raise ValueError(f"engrams.yaml cannot be read: {exc}") from None
    items = doc if isinstance(doc, list) else doc.get("engrams") if isinstance(doc, dict) else None
    if not isinstance(items, list):
        raise ValueError("engrams.yaml is not a store document")
    count = sum(1 for e in items if isinstance(e, dict) and e.get("status", "active") == "active")
    digest = hashlib.sha256(js_stringify(doc, sort=True).encode("utf-8", "surrogatepass")).hexdigest()
    return digest, count


def emit_checkpoint(
    log: HistoryLog,
    engrams_path: Path,
    now: datetime,
    sign: Callable[[dict[str, object]], dict[str, object]],
    actor: str = "plur-desk",
) -> dict[str, object] | None:
    """Append a signed checkpoint when the history is chained; None (nothing written) otherwise or when the chain
    lock stays busy (a checkpoint is never worth a declared gap). Raises ValueError when the store is unreadable."""
    month = iso_ms(now)[:7]
    if log.mode(month) is not ChainMode.CHAINED:
        return None
    month_file = log.dir / f"{month}.jsonl"
    try:
        with locked(log.dir / "chain", CHAIN_POLICY):
            line = predecessor_line(log.dir, month_file)
            prev = hash_of_line(line)
            if prev is None:
                return None  # a non-chaining writer wrote last: a checkpoint would only pin a gap
            store_hash, count = store_digest(engrams_path)
            data = {"chain_head": prev, "store_hash": store_hash, "engram_count": count, "actor": actor}
            event: dict[str, object] = {
                "event": "checkpoint",
                "engram_id": "",
                "timestamp": iso_ms(now),
                "data": data,
                "prev": prev,
            }
            event = sign(event)
            event["hash"] = event_hash(event)
            if month_file.exists() and month_file.stat().st_size and not _ends_with_newline(month_file):
                return None
            log.write_lines(month_file, [js_stringify(event)])
            with contextlib.suppress(FileNotFoundError):
                os.unlink(log.dir / ".chain-head")
            return event
    except LockTimeout:
        return None


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"
