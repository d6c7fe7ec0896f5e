"""One of PLUR's list files (`engrams.yaml`, `tensions.yaml`) read as byte blocks, one per entry.

js-yaml writes every entry as a run of lines starting with `  - ` (engrams) or `- ` (tensions) at a fixed
column, every other line of the entry deeper. Cutting the file there is a byte scan; each block is parsed on its
own (fast parser, libyaml fallback) and cached by content digest, and a write replaces only the blocks it
changes, so every other byte of the file stays identical. A file in any other layout is read whole with libyaml
("irregular"); writing it is a full js-yaml-identical rewrite.
"""

from __future__ import annotations

import copy
import hashlib
import os
import re
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from plur_desk.store.file_hash import FileHash
from plur_desk.store.file_identity import FileIdentity
from plur_desk.store.lists.entry_positions import Positions
from plur_desk.store.lists.known_split import KnownSplit
from plur_desk.store.lists.shared_values import Shared, share_nested
from plur_desk.store.lists.yaml_load import (
    UnsupportedYaml,
    YamlSyntaxError,
    check_parse_safety,
    js_yaml_loader,
    load_general,
    parse_item,
)
from plur_desk.store.lists.yaml_types import resolve_plain
from plur_desk.store.safe_open import NotRegularFile, read_regular, special_file_problem
from plur_desk.store.scan import search_in_pieces


@dataclass(frozen=True)
class Layout:
    """How one kind of list file (engrams or tensions) is laid out, as PLUR writes it."""

    kind: str  # "engrams" | "tensions"
    header: bytes  # bytes before the first entry in a regular file
    empty: bytes  # the whole file of an empty list, as PLUR writes it
    item_indent: int
    marker: re.Pattern[bytes]  # a line feed followed by the start of an entry
    bad_line: re.Pattern[bytes]  # a line feed and a line that cannot be in a regular file (reads 5 bytes at most)
    draft_probe: bytes  # bytes that appear in a draft's block


ENGRAMS = Layout(
    kind="engrams",
    header=b"engrams:\n",
    empty=b"engrams: []\n",
    item_indent=2,
    marker=re.compile(rb"\n  - "),
    bad_line=re.compile(rb"\n(?!  - |    |\n)"),
    draft_probe=b"\n    commitment: draft\n",
)
TENSIONS = Layout(
    kind="tensions",
    header=b"",
    empty=b"[]\n",
    item_indent=0,
    marker=re.compile(rb"\n- "),
    bad_line=re.compile(rb"\n(?!- |  |\n)"),
    draft_probe=b"",
)


@dataclass(slots=True)
class Entry:
    """One list entry. `value` is None until parsed or when its YAML is broken (`syntax_error`).

    Where it is (its bytes, its line) is the snapshot's to say: `ListFile.span`, `ListFile.line`. An entry a write
    did not replace is shared by the snapshots before and after it, at offsets that differ."""

    index: int
    value: object = None
    parsed: bool = False
    syntax_error: str | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def key(self) -> str | None:
        if isinstance(self.value, dict):
            ident = self.value.get("id")
            return ident if isinstance(ident, str) else None
        return None

    @property
    def valid(self) -> bool:
        return self.parsed and self.syntax_error is None and not self.problems


class BlockCache:
    """Parsed blocks by content digest (derived data: loaded from and saved to the platformdirs cache), and how
    the file was split when they were saved (`split`: a file with the same bytes is not split again)."""

    def __init__(self, entries: dict[bytes, object] | None = None, split: KnownSplit | None = None) -> None:
        self.entries: dict[bytes, object] = entries or {}
        self.dirty = False
        self.saved: frozenset[bytes] = frozenset()  # the digests a table file of these blocks holds (tensions)
        self.split = split

    def get(self, digest: bytes) -> object | None:
        return self.entries.get(digest)

    def put(self, digest: bytes, value: object) -> None:
        self.entries[digest] = value
        self.dirty = True


