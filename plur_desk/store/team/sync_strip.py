"""What PLUR's sync would push: the same scope strip as `plur sync` (its `pushKeep` and sibling rules).

`personal` remotes get every engram except `scope: local`; `shared` remotes only shared-family scopes whose
visibility is not private (the default), and then episodes/candidates/tensions records naming any other engram
stay local too. The working tree keeps everything; only the committed blob is stripped.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from plur_desk.infra.jsvalues import JsTimestamp
from plur_desk.store.lists.list_file import ENGRAMS, TENSIONS
from plur_desk.store.lists.yaml_dump import dump_tensions_document
from plur_desk.store.lists.yaml_load import YamlSyntaxError, load_general
from plur_desk.store.team.merge import MergeError, engram_key, read_side

SHARED_PREFIXES = ("group:", "project:", "space:", "team:", "org:")
ID_TOKEN = re.compile(r"\b(?:ENG|ABS|META)-[A-Za-z0-9-]+")
SIBLINGS = ("episodes.yaml", "candidates.yaml", "tensions.yaml")


def is_shared_scope(scope: object) -> bool:
    s = str(scope or "").lower()
    return s == "public" or s.startswith(("public:", "public/")) or s.startswith(SHARED_PREFIXES)


def is_pushed(engram: dict[str, object], remote_type: str) -> bool:
    if remote_type == "shared":
        return is_shared_scope(engram.get("scope", "")) and (engram.get("visibility") or "private") != "private"
    return engram.get("scope") != "local"


def why_not_pushed(engram: dict[str, object], remote_type: str) -> str | None:
    """Plain words when a decision on this engram would never reach the team's remote, else None."""
    scope, visibility = engram.get("scope"), engram.get("visibility") or "private"
    if scope == "local":
        return "its scope is local: PLUR's sync never pushes it, so teammates will not see this decision"
    if remote_type == "shared" and not is_shared_scope(scope):
        return f"its scope {scope} is personal: the team remote never receives it"
    if remote_type == "shared" and visibility == "private":
        return "its visibility is private (PLUR's default): the team remote never receives it"
    return None


@dataclass
class Stripped:
    data: bytes
    kept: set[str] = field(default_factory=set)
    dropped: list[str] = field(default_factory=list)


_SCOPE = re.compile(rb"\n    scope: ([^\n\"']*)\n")
_VISIBILITY = re.compile(rb"\n    visibility: ([a-z]+)\n")


def _pushed_by_bytes(raw: bytes, remote_type: str) -> bool | None:
    """Decide from the block's own lines when they are plain (js-yaml's usual output); None: parse it."""
    scope = _SCOPE.search(raw)
    if scope is None:
        return None
    visibility = _VISIBILITY.search(raw)
    record = {"scope": scope.group(1).decode(), "visibility": visibility.group(1).decode() if visibility else None}
    if remote_type == "shared" and visibility is None and b"\n    visibility:" in raw:
        return None
    return is_pushed(record, remote_type)


def strip_engrams(data: bytes, remote_type: str) -> Stripped:
    side = read_side(data, ENGRAMS, engram_key)
    kept = set()
    for key in side.order:
        raw = side.blocks.get(key)
        decided = _pushed_by_bytes(raw, remote_type) if raw is not None else None
        if decided is None:
            decided = is_pushed(side.records[key], remote_type)
        if decided:
            kept.add(key)
    dropped = [k for k in side.order if k not in kept]
    if not dropped:
        return Stripped(data, kept)
    if len(side.blocks) != len(side.records):
        raise MergeError("engrams.yaml is not in PLUR's own layout; let PLUR's sync strip it")
    blocks = [side.blocks[k] for k in side.order if k in kept] + [b or b"" for b in side.opaque.values()]
    out = ENGRAMS.header + b"".join(blocks) if blocks else ENGRAMS.empty
    return Stripped(out, kept, dropped)


def strip_sibling(name: str, data: bytes, pushed_ids: set[str]) -> Stripped:
    """Drop records of a list file that name an engram outside the push set (shared remotes only)."""
    if not data.strip():
        return Stripped(data)
    try:
        records = load_general(data.decode("utf-8"))
    except (YamlSyntaxError, UnicodeDecodeError) as exc:
        raise MergeError(f"{name} cannot be read: {exc}") from None
    if not isinstance(records, list):
        raise MergeError(f"{name} is not a list")

    def keep(record: object) -> bool:
        text = json.dumps(record, default=str, ensure_ascii=False)
        return all(ref in pushed_ids for ref in ID_TOKEN.findall(text))

    kept = [r for r in records if keep(r)]
    if len(kept) == len(records):
        return Stripped(data)
    if _has_dates(kept):
        raise MergeError(f"{name} holds an unquoted date; let PLUR's sync strip it")
    if name == "tensions.yaml":
        side = read_side(data, TENSIONS, lambda v: str(v.get("id")))
        if len(side.blocks) == len(side.records) and not side.opaque:
            blocks = [side.blocks[k] for k in side.order if keep(side.records[k])]
            return Stripped(b"".join(blocks) if blocks else TENSIONS.empty, dropped=[str(len(records) - len(kept))])
    return Stripped(dump_tensions_document(kept).encode("utf-8"), dropped=[str(len(records) - len(kept))])


def _has_dates(value: object) -> bool:
    if isinstance(value, JsTimestamp):
        return True
    if isinstance(value, dict):
        return any(_has_dates(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_dates(v) for v in value)
    return False
