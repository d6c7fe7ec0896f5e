"""PLUR's hash-chained history (newer than 0.20): canonical bytes, hash, and the chain mode of a store.

Canonical bytes = JSON.stringify of the event without top-level hash/signature/signer, keys sorted as JavaScript
rebuilds objects (array-index keys first in numeric order, then UTF-16 order; `__proto__` dropped), numbers in
JavaScript form, strings escaped as JSON.stringify does. See shared/PLUR-HISTORY-CHAIN.md §1.1.
"""

from __future__ import annotations

import hashlib
import json
import json.encoder
import math
import os
import re
import stat
from collections.abc import Callable
from enum import Enum
from pathlib import Path

from plur_desk.infra.json_pieces import long_list_within, string_keys
from plur_desk.store.lists.yaml_types import MAX_SAFE_INT, is_array_index, js_number_to_string
from plur_desk.store.safe_open import open_regular

_EXCLUDED = ("hash", "signature", "signer")
_SHORT = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", '"': '\\"', "\\": "\\\\"}


_ascii_json: Callable[[str], str] = json.encoder.encode_basestring_ascii
_NEEDS_ESCAPE = re.compile('[\x00-\x1f"\\\\\ud800-\udfff]')


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    return _SHORT.get(ch) or f"\\u{ord(ch):04x}"


def _js_string(text: str) -> str:
    """JSON.stringify of a string: `"` and `\\` escaped, short escapes, other C0 controls and lone surrogates
    as lowercase \\u00XX; everything else raw. ASCII without DEL (most strings) is escaped by the json module's
    C encoder, which escapes exactly these (its pattern search cost ~5 us a string: a tenth of a bulk's signing)."""
    if text.isascii() and "\x7f" not in text:
        return _ascii_json(text)
    return '"' + _NEEDS_ESCAPE.sub(_escape, text) + '"'


def _sort_key(key: str) -> tuple[int, int, bytes]:
    if is_array_index(key):
        return (0, int(key), b"")
    return (1, 0, key.encode("utf-16-be", "surrogatepass"))


class _NotPlain(Exception):
    """A number the json module may not write as JavaScript does."""


def _plain_int(text: str) -> int:
    number = int(text)
    if abs(number) > MAX_SAFE_INT:  # JavaScript writes it as the float it rounds to
        raise _NotPlain
    return number


def _plain_float(text: str) -> float:
    """A float as `repr` writes it, when JavaScript writes it the same: without an exponent (repr's fixed notation,
    1e-4 <= |x| < 1e16, is JavaScript's too, with the same shortest digits) and not integral (JavaScript drops
    the `.0`)."""
    if "e" in text or "E" in text or text.endswith(".0"):
        raise _NotPlain
    return float(text)


def _not_plain(_text: str) -> object:
    raise _NotPlain


_C_WRITE = json.encoder.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
_C_WRITE_SORTED = json.encoder.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, sort_keys=True
).encode
# what the json module writes otherwise than JSON.stringify with PLUR's key order: a lone surrogate (written raw),
# a key that may be an array index (ordered first, by number), `__proto__` (dropped) and, when both kinds of
# character are present, the order of U+E000..U+FFFF against characters beyond U+FFFF (UTF-16 order)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_INDEX_KEY = re.compile('"[0-9]+":')  # a literal first character: searched for, not tested at every one
_HIGH_BMP = re.compile("[\ue000-\uffff]")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def _c_stringify(value: object, sort: bool) -> str | None:
    """What `js_stringify` returns, written by the json module's C encoder, or None when that cannot be shown to be
    the same (then the pure-Python writer below decides). Same means: read back, the text is equal to `value` (so
    every key was a string), every number is written as JavaScript writes it, and none of the cases above."""
    try:
        text = (_C_WRITE_SORTED if sort else _C_WRITE)(value)
        if sort and ('"__proto__":' in text or _INDEX_KEY.search(text)):
            return None
        if not text.isascii() and (
            _LONE_SURROGATE.search(text) or (sort and _HIGH_BMP.search(text) and _ASTRAL.search(text))
        ):
            return None
        if json.loads(text, parse_int=_plain_int, parse_float=_plain_float, parse_constant=_not_plain) != value:
            return None
    except (_NotPlain, ValueError, TypeError, RecursionError):
        return None
    return text


