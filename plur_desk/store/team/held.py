"""`.git/plur-held.json`: the scope:local engrams an interrupted PLUR 0.21 sync set aside, which PLUR counts as part of
the store until its next write puts them back into engrams.yaml. Read only; never written, never trusted.

Transcribed from PLUR 0.21 `packages/core/src/engrams.ts` (`HELD_RECOVERY_FILE`, `readHeldRecovery`,
`mergeHeldRecords`, `heldEngramsFor`; a plur-ai/plur copy read without its commit) and the
0.21.0 CHANGELOG ("An interrupted sync no longer loses scope:local engrams"). A reader folds in a held record unless
engrams.yaml already holds it (same id, same content, or already restored under its fresh id); one whose id the file
holds with other content is read under `<id>-D<8 hex>` (PLUR's P1b rule).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from plur_desk.domain.plur_rules.rekey import canonical_json, fresh_duplicate_id
from plur_desk.store.safe_open import NotRegularFile, read_regular

HELD_FILE = Path(".git") / "plur-held.json"


@dataclass
class Held:
    """The held engrams a reader adds to engrams.yaml (renamed where 0.21 renames them), or why the file is unread."""

    engrams: list[dict[str, object]] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)
    problem: str | None = None  # the file exists but PLUR would refuse it (HeldRecoveryUnreadableError)


def read_held(root: Path) -> list[object] | None:
    """The held engrams.yaml records, as PLUR's readHeldRecovery + heldEngramsFor read them; None when there is no
    recovery file; raises ValueError when it exists but is not one."""
    path = root / HELD_FILE
    try:
        data, _ = read_regular(path)
    except FileNotFoundError:
        return None
    except (NotRegularFile, OSError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} cannot be read: {exc}") from None
    files = doc.get("files") if isinstance(doc, dict) else None
    if not isinstance(files, list) or not all(
        isinstance(f, dict)
        and isinstance(f.get("file"), str)
        and isinstance(f.get("saved"), str)
        and isinstance(f.get("staged"), str)
        and isinstance(f.get("held"), list)
        for f in files
    ):
        raise ValueError(f"{path} is not a held-records file")
    mine = next((f for f in files if f["file"] == "engrams.yaml"), None)
    return list(mine["held"]) if mine is not None else None


def merge_held(current: list[dict[str, object]], held: list[object]) -> Held:
    """PLUR's mergeHeldRecords: what a reader adds to `current` (the engrams of engrams.yaml)."""
    out = Held()
    by_id: dict[str, list[str]] = {}
    taken = {str(r.get("id")) for r in current} | {
        str(r.get("id")) for r in held if isinstance(r, dict) and isinstance(r.get("id"), str)
    }
    for kept in current:
        by_id.setdefault(str(kept.get("id")), []).append(canonical_json(kept))
    for item in held:
        if not isinstance(item, dict):
            continue
        record: dict[str, object] = item
        engram_id = record.get("id")
        same = by_id.get(engram_id) if isinstance(engram_id, str) else None
        if same is None:
            out.engrams.append(record)
            continue
        if canonical_json(record) in same:
            continue
        first = fresh_duplicate_id(str(engram_id), record, ())
        if canonical_json({**record, "id": first}) in by_id.get(first, []):
            continue  # already restored under its fresh id
        new_id = fresh_duplicate_id(str(engram_id), record, taken)
        taken.add(new_id)
        out.renamed.append((str(engram_id), new_id))
        out.engrams.append({**record, "id": new_id})
    return out
