"""PLUR 0.21's duplicate-id rule and its `engram_rekeyed` trail: which copy keeps an id, which one is renamed, how.

Transcribed from PLUR 0.21 `packages/core/src/engrams.ts` (`canonicalJson`, `freshDuplicateId`,
`resolveDuplicateIds`, `recordIdRenames`; a plur-ai/plur copy read without its commit)
and the 0.21.0 CHANGELOG ("Duplicate engram ids are kept, not collapsed (owner decision P1)"): the first copy keeps
the id; a later copy with different content becomes `<id>-D<8 hex of sha256(canonical JSON)>`, with `-2`, `-3`...
only if that is taken; a later copy identical to a kept one is read once. The rename is written to history as
`engram_rekeyed` {engram_id: new, data: {from, to}} by PLUR's next write of the store, never by a read.

0.21 hashes the record as its schema parsed it (defaults filled in); we hash it as read. The two agree for records
PLUR itself wrote (they already carry every default), which is what a store holds; see tests/node/rekey_oracle.mjs.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass

ID_FORM = re.compile(r"(?:ENG|ABS|META)-[A-Za-z0-9-]+\Z")  # the schema's id pattern in 0.21 (and 0.22's plan)
_SURROGATE = re.compile("[\ud800-\udfff]")


def _js_number(value: float) -> str:
    """`JSON.stringify` of a number: integers without a point, exponents as JavaScript writes them."""
    if not math.isfinite(value):
        return "null"
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    text = repr(float(value))
    if 1e-6 <= abs(value) < 1e21:
        if "e" not in text:
            return text
        from decimal import Decimal  # only for a number below 1e-4, which Python writes with an exponent

        return format(Decimal(text), "f")
    mantissa, _, exponent = text.partition("e")
    sign = "-" if exponent.startswith("-") else "+"
    return f"{mantissa.removesuffix('.0')}e{sign}{int(exponent.lstrip('+-'))}"


def _js_string(text: str) -> str:
    out = json.dumps(text, ensure_ascii=False)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", out)  # well-formed JSON.stringify


def _utf16(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")  # JavaScript's sort() compares UTF-16 code units


def canonical_json(value: object) -> str:
    """PLUR's canonicalJson: keys sorted, no spaces, `undefined` (absent) keys left out."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return _js_number(value)
    if isinstance(value, str):
        return _js_string(value)
    if isinstance(value, Sequence):
        return "[" + ",".join(canonical_json(v) for v in value) + "]"
    if isinstance(value, Mapping):
        keys = sorted((str(k) for k in value), key=_utf16)
        return "{" + ",".join(_js_string(k) + ":" + canonical_json(value[k]) for k in keys) + "}"
    return _js_string(str(value))


def fresh_duplicate_id(engram_id: str, entry: Mapping[str, object], taken: Iterable[str]) -> str:
    """PLUR's freshDuplicateId: `<id>-D<8 hex of sha256(canonical JSON of the copy)>`, then -2, -3... if taken."""
    taken = set(taken)
    digest = hashlib.sha256(canonical_json(entry).encode("utf-8", "surrogatepass")).hexdigest()[:8]
    base = candidate = f"{engram_id}-D{digest}"
    k = 2
    while candidate in taken:
        candidate = f"{base}-{k}"
        k += 1
    return candidate


@dataclass(frozen=True)
class Resolved:
    """What 0.21 makes of the entry at `index`: kept as `engram_id` (renamed when `renamed_from` is set), or read
    once because it repeats a kept copy exactly (`exact_duplicate_of` is that copy's index)."""

    index: int
    engram_id: str
    renamed_from: str | None = None
    exact_duplicate_of: int | None = None


