"""The watched baseline follows PLUR 0.21's renames of a repeated id (`engram_rekeyed`, domain/plur_rules/rekey.py).

A teammate's engram merged in under the id of a watched one makes 0.21 rename the later, different copy to
`<id>-D<8 hex>`. Read by id, the watched engram would show as gone (or rewritten into the teammate's text) and its
new id as a new engram nobody decided on. Here the baseline's values for the old id are carried to the new one
when the trail says the engram was renamed after that baseline line was signed and its content says the watched
engram is the renamed copy (the copy still under the old id is then the teammate's, new to the baseline). When
neither copy matches what was watched, nothing is carried: both show as changes for a person to look at.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import replace

from plur_desk.domain.agents.agent_changes import Baseline, Values, engram_values
from plur_desk.domain.plur_rules.rekey import Renames

_RENAMED = re.compile(r".+-D[0-9a-f]{8}(?:-\d+)?\Z")


def _matches(values: Values, engram: Mapping[str, object] | None) -> bool:
    """Whether `engram` is the one the baseline watched: its watched text or content hash unchanged."""
    if engram is None:
        return False
    return engram.get("statement") == values[0] or (values[8] is not None and engram.get("content_hash") == values[8])


def _watched_copy_renamed(values: Values, kept: Mapping[str, object] | None, renamed: Mapping[str, object]) -> bool:
    if kept is None:
        return True  # nothing is left under the old id: the rename took the watched engram with it
    if engram_values(kept) == values:
        return False
    if engram_values(renamed) == values:
        return True  # the same text learned on two machines: the watched fields still tell them apart
    return _matches(values, renamed) and not _matches(values, kept)


def follow_renames(
    baseline: Baseline, engrams: Mapping[str, Mapping[str, object]], trail: Callable[[], Renames]
) -> Baseline:
    """`baseline` with each watched engram PLUR renamed since carried to its new id (the input is not changed).
    `trail` is read only when an engram under a 0.21 rename's id is missing from the baseline."""
    if not baseline.watched:
        return baseline
    known = baseline.engrams
    candidates = [i for i in engrams if i not in known and _RENAMED.match(i)]
    if not candidates:
        return baseline
    renames = trail()
    moved: dict[str, str] = {}  # new id -> the old id whose baseline it takes
    for new in candidates:
        for old in renames.earlier(new):
            values = known.get(old)
            if values is None or old in moved.values():
                continue
            if renames.follows(new, old, baseline.engram_at[old]) and _watched_copy_renamed(
                values, engrams.get(old), engrams[new]
            ):
                moved[new] = old
            break
    if not moved:
        return baseline
    out = replace(baseline, engrams=dict(known), engram_at=dict(baseline.engram_at))
    for new, old in moved.items():
        out.engrams[new] = out.engrams.pop(old)
        out.engram_at[new] = out.engram_at.pop(old)
    return out