# An unquoted YAML timestamp is a whole plain scalar, so it starts after whitespace, a line start or a flow indicator
# (`key: 2026-…`, `- 2026-…`, `[2026-…`, `, 2026-…`); a quoted one follows a quote. Blocks without a match skip the
# (costly) search for timestamps; a match, even inside a statement's text, only means the search is done.
# A line start is the start of the block or a line feed (whitespace): the search is in two patterns because a leading
# alternation (`(?:^|[…])`) makes the regex engine try the whole pattern at every byte (2.4x slower).
_DATE_AFTER = re.compile(rb"[\s\[{,][0-9]{4}-[0-9]")
_DATE_FIRST = re.compile(rb"[0-9]{4}-[0-9]")


def may_hold_dates(block: bytes) -> bool:
    """False when no plain scalar of `block` can be a timestamp (the validator then skips looking for one)."""
    return _DATE_AFTER.search(block) is not None or _DATE_FIRST.match(block) is not None


# The first line of a block as PLUR writes it: `  - id: ENG-…` with a plain id. Read from the bytes, it gives the
# key of an entry that is not parsed yet (an id js-yaml would type as anything but a string never matches).
_ID_LINE = re.compile(rb" *- id: ([A-Za-z][A-Za-z0-9_-]*)\n")


# PLUR has no length limit, but its statements are sentences: a block is a few KiB. A block above 16 MiB is refused unparsed
# (parsing a 1 GiB entry took minutes and gigabytes), the rest of the file stays readable.
MAX_ENTRY_BYTES = 16 << 20
MAX_IRREGULAR_BYTES = 64 << 20
_ID_PROBE = re.compile(rb"^\s*-?\s*id: ['\"]?([A-Za-z0-9_.:-]{1,80})", re.M)


def _oversized(entry: Entry, data: bytes, start: int, end: int) -> None:
    found = _ID_PROBE.search(data, start, min(end, start + 4096))
    entry.value = {"id": found.group(1).decode("ascii")} if found else None
    entry.problems = [
        f"the entry is {end - start} bytes, above plur_desk's limit of {MAX_ENTRY_BYTES} bytes per entry; it was not read"
    ]
    entry.parsed = True  # last: another thread holding a snapshot that shares the entry sees it whole


def _yaml_reason(exc: YamlSyntaxError, where: str = "") -> str:
    if isinstance(exc, UnsupportedYaml):
        return f"{where.strip()}{': ' if where else ''}{exc}; the store is open read-only, so nothing is rewritten"
    return f"YAML error{where}: {exc}; PLUR cannot read this file either"


def digest_of(block: bytes) -> bytes:
    return hashlib.blake2b(block, digest_size=16).digest()


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


