"""What `plur-desk sync` did, in plain words (and as JSON): remote, ahead/behind, decisions in and out."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from plur_desk.app.team.disagreements import TeamDisagreement
from plur_desk.domain.merge.merge_engram import REVIEWS_KEY
from plur_desk.store.lists.list_file import ENGRAMS, TENSIONS, Layout
from plur_desk.store.team.merge_side import MergeError, Side, engram_key, read_side


@dataclass
class SyncReport:
    store: str
    remote: str = ""
    remote_type: str = ""
    branch: str = ""
    ahead_before: int = 0
    behind_before: int = 0
    ahead_after: int = 0
    behind_after: int = 0
    committed: bool = False
    pushed: bool = False
    held_local: int = 0
    incoming: list[str] = field(default_factory=list)
    outgoing: list[str] = field(default_factory=list)
    renumbered: list[dict[str, str]] = field(default_factory=list)
    disagreements: list[TeamDisagreement] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def converged(self) -> bool:
        return self.error is None and self.ahead_after == 0 and self.behind_after == 0

    @property
    def exit_code(self) -> int:
        if not self.converged:
            return 2
        return 1 if self.disagreements else 0

    def to_json(self) -> str:
        data = asdict(self)
        data["converged"] = self.converged
        data["exit_code"] = self.exit_code
        return json.dumps(data, indent=2, ensure_ascii=False)

    def to_text(self) -> str:
        lines = []
        if self.remote:
            lines.append(f"Remote: {self.remote} ({self.remote_type} remote, branch {self.branch})")
            lines.append(f"Before: {self.ahead_before} local commit(s) to push, {self.behind_before} to pull")
        lines += [f"Came in: {d}" for d in self.incoming] or (["Came in: no review decisions"] if self.remote else [])
        lines += [f"Went out: {d}" for d in self.outgoing]
        if self.held_local:
            lines.append(
                f"Kept on this machine: {self.held_local} engram(s) PLUR's sync never pushes (scope/visibility)"
            )
        for move in self.renumbered:
            lines.append(
                f'Renumbered: {move["old"]} was already taken on the remote; this machine\'s "{move["statement"]}" '
                f"is now {move['new']} (this machine's history still names {move['old']})"
            )
        lines += [f"Note: {n}" for n in self.notes]
        for d in self.disagreements:
            lines.append(f"Team disagreement: {d.summary}")
        if self.error:
            lines.append(f"Could not sync: {self.error}")
        elif self.converged:
            tail = f"; {len(self.disagreements)} disagreement(s) wait for a reviewer" if self.disagreements else ""
            lines.append(f"Converged: this clone and the remote hold the same commit{tail}.")
        else:
            lines.append(f"Not converged: {self.ahead_after} to push, {self.behind_after} to pull.")
        return "\n".join(lines)


def _side(data: bytes | None, layout: Layout) -> Side | None:
    if not data:
        return None
    key = engram_key if layout is ENGRAMS else (lambda v: str(v.get("id")))
    try:
        return read_side(data, layout, key)
    except MergeError:
        return None


def _decisions(side: Side | None, skip: Side | None = None) -> dict[tuple[str, str, str, str], str]:
    """Review decisions on the engrams; blocks identical in `skip` and blocks naming no review are not parsed."""
    found: dict[tuple[str, str, str, str], str] = {}
    if side is None:
        return found
    for ident in side.order:
        raw = side.blocks.get(ident)
        if raw is not None and (b"\n    review" not in raw or (skip is not None and skip.blocks.get(ident) == raw)):
            continue
        record = side.records[ident]
        reviews = [record.get("review"), *(record.get(REVIEWS_KEY) or [])]  # type: ignore[misc]
        for review in reviews:
            if isinstance(review, dict):
                key = (ident, str(review.get("by")), str(review.get("state")), str(review.get("at")))
                found[key] = f"{review.get('by')} {review.get('state')} {ident} at {review.get('at')}"
    return found


def decisions_between(before: bytes | None, after: bytes | None) -> list[str]:
    """Review decisions present in `after` and not in `before`, one line each, oldest first."""
    old_side, new_side = _side(before, ENGRAMS), _side(after, ENGRAMS)
    return _new_decisions(old_side, new_side)


def _new_decisions(old_side: Side | None, new_side: Side | None) -> list[str]:
    new = _decisions(new_side, skip=old_side)
    old = _decisions(old_side, skip=None) if new else {}
    return [new[k] for k in sorted(new, key=lambda k: (k[3], k[0])) if k not in old]


def _moved(old: Side | None, new: Side | None) -> list[str]:
    """Keys whose block differs between the two versions (parsed only then)."""
    if new is None:
        return []
    return [k for k in new.order if old is not None and k in old.records and old.blocks.get(k) != new.blocks.get(k)]


def changes_between(
    engrams: tuple[bytes | None, bytes | None], tensions: tuple[bytes | None, bytes | None]
) -> list[str]:
    """What moved between two commits, in plain words: decisions by whom, retirements, new engrams, tensions."""
    old, new = _side(engrams[0], ENGRAMS), _side(engrams[1], ENGRAMS)
    lines = _new_decisions(old, new)
    explained = {line.split(" ")[2] for line in lines if len(line.split(" ")) > 2}
    added = [k for k in (new.order if new else []) if old is None or k not in old.records]
    if added:
        lines.append(f"{len(added)} new engram(s): {', '.join(added[:5])}{' …' if len(added) > 5 else ''}")
    for ident in _moved(old, new):
        if ident in explained or old is None or new is None:
            continue
        before, record = old.records[ident], new.records[ident]
        for name in ("status", "commitment"):
            if before.get(name) != record.get(name):
                lines.append(f"{ident}: {name} {before.get(name)} -> {record.get(name)}")
    old_t, new_t = _side(tensions[0], TENSIONS), _side(tensions[1], TENSIONS)
    for ident in _moved(old_t, new_t):
        assert old_t is not None and new_t is not None
        before, record = old_t.records[ident], new_t.records[ident]
        if before.get("status") != record.get("status"):
            winner = f" in favour of {record.get('resolved_by')}" if record.get("status") == "resolved" else ""
            lines.append(f"{ident}: {before.get('status')} -> {record.get('status')}{winner}")
    return lines