def resolve_duplicate_ids(
    entries: Sequence[tuple[str, Mapping[str, object]]], also_taken: Iterable[str] = ()
) -> list[Resolved]:
    """PLUR's resolveDuplicateIds over (id, record) pairs in file order, one answer per entry."""
    taken = set(also_taken)
    repeated: set[str] = set()
    for engram_id, _ in entries:
        if engram_id in taken:
            repeated.add(engram_id)
        taken.add(engram_id)
    kept: dict[str, list[tuple[str, int]]] = {}
    out = []
    for index, (engram_id, record) in enumerate(entries):
        if engram_id not in repeated:
            out.append(Resolved(index, engram_id))
            continue
        content = canonical_json(record)
        prior = kept.get(engram_id)
        if prior is None:
            kept[engram_id] = [(content, index)]
            out.append(Resolved(index, engram_id))
            continue
        same = next((i for c, i in prior if c == content), None)
        if same is not None:
            out.append(Resolved(index, engram_id, exact_duplicate_of=same))
            continue
        new_id = fresh_duplicate_id(engram_id, record, taken)
        taken.add(new_id)
        prior.append((content, index))
        out.append(Resolved(index, new_id, renamed_from=engram_id))
    return out


def rekeyed_pair(event: dict[str, object]) -> tuple[str, str, str] | None:
    """(from, to, when logged) of an `engram_rekeyed` event; None for any other event."""
    data = event.get("data")
    if event.get("event") != "engram_rekeyed" or not isinstance(data, dict):
        return None
    return str(data.get("from")), str(data.get("to", event.get("engram_id"))), str(event.get("timestamp") or "")


class Renames:
    """The `engram_rekeyed` trail: which ids an engram was known by before PLUR renamed it.

    History is written by agents too, so a rename is followed only in 0.21's own form (`<from>-D…`); a planted
    event that would hand one engram's past to an unrelated id is ignored.
    """

    def __init__(self, pairs: Iterable[tuple[str, str] | tuple[str, str, str]] = ()) -> None:
        self._earlier: dict[str, list[str]] = {}
        self._at: dict[tuple[str, str], str] = {}  # (from, to) -> when the rename was logged (its earliest event)
        for pair in pairs:
            self.add(*pair)

    def add(self, old: str, new: str, at: str | None = None) -> None:
        if old != new and new.startswith(f"{old}-D") and ID_FORM.match(new) and ID_FORM.match(old):
            names = self._earlier.setdefault(new, [])
            if old not in names:
                names.append(old)
            if (at and (old, new) not in self._at) or (at and at < self._at[old, new]):
                self._at[old, new] = at

    def take(self, event: dict[str, object]) -> None:
        """The rename an `engram_rekeyed` event logs (any other event: nothing)."""
        pair = rekeyed_pair(event)
        if pair is not None:
            self.add(*pair)

    def copy(self) -> Renames:
        """The same trail, to add to without changing this one (which readers on other threads may hold)."""
        out = Renames()
        out._earlier = {new: list(olds) for new, olds in self._earlier.items()}
        out._at = dict(self._at)
        return out

    def follows(self, engram_id: str, name: str, timestamp: object) -> bool:
        """Whether an event under `name` at `timestamp` is about `engram_id`: its own id always; an earlier id only
        before it was renamed away from it (after that the id is the other copy's, which kept it)."""
        if name == engram_id:
            return True
        chain = self.names(engram_id)
        times = [t for (old, new), t in self._at.items() if old == name and new in chain]
        return not times or str(timestamp) < min(times)

    def __bool__(self) -> bool:
        return bool(self._earlier)

    def earlier(self, engram_id: str) -> list[str]:
        """Every id `engram_id` had before, nearest first (a rename of a rename is followed back)."""
        out: list[str] = []
        todo = list(self._earlier.get(engram_id, []))
        while todo:
            old = todo.pop(0)
            if old not in out and old != engram_id:
                out.append(old)
                todo += self._earlier.get(old, [])
        return out

    def names(self, engram_id: str) -> list[str]:
        """`engram_id` and every id it had before."""
        return [engram_id, *self.earlier(engram_id)]

    def side(self, engram_id: str, present: Container[str]) -> str:
        """The engram a record naming `engram_id` (a tension's side) is about: that id while an engram has it (the
        copy that kept it, as 0.21 reads it), else the id PLUR renamed it to, when it did."""
        if engram_id in present:
            return engram_id
        return self.later(engram_id, present) or engram_id

    def later(self, engram_id: str, present: Container[str]) -> str | None:
        """The id among `present` that `engram_id` was renamed to, when it was (for a record naming an old id)."""
        return next((new for new in self._earlier if new in present and engram_id in self.earlier(new)), None)