LONG_TEXT = 4096  # characters


def _long_text_near_top(value: dict[object, object] | list[object]) -> bool:
    """Whether a string longer than LONG_TEXT sits in the value's first two levels (a watched baseline line packs
    ~600 KB into one): the pure-Python writer hands it to the json module's C escaper once, where the C path would
    write, read back and compare it (1.4 ms against 2.2 ms a line)."""
    for item in value.values() if isinstance(value, dict) else value:
        if isinstance(item, str):
            if len(item) > LONG_TEXT:
                return True
        elif isinstance(item, (dict, list)):
            for inner in item.values() if isinstance(item, dict) else item:
                if isinstance(inner, str) and len(inner) > LONG_TEXT:
                    return True
    return False


def js_stringify(value: object, *, sort: bool = False) -> str:
    """JSON.stringify(value) without spacing; with sort=True, keys in canonical (sortKeysDeep) order. A dict or
    list goes through the json module's C encoder when its text is shown to be the same (`_c_stringify`: about
    ten times faster; a bulk approve of 500 signs, chains and writes ~1,500 of them). A value holding a long list
    is written a piece at a time, the same text (infra/json_pieces.py: one C call over a journal record of 500
    drafts held the interpreter lock ~10 ms)."""
    if isinstance(value, (dict, list)):
        if long_list_within(value) and (isinstance(value, list) or string_keys(value)):
            return _js_in_pieces(value, sort)
        if not _long_text_near_top(value):
            text = _c_stringify(value, sort)
            if text is not None:
                return text
    return _js_stringify(value, sort)


def _js_in_pieces(value: dict[object, object] | list[object], sort: bool) -> str:
    """`_js_stringify`'s text, each item written by `js_stringify` (a piece at a time, through the C encoder where
    it can be)."""
    if isinstance(value, list):
        return "[" + ",".join(js_stringify(v, sort=sort) for v in value) + "]"
    keys = [str(k) for k in value if k != "__proto__"] if sort else [str(k) for k in value]  # (all str: pieces)
    if sort:
        keys.sort(key=_sort_key)
    return "{" + ",".join(_js_string(k) + ":" + js_stringify(value[k], sort=sort) for k in keys) + "}"


def _js_stringify(value: object, sort: bool) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return js_number_to_string(value)
    if isinstance(value, float):
        return js_number_to_string(value) if math.isfinite(value) else "null"
    if isinstance(value, str):
        return _js_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_js_stringify(v, sort) for v in value) + "]"
    if isinstance(value, dict):
        keys = [k for k in value if k != "__proto__"] if sort else list(value)
        if sort:
            keys.sort(key=_sort_key)
        return "{" + ",".join(_js_string(k) + ":" + _js_stringify(value[k], sort) for k in keys) + "}"
    raise TypeError(f"cannot serialise {type(value).__name__}")


def canonical_bytes(event: dict[str, object]) -> bytes:
    stripped = {k: v for k, v in event.items() if k not in _EXCLUDED}
    return js_stringify(stripped, sort=True).encode("utf-8", "surrogatepass")


def event_hash(event: dict[str, object]) -> str:
    return hashlib.sha256(canonical_bytes(event)).hexdigest()


class ChainMode(Enum):
    LEGACY = "legacy"  # PLUR 0.20: no hashes; we never start a chain
    CHAINED = "chained"  # the tail is hashed: append with prev/hash under history/chain.lock
    MIXED = "mixed"  # a chain exists but a non-chaining writer wrote last: chain with prev null (declared gap)


