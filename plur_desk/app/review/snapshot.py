"""The records a session shows and acts on, by id: valid engrams (a shared id read as PLUR 0.21 reads it), tensions.

Rebuilt from the store's snapshot after a load (`reindex`), updated in place after our own writes (`take`).
While the load is still parsing, an action on an engram not parsed yet parses it first (`lookup`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Protocol

from plur_desk.domain.engram_view import EngramView
from plur_desk.domain.plur_rules.rekey import resolve_duplicate_ids
from plur_desk.domain.review import Patch
from plur_desk.infra.errors import ActionRefused
from plur_desk.store.lists.list_file import Entry, digest_of
from plur_desk.store.plur_store import PlurStore, WriteResult
from plur_desk.store.team.held import merge_held, read_held

Record = dict[str, object]


class Follower(Protocol):
    """A view kept by id (the draft queue): told which records changed, derives them again when read."""

    def note(
        self, engram_ids: Iterable[str] = (), tension_ids: Iterable[str] = (), *, everything: bool = False
    ) -> None: ...

    def prime(self) -> None: ...


class Snapshot:
    def __init__(self, store: PlurStore) -> None:
        self.store = store
        self.engrams: dict[str, Record] = {}
        self.tensions: dict[str, Record] = {}
        self.held: dict[str, Record] = {}  # .git/plur-held.json: shown, never decided on, never written
        self.held_problem: str | None = None
        self.followers: list[Follower] = []

    def reindex(self) -> None:
        # an entry not parsed has no key; each key is read once (a property over 4,000-50,000 entries)
        keyed = [(e, key) for e in self.store.engrams.entries if e.value is not None and (key := e.key)]
        counts: dict[str, int] = {}
        for _entry, key in keyed:
            counts[key] = counts.get(key, 0) + 1
        self.engrams = {key: e.value for e, key in keyed if e.valid and counts[key] == 1}  # type: ignore[misc]
        self.engrams.update(self._shared_ids(keyed, counts))
        self.tensions = {e.key: e.value for e in self.store.tensions.entries if e.valid and e.key}  # type: ignore[misc]
        self._read_held()
        for follower in self.followers:
            follower.note(everything=True)  # records replaced wholesale: the queue compares them by identity
            follower.prime()  # here, on the loading thread, not on the window's next read

    def _shared_ids(self, keyed: list[tuple[Entry, str]], counts: dict[str, int]) -> dict[str, Record]:
        """Engrams sharing an id, as PLUR 0.21 reads them (domain/rekey): the first copy under the id, a later,
        different one under its fresh id (a copy, renamed), an exact repeat once. Decisions on either are written
        by store/entry_lookup so that 0.20 and 0.21 read them back as shown."""
        groups: dict[str, list[Entry]] = {}
        for entry, key in keyed:
            if counts[key] > 1:
                groups.setdefault(key, []).append(entry)
        out: dict[str, Record] = {}
        taken = set(counts) if groups else set()  # (the shared id among them changes nothing: it is repeated)
        for key, group in groups.items():
            if not all(e.valid for e in group):
                continue  # a quarantined copy: check and the invalid list say so; no decision on either
            for found in resolve_duplicate_ids([(key, e.value) for e in group], taken):  # type: ignore[misc]
                if found.exact_duplicate_of is None:
                    value = group[found.index].value
                    assert isinstance(value, dict)
                    out[found.engram_id] = value if found.renamed_from is None else {**value, "id": found.engram_id}
        return out

    def _read_held(self) -> None:
        """The scope:local engrams an interrupted PLUR 0.21 sync parked in .git/plur-held.json, as its readers fold
        them in (store/team/held.py): PLUR counts them as part of the store until its next write puts them back."""
        self.held, self.held_problem = {}, None
        try:
            held = read_held(self.store.root)
        except ValueError as exc:
            self.held_problem = f"{exc}; PLUR 0.21 refuses to sync until it is repaired (it holds never-pushed engrams)"
            return
        if held:
            wanted = {str(r.get("id")) for r in held if isinstance(r, dict)}
            prefixes = tuple(f"{i}-D" for i in wanted)
            wanted |= {i for i in self.engrams if i.startswith(prefixes)}  # restored under a fresh id already
            # only those records are compared by content (a canonical JSON each); the other ids are just taken
            current: list[Record] = [self.engrams[i] if i in wanted else {"id": i} for i in self.engrams]
            merged = merge_held(current, held)
            self.held = {str(e.get("id")): e for e in merged.engrams}

    def changed(self, engram_ids: Iterable[str], tension_ids: Iterable[str]) -> None:
        """After our own write: the followers re-derive these now, on the thread that wrote (the serial runner in
        the window), so the window's next read finds the work done."""
        for follower in self.followers:
            follower.note(engram_ids, tension_ids)
            follower.prime()

    def lookup(self, engram_id: str) -> Record | None:
        """An engram for an action: while the load is still parsing, one not parsed yet is parsed now, so an action
        during the load sees what it would see after it."""
        found = self.engrams.get(engram_id)
        snapshot = self.store.engrams
        if found is None and not snapshot.all_parsed:
            entries = snapshot.by_key().get(engram_id, [])
            snapshot.parse_entries(entries)
            if len(entries) == 1 and entries[0].valid and isinstance(entries[0].value, dict):
                found = self.engrams[engram_id] = entries[0].value
        return found

    def view(self, engram_id: str) -> EngramView | None:
        found = self.lookup(engram_id)
        return EngramView(found) if found is not None else None

    def check_known(self, engram_id: str) -> None:
        """Refuse, with the reason, an id the session cannot act on (quarantined, duplicated, gone)."""
        if self.lookup(engram_id) is not None:  # parsed now if the load has not reached it yet
            return
        snapshot = self.store.engrams
        entries = [e for e in snapshot.entries if e.key == engram_id]
        if len(entries) > 1:
            lines = ", ".join(str(snapshot.line(e)) for e in entries)
            raise ActionRefused(
                f"{engram_id} appears {len(entries)} times in engrams.yaml (lines {lines}); fix that first"
            )
        if entries:
            reason = entries[0].syntax_error or "; ".join(entries[0].problems) or "listed more than once"
            raise ActionRefused(
                f"{engram_id} at line {snapshot.line(entries[0])} is an entry PLUR quarantines ({reason}); "
                "fix it by hand first"
            )
        if engram_id in self.held:
            raise ActionRefused(
                f"{engram_id} is held by an interrupted PLUR sync (.git/plur-held.json): read-only here until "
                "PLUR's next write puts it back into engrams.yaml"
            )
        raise ActionRefused(f"{engram_id} is not in the store")

    def take(self, patches: list[Patch], results: tuple[WriteResult, ...]) -> None:
        """After our own write: the records it wrote replace ours (everything is re-read when PLUR had rewritten
        a file meanwhile)."""
        if any(r.reloaded for r in results):
            self.reindex()
            return
        for patch in patches:
            index = self.engrams if patch.file == "engrams" else self.tensions
            for result in results:
                if patch.key in result.after:
                    index[patch.key] = result.after[patch.key]

    def digests(self, ids: Iterable[str] | None = None) -> dict[str, tuple[str, Record]]:
        """(content digest, record) of every engram shown, or of those of `ids` that are: the digest of its block as
        stored (PLUR's layout), else of its value. What the search index compares to know what to re-index."""
        snapshot = self.store.engrams
        if ids is None:
            entries = [e for e in snapshot.entries if e.key is not None]
        else:
            by_key = snapshot.by_key()
            entries = [e for i in set(ids) for e in by_key.get(i, [])]
        out: dict[str, tuple[str, Record]] = {}
        for entry in entries:
            key = entry.key
            value = self.engrams.get(key) if key else None
            if key is None or value is None or key in out:
                continue  # a repeated id is the first copy's (later copies: below)
            if snapshot.regular:
                digest = digest_of(snapshot.block(entry)).hex()
            else:
                digest = hashlib.blake2b(
                    json.dumps(value, sort_keys=True, default=str).encode(), digest_size=16
                ).hexdigest()
            out[key] = (digest, value)
        for key in self.engrams.keys() if ids is None else set(ids):
            value = self.engrams.get(key)
            if value is not None and key not in out:  # a later copy of a shared id, shown under its 0.21 id
                out[key] = (hashlib.blake2b(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest(), value)
        return out

    def invalid_entries(self) -> list[tuple[str, int, str]]:
        out = []
        for snapshot in (self.store.engrams, self.store.tensions):
            for entry in snapshot.entries:
                if not entry.valid:
                    reason, line = entry.syntax_error or "; ".join(entry.problems), snapshot.line(entry)
                    out.append((f"{snapshot.path.name}:{line}", line, f"{entry.key or '(no id)'}: {reason}"))
        return out


def differing(old: dict[str, Record], new: dict[str, Record]) -> frozenset[str]:
    keys = set(old) | set(new)
    return frozenset(k for k in keys if old.get(k) is not new.get(k) and old.get(k) != new.get(k))