class ListFile:
    """A parsed snapshot of one list file. `fatal` says why PLUR would refuse the whole file (then read-only)."""

    def __init__(self, path: Path, layout: Layout, data: bytes, identity: FileIdentity | None) -> None:
        self.path, self.layout, self.data, self.identity = path, layout, data, identity
        self.exists = identity is not None
        self.fatal: str | None = None
        self.fatal_line: int | None = None
        self.regular = True
        self.entries: list[Entry] = []
        self.positions: Positions | None = None  # a regular file's entries: where each starts, its line
        self.item_lines: list[int] = []  # an irregular file's entries: the line of each
        self.extra_top_level: dict[str, object] = {}
        self._by_key: dict[str, list[Entry]] | None = None
        self._parsed_upto = 0  # every entry before this index is parsed (parsing only ever goes one way)
        self._drafts: tuple[bytes, array[int]] | None = None  # (of these bytes) the drafts' indices, when known
        self._hash: FileHash | None = None
        self._sha256: str | None = None

    def span(self, entry: Entry) -> tuple[int, int]:
        """The entry's bytes in `data`: start and end offsets; (-1, -1) in a file not in PLUR's own layout."""
        return self.positions.span(entry.index) if self.positions is not None else (-1, -1)

    def line(self, entry: Entry) -> int:
        """The line the entry starts on (1-based; 0 when unknown)."""
        if self.positions is not None:
            return self.positions.line(entry.index)
        return self.item_lines[entry.index] if entry.index < len(self.item_lines) else 0

    def sha256(self) -> str:
        """The whole file's SHA-256 (hex), once per snapshot; asked first, hashed in one call (see known_split)."""
        if self._sha256 is None:
            self._sha256 = self._hash.hexdigest if self._hash is not None else hashlib.sha256(self.data).hexdigest()
        return self._sha256

    def file_hash(self) -> FileHash:
        if self._hash is None:
            self._hash = FileHash.of(self.data)
        return self._hash

    def by_key(self) -> dict[str, list[Entry]]:
        """Entries by id (a list, since a hand-edited file can repeat an id); built once per snapshot.

        An entry not parsed yet is indexed by the id on its first line; one whose first line is not PLUR's plain
        `- id: …` is parsed now. So the index is complete before the whole file is parsed (a write during the
        load finds every entry with that id, and refuses a duplicate, exactly as after it)."""
        if self._by_key is None:
            index: dict[str, list[Entry]] = {}
            data, positions = self.data, self.positions
            for entry in self.entries:
                key: object = None
                if not entry.parsed and positions is not None:
                    match = _ID_LINE.match(data, *positions.span(entry.index))
                    text = match.group(1).decode("ascii") if match is not None else ""
                    if text and isinstance(resolve_plain(text), str):  # not `true`, `null`, …
                        key = text
                    else:
                        self.parse_entries([entry])
                if key is None:
                    value = entry.value
                    key = value.get("id") if isinstance(value, dict) else None
                if isinstance(key, str):
                    index.setdefault(key, []).append(entry)
            self._by_key = index
        return self._by_key

    @property
    def all_parsed(self) -> bool:
        """Walks on from the first entry not known to be parsed: O(entries) once per snapshot, not per call."""
        entries, upto = self.entries, self._parsed_upto
        count = len(entries)
        while upto < count and entries[upto].parsed:
            upto += 1
        self._parsed_upto = upto
        return upto == count

    def check_encoding(self) -> None:
        """Before writing a file not fully parsed yet: bytes that are not UTF-8 anywhere make it unreadable to
        PLUR (a parse finds this per entry; this finds it without parsing). Sets `fatal`."""
        if self.fatal is None and not getattr(self, "_utf8_checked", False):
            try:
                self.data.decode("utf-8")
            except UnicodeDecodeError as exc:
                self._refuse(f"invalid UTF-8 at byte {exc.start}", _line_of(self.data, exc.start))
            self._utf8_checked = True

    # -- reading -------------------------------------------------------------------------------------------

    @classmethod
    def read(
        cls,
        path: Path,
        layout: Layout,
        validate: Callable[[object], list[str]],
        cache: BlockCache | None = None,
        *,
        parse: bool = True,
        read: Callable[[Path], tuple[bytes, os.stat_result]] = read_regular,  # the file's bytes and stat
    ) -> ListFile:
        try:
            data, st = read(path)
            identity: FileIdentity | None = FileIdentity.of(st)
        except FileNotFoundError:
            data, identity = b"", None
            problem = special_file_problem(path)  # a dangling symbolic link
        except NotRegularFile as exc:
            data, identity, problem = b"", None, str(exc)
        except OSError as exc:
            data, identity, problem = b"", None, f"{path.name} cannot be read: {exc.strerror}"
        snapshot = cls(path, layout, data, identity)
        snapshot._validate, snapshot._cache = validate, cache  # type: ignore[attr-defined]
        if identity is None:
            if problem:
                snapshot._refuse(problem)
            return snapshot
        snapshot._split()
        if parse and snapshot.fatal is None:
            snapshot.parse_all()
        return snapshot

    def _refuse(self, reason: str, line: int | None = None) -> None:
        self.fatal, self.fatal_line = reason, line

    def _split(self) -> None:
        data = self.data
        if not data:
            self._refuse("the file is empty (0 bytes); PLUR refuses an empty store file")
            return
        layout = self.layout
        if data == layout.empty:
            return
        if not data.endswith(b"\n"):
            self._refuse(
                f"{self.path.name} does not end with a newline: it looks cut short (PLUR always writes one)",
                data.count(b"\n") + 1,
            )
            return
        cache: BlockCache | None = getattr(self, "_cache", None)
        known = cache.split if cache is not None else None
        if known is not None and self.identity is not None and known.matches(self.identity, self.sha256):
            self._split_known(known)
            return
        if (
            data.startswith(layout.header)
            and data.startswith(b"  - " if layout.item_indent else b"- ", len(layout.header))
            and data.endswith(b"\n")
            and search_in_pieces(layout.bad_line, data, max(0, len(layout.header) - 1), len(data) - 1, reach=8) is None
            and b"\r" not in data
        ):
            self._split_regular()  # UTF-8 is checked block by block as they are decoded
            if cache is not None:
                cache.dirty = True  # saved with this split, so the next open of these bytes skips it
            return
        self.regular = False
        if len(data) > MAX_IRREGULAR_BYTES:
            self._refuse(
                f"{self.path.name} is not in PLUR's own layout and is {len(data)} bytes; plur_desk reads such a file "
                f"whole only up to {MAX_IRREGULAR_BYTES} bytes. Let PLUR rewrite it once."
            )
            return
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            self._refuse(f"invalid UTF-8 at byte {exc.start}", _line_of(data, exc.start))
            return
        self._read_irregular(text)

    def _split_regular(self) -> None:
        data = self.data
        header = len(self.layout.header)
        starts = [header] + [m.start() + 1 for m in self.layout.marker.finditer(data, header)]
        line = _line_of(data, starts[0])
        prev = starts[0]
        lines = []
        for start in starts:
            line += data.count(b"\n", prev, start)
            prev = start
            lines.append(line)
        self.positions = Positions.of(starts, lines, len(data))
        self.entries = [Entry(index) for index in range(len(starts))]

    def _split_known(self, known: KnownSplit) -> None:
        """The entries of a file byte for byte the same as one split before: the same places and lines."""
        self.positions = Positions(known.starts, known.lines, len(self.data))
        self.entries = list(map(Entry, range(len(known.starts))))
        self._drafts = (self.data, known.drafts)

    def _read_irregular(self, text: str) -> None:
        try:
            check_parse_safety(text)
        except YamlSyntaxError as exc:
            self._refuse(_yaml_reason(exc), exc.line)
            return
        try:
            loader = js_yaml_loader()(text)
            try:
                node = loader.get_single_node()
                doc = loader.construct_document(node) if node is not None else None
            finally:
                loader.dispose()
        except Exception:
            node = None
            try:
                doc = load_general(text)
            except YamlSyntaxError as exc:
                self._refuse(_yaml_reason(exc), exc.line)
                return
        items = self._top_level_items(doc)
        if items is None:
            return
        item_nodes = self._item_nodes(node)
        for index, value in enumerate(items):
            self.item_lines.append(item_nodes[index].start_mark.line + 1 if index < len(item_nodes) else 0)
            problems = self._validate(value, dates=True)  # type: ignore[attr-defined]
            self.entries.append(Entry(index=index, value=value, parsed=True, problems=problems))

    def _item_nodes(self, node: object) -> list:  # type: ignore[type-arg]
        import yaml

        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if key.value == "engrams" and isinstance(value, yaml.SequenceNode):
                    return list(value.value)
            return []
        if isinstance(node, yaml.SequenceNode):
            return list(node.value)
        return []

    def _top_level_items(self, doc: object) -> list[object] | None:
        name = self.path.name
        if doc is None:
            self._refuse(f"{name} parses to null; PLUR refuses it")
            return None
        if self.layout.kind == "tensions":
            if not isinstance(doc, list):
                self._refuse(f"the top level of {name} is a {type(doc).__name__}, not a list; PLUR refuses it")
                return None
            return doc
        if not isinstance(doc, dict):
            self._refuse(f"the top level of {name} is a {type(doc).__name__}, not a mapping; PLUR refuses it")
            return None
        if "engrams" not in doc:
            self._refuse(f"{name} has no 'engrams' key; PLUR refuses it")
            return None
        engrams = doc["engrams"]
        if not isinstance(engrams, list):
            shown = "null" if engrams is None else type(engrams).__name__
            self._refuse(f"'engrams' is {shown}, not a list; PLUR refuses it")
            return None
        self.extra_top_level = {k: v for k, v in doc.items() if k != "engrams"}
        return engrams

    def block(self, entry: Entry) -> bytes:
        start, end = self.span(entry)
        return self.data[start:end]

    def parse_entries(self, entries: Iterable[Entry]) -> int:
        """Parse those not parsed yet (entries of this snapshot); returns how many were. An entry's `parsed` is set
        last, so a thread reading another snapshot that shares it never sees it half done."""
        validate = self._validate  # type: ignore[attr-defined]
        cache: BlockCache | None = self._cache  # type: ignore[attr-defined]
        indent = self.layout.item_indent
        data, positions = self.data, self.positions
        count = 0
        shared: Shared = {}  # what this call's entries repeat, one object each (store/lists/shared_values.py)
        for entry in entries:
            if entry.parsed or positions is None:
                continue
            count += 1
            start, end = positions.span(entry.index)
            if end - start > MAX_ENTRY_BYTES:
                _oversized(entry, data, start, end)
                continue
            raw = data[start:end]
            digest = digest_of(raw) if cache is not None else b""
            cached = cache.get(digest) if cache is not None else None
            if cached is not None:
                entry.value = cached  # only valid entries are cached: no need to validate again
                entry.parsed = True
                continue
            try:
                entry.value = share_nested(parse_item(raw.decode("utf-8"), indent), shared)
            except UnicodeDecodeError as exc:
                entry.syntax_error = f"invalid UTF-8 at byte {start + exc.start}"
                if self.fatal is None:
                    self._refuse(entry.syntax_error, _line_of(data, start + exc.start))
            except YamlSyntaxError as exc:
                entry.syntax_error = str(exc)
                line = positions.line(entry.index)
                if self.fatal is None:
                    self._refuse(
                        _yaml_reason(exc, f" in the entry at line {line}"),
                        line + (exc.line - 1 if exc.line else 0),
                    )
            if entry.syntax_error is None:
                entry.problems = validate(entry.value, dates=may_hold_dates(raw))
                if cache is not None and not entry.problems:
                    cache.put(digest, entry.value)  # a block with an unquoted timestamp has a problem: never cached
            entry.parsed = True
        return count

    def parse_all(self) -> None:
        if self.parse_entries(self.entries):
            self._by_key = None  # rebuilt from the parsed values (it was read from the first lines)

    def unparsed_spans(self) -> list[tuple[int, int]]:
        positions = self.positions
        if positions is None:
            return []
        return [positions.span(e.index) for e in self.entries if not e.parsed]

    def draft_entries(self) -> list[Entry]:
        """Entries whose bytes say `commitment: draft` (a cheap scan; confirmed when parsed)."""
        if self._drafts is not None and self._drafts[0] is self.data:  # not a copy describing other bytes
            return [self.entries[index] for index in self._drafts[1]]
        return self.scan_drafts()

    def scan_drafts(self) -> list[Entry]:
        if self.positions is None:
            return []
        probe = self.layout.draft_probe
        data = self.data
        found = []
        for entry, (start, end) in zip(self.entries, self.positions.spans(), strict=True):
            if end - start > MAX_ENTRY_BYTES:
                continue  # an oversized entry is not parsed at all, so not probed either
            if data.find(probe, start, end + 1) != -1:
                found.append(entry)
        return found

    def replaced(self, replacements: dict[int, tuple[bytes, dict[str, object]]], data: bytes) -> ListFile:
        """The snapshot of `data`, this file with the entries at `replacements`' indices replaced by (block, value)
        (the byte-exact splice of the write path). This snapshot is left as it was: another thread (search) may be
        reading it. Entries not replaced, the arrays of positions and the lists of the id index are shared, so a
        write costs O(replaced entries + shift points), not O(entries)."""
        new = copy.copy(self)
        new.data, new.entries, new._hash, new._sha256 = data, list(self.entries), None, None
        changes = []
        for index in sorted(replacements):
            block, value = replacements[index]
            new.entries[index] = Entry(index, value, parsed=True)
            if self.positions is not None:
                start, end = self.positions.span(index)
                lines = block.count(b"\n") - self.data.count(b"\n", start, end)
                changes.append((index, len(block) - (end - start), lines))
        if self.positions is not None:
            new.positions = self.positions.moved(changes, len(data))
        renamed = any(self.entries[i].key not in (None, v.get("id")) for i, (_b, v) in replacements.items())
        if renamed:  # PLUR 0.21's rename of a later copy of a shared id (store/entry_lookup): indexed again lazily
            new._by_key = None
        elif self._by_key is not None:  # ids do not change: only the lists holding a replaced entry are new
            by_key = new._by_key = dict(self._by_key)
            for index in replacements:
                key = self.entries[index].key or replacements[index][1].get("id")
                if isinstance(key, str) and key in by_key:
                    by_key[key] = [new.entries[e.index] for e in by_key[key]]
        return new