def last_line(path: Path) -> bytes | None:
    """The last non-empty line of a file, read from its end (8 KiB window doubling to the whole file)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    size = st.st_size
    if size == 0 or not stat.S_ISREG(st.st_mode):
        return None  # never open a FIFO or device: it would block
    window = 8192
    with open(path, "rb") as handle:
        while True:
            start = max(0, size - window)
            handle.seek(start)
            chunk = handle.read(size - start).rstrip(b"\n")
            cut = chunk.rfind(b"\n")
            if cut != -1 or start == 0:
                tail = chunk[cut + 1 :]
                return tail if tail.strip() else None
            window *= 2


def hash_of_line(line: bytes | None) -> str | None:
    if not line:
        return None
    try:
        event = json.loads(line)
    except (ValueError, RecursionError):
        return None
    value = event.get("hash") if isinstance(event, dict) else None
    return value if isinstance(value, str) and len(value) == 64 else None


def predecessor_line(history_dir: Path, month_file: Path) -> bytes | None:
    """Node's rule: the current month file's last line, else the newest other month file's last line."""
    line = last_line(month_file)
    if line is not None:
        return line
    others = sorted((p for p in history_dir.glob("*.jsonl") if p.name != month_file.name), reverse=True)
    return last_line(others[0]) if others else None


class HashScan:
    """Remembers how far each month file was searched for a `"hash":` key; only appended bytes are read again.

    Files are read in pieces of `SCAN_PIECE` bytes, so no single search holds the interpreter lock for long (a
    million-line history is ~200 MB), and opened without following a FIFO or device swapped in since the stat."""

    def __init__(self) -> None:
        self._scanned: dict[str, tuple[int, int, bool]] = {}  # name -> (inode, bytes scanned, found)

    def any_hash(self, history_dir: Path) -> bool:
        found_any = False
        for path in history_dir.glob("*.jsonl"):
            try:
                info = path.stat()
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode):
                continue
            inode, done, found = self._scanned.get(path.name, (info.st_ino, 0, False))
            if inode != info.st_ino or info.st_size < done:
                done, found = 0, False  # replaced or truncated: scan again
            if not found and info.st_size > done:
                try:
                    done, found = _scan(path, info, done)
                except OSError:
                    continue  # gone or replaced since the stat: looked at again next time
            self._scanned[path.name] = (info.st_ino, done, found)
            found_any = found_any or found
        return found_any


SCAN_PIECE = 1 << 22


def _scan(path: Path, info: os.stat_result, done: int) -> tuple[int, bool]:
    """From `done` to the size `info` gave, in pieces: (bytes of complete lines scanned, whether a hash was found).
    An unfinished last line is read again once complete."""
    fd, now = open_regular(path)  # NotRegularFile (an OSError) for a FIFO or device swapped in since the stat
    try:
        if now.st_ino != info.st_ino:
            raise FileNotFoundError(f"{path.name} was replaced")
        os.lseek(fd, done, os.SEEK_SET)
        remaining, carry = info.st_size - done, b""
        while remaining > 0:
            piece = os.read(fd, min(SCAN_PIECE, remaining))
            if not piece:
                break
            remaining -= len(piece)
            data = carry + piece
            cut = data.rfind(b"\n") + 1
            if _has_top_level_hash(data[:cut]):
                return done + cut, True
            done, carry = done + cut, data[cut:]
        return done, False
    finally:
        os.close(fd)


def _has_top_level_hash(data: bytes) -> bool:
    """Whether any complete line is an event with a top-level `hash` (a nested `data.hash`, which PLUR 0.20 writes
    in some events, is not a chain). Only lines that mention `"hash":` are parsed."""
    start = 0
    while True:
        at = data.find(b'"hash":', start)
        if at == -1:
            return False
        line_start = data.rfind(b"\n", 0, at) + 1
        line_end = data.find(b"\n", at)
        if line_end == -1:
            line_end = len(data)
        if hash_of_line(data[line_start:line_end]) is not None:
            return True
        start = line_end + 1


def detect_mode(history_dir: Path, month_file: Path, scan: HashScan | None = None) -> ChainMode:
    if hash_of_line(predecessor_line(history_dir, month_file)) is not None:
        return ChainMode.CHAINED
    if (history_dir / ".chain-head").exists() or (history_dir / "chain.lock").exists():
        return ChainMode.MIXED
    if (scan or HashScan()).any_hash(history_dir):
        return ChainMode.MIXED
    return ChainMode.LEGACY
