"""A byte-exact Python port of js-yaml 4.3's dumper, for the options PLUR uses.

PLUR dumps `engrams.yaml` with `{lineWidth: 120, noRefs: true, quotingType: '"'}` and `tensions.yaml` with
`{lineWidth: 120, noRefs: true}` (single quotes). Only the paths those options reach are ported: block style,
no anchors, no tags, no key sorting, compatibility quoting on. Widths are counted in UTF-16 code units, as
JavaScript strings are. Ported from js-yaml (MIT, (C) 2011-2015 Vitaly Puzrin) lib/dumper.js; tests compare
the output with the real js-yaml on random documents.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from plur_desk.store.lists.yaml_types import is_ambiguous, is_js_integer, js_key, js_key_order, js_number_to_string

_ESCAPES = {
    0x00: "\\0",
    0x07: "\\a",
    0x08: "\\b",
    0x09: "\\t",
    0x0A: "\\n",
    0x0B: "\\v",
    0x0C: "\\f",
    0x0D: "\\r",
    0x1B: "\\e",
    0x22: '\\"',
    0x5C: "\\\\",
    0x85: "\\N",
    0xA0: "\\_",
    0x2028: "\\L",
    0x2029: "\\P",
}
_DEPRECATED_BOOLEANS = frozenset(
    ["y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "n", "N", "no", "No", "NO", "off", "Off", "OFF"]
)
_BASE60 = re.compile(r"[-+]?[0-9_]+(?::[0-9_]+)+(?:\.[0-9_]*)?\Z")
_SCI_NO_DOT = re.compile(r"[-+]?[0-9]+e")
_BREAK = re.compile(r" [^ ]")
_LINES = re.compile(r"(\n+)([^\n]*)")

PLAIN, SINGLE, LITERAL, FOLDED, DOUBLE = 1, 2, 3, 4, 5
_BAD_FIRST = frozenset("-?:,[]{}#&*!|=>'\"%@`")
_FLOW_INDICATORS = frozenset(",[]{}")


def _printable(c: int) -> bool:
    return (
        0x20 <= c <= 0x7E
        or (0xA1 <= c <= 0xD7FF and c not in (0x2028, 0x2029))
        or (0xE000 <= c <= 0xFFFD and c != 0xFEFF)
        or 0x10000 <= c <= 0x10FFFF
    )


def _ns_char_or_white(c: int) -> bool:
    return _printable(c) and c not in (0xFEFF, 0x0D, 0x0A)


def _white(c: int | None) -> bool:
    return c in (0x20, 0x09)


def _plain_safe(c: int, prev: int | None, inblock: bool) -> bool:
    c_ns_or_white = _ns_char_or_white(c)
    c_ns = c_ns_or_white and not _white(c)
    safe = c_ns_or_white if inblock else c_ns_or_white and chr(c) not in _FLOW_INDICATORS
    return (
        (safe and c != 0x23 and not (prev == 0x3A and not c_ns))
        or (prev is not None and _ns_char_or_white(prev) and not _white(prev) and c == 0x23)
        or (prev == 0x3A and c_ns)
    )


def _plain_safe_first(c: int) -> bool:
    return _printable(c) and c != 0xFEFF and not _white(c) and chr(c) not in _BAD_FIRST


def _plain_safe_last(c: int) -> bool:
    return not _white(c) and c != 0x3A


def _u16len(text: str) -> int:
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def _choose_style(
    string: str, single_line_only: bool, line_width: int, ambiguous: Callable[[str], bool], double: bool, inblock: bool
) -> int:
    """js-yaml's chooseScalarStyle. A line of printable characters (most values, statements in any language) is
    decided without the per-character walk, which cost ~2 ms per engram: 1 s of a bulk approve of 500 (and, for a
    statement with one accented letter, ~0.3 ms each)."""
    if inblock and ((string.isascii() and string.isprintable()) or _PRINTABLE_LINE.fullmatch(string)):
        return _line_style(string, single_line_only, line_width, ambiguous, double)
    return _choose_style_by_char(string, single_line_only, line_width, ambiguous, double, inblock)


# a line of characters js-yaml calls printable, without the byte-order mark (a string of them needs no escape and
# has no line break); every other character goes through the walk
_PRINTABLE_LINE = re.compile("[\x20-\x7e\xa1-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]+")


def _line_style(
    string: str, single_line_only: bool, line_width: int, ambiguous: Callable[[str], bool], double: bool
) -> int:
    """The walk's answer for a non-empty line of printable characters (`_PRINTABLE_LINE`: no line break, nothing
    to escape): longer than the width (in UTF-16 units) it folds (quoted when it starts with a space); otherwise
    plain unless a character rule or an implicit type forbids it: the first character no indicator nor space, the
    last no space nor ':', no ': ' or ' #' inside (every other '#' follows a non-space; a character beyond ASCII is
    plain anywhere). In a block, where flow indicators are plain characters."""
    if not single_line_only and _u16len(string) > line_width:
        return FOLDED if string[0] != " " else (DOUBLE if double else SINGLE)
    plain = (
        string[0] not in _BAD_FIRST
        and string[0] != " "
        and string[-1] not in " :"
        and ": " not in string
        and " #" not in string
    )
    if plain and not ambiguous(string):
        return PLAIN
    return DOUBLE if double else SINGLE


def _choose_style_by_char(
    string: str, single_line_only: bool, line_width: int, ambiguous: Callable[[str], bool], double: bool, inblock: bool
) -> int:
    has_line_break = False
    has_foldable = False
    prev_break = -1  # UTF-16 index of the previous line feed
    plain = _plain_safe_first(ord(string[0])) and _plain_safe_last(ord(string[-1]))
    prev: int | None = None
    pos = 0  # UTF-16 index of the current character
    if single_line_only:
        for ch in string:
            c = ord(ch)
            if not _printable(c):
                return DOUBLE
            plain = plain and _plain_safe(c, prev, inblock)
            prev = c
    else:
        for idx, ch in enumerate(string):
            c = ord(ch)
            if c == 0x0A:
                has_line_break = True
                if not has_foldable and pos - prev_break - 1 > line_width:
                    has_foldable = _char_after_break(string, idx, prev_break) != " "
                prev_break = pos
            elif not _printable(c):
                return DOUBLE
            plain = plain and _plain_safe(c, prev, inblock)
            prev = c
            pos += 2 if c > 0xFFFF else 1
        if not has_foldable and pos - prev_break - 1 > line_width:
            has_foldable = _char_after_break(string, len(string), prev_break) != " "
    if not has_line_break and not has_foldable:
        if plain and not ambiguous(string):
            return PLAIN
        return DOUBLE if double else SINGLE
    return FOLDED if has_foldable else LITERAL


def _char_after_break(string: str, end_idx: int, prev_break_u16: int) -> str:
    """The character following the previous line feed (the first character of the line ending at end_idx)."""
    start = string.rfind("\n", 0, end_idx) + 1
    del prev_break_u16
    return string[start] if start < len(string) else ""


def _indent_string(string: str, spaces: int) -> str:
    ind = " " * spaces
    return "".join(ind + line if line and line != "\n" else line for line in string.splitlines(keepends=True))


def _block_header(string: str, indent_per_level: int) -> str:
    indicator = str(indent_per_level) if re.match(r"\n* ", string) else ""
    clip = string[-1] == "\n"
    keep = clip and (string[-2:-1] == "\n" or string == "\n")
    chomp = "+" if keep else ("" if clip else "-")
    return indicator + chomp + "\n"


def _drop_ending_newline(string: str) -> str:
    return string[:-1] if string.endswith("\n") else string


class _U16:
    """Maps Python indexes of one line to UTF-16 indexes (identity for BMP-only text)."""

    def __init__(self, line: str) -> None:
        self.line = line
        self.astral = None if all(ord(ch) <= 0xFFFF for ch in line) else [0]
        if self.astral is not None:
            count = 0
            for ch in line:
                count += 1 if ord(ch) > 0xFFFF else 0
                self.astral.append(count)

    def at(self, idx: int) -> int:
        return idx if self.astral is None else idx + self.astral[idx]


def _fold_line(line: str, width: int) -> str:
    if line == "" or line[0] == " ":
        return line
    u16 = _U16(line)
    start = end = curr = nxt = 0
    result = ""
    for match in _BREAK.finditer(line):
        nxt = match.start()
        if u16.at(nxt) - u16.at(start) > width:
            end = curr if curr > start else nxt
            result += "\n" + line[start:end]
            start = end + 1
        curr = nxt
    result += "\n"
    if u16.at(len(line)) - u16.at(start) > width and curr > start:
        result += line[start:curr] + "\n" + line[curr + 1 :]
    else:
        result += line[start:]
    return result[1:]


def _fold_string(string: str, width: int) -> str:
    first_lf = string.find("\n")
    first_lf = first_lf if first_lf != -1 else len(string)
    result = _fold_line(string[:first_lf], width)
    prev_more = string[0] in ("\n", " ")
    for match in _LINES.finditer(string, first_lf):
        prefix, line = match.group(1), match.group(2)
        more = line[:1] == " "
        result += prefix + ("\n" if (not prev_more and not more and line != "") else "") + _fold_line(line, width)
        prev_more = more
    return result


def _escape(string: str) -> str:
    out = []
    for ch in string:
        c = ord(ch)
        seq = _ESCAPES.get(c)
        if seq is None and _printable(c):
            out.append(ch)
        elif seq is not None:
            out.append(seq)
        elif c <= 0xFF:
            out.append(f"\\x{c:02X}")
        elif c <= 0xFFFF:
            out.append(f"\\u{c:04X}")
        else:
            out.append(f"\\U{c:08X}")
    return "".join(out)


def _number(value: int | float) -> str:
    if is_js_integer(value):
        return js_number_to_string(value)
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    if value == 0:
        return "-0.0"
    res = js_number_to_string(value)
    return res.replace("e", ".e", 1) if _SCI_NO_DOT.match(res) else res


SHORT_SCALAR = 64  # characters: a string this long or shorter is kept once dumped (Dumper.scalar)
SHORT_KEPT = 8192  # short strings kept per dumper before the table starts again


class Dumper:
    def __init__(self, *, double_quotes: bool, line_width: int = 120, indent: int = 2) -> None:
        self.double = double_quotes
        self.line_width = line_width
        self.indent = indent
        self._short: dict[tuple[str, int, bool, bool], str] = {}  # scalar() of short strings, as dumped

    def dump(self, value: object) -> str:
        return self.node(0, value, block=True, compact=True) + "\n"

    def node(self, level: int, obj: object, block: bool, compact: bool, iskey: bool = False) -> str:
        if obj is None:
            return "null"
        if obj is True:
            return "true"
        if obj is False:
            return "false"
        if isinstance(obj, (int, float)):
            return _number(obj)
        if isinstance(obj, dict):
            return self.mapping(level, obj, compact) if obj else "{}"
        if isinstance(obj, (list, tuple)):
            return self.sequence(level, obj, compact) if obj else "[]"
        if isinstance(obj, str):
            return self.scalar(obj, level, iskey, block)
        raise TypeError(f"cannot dump a value of type {type(obj).__name__}")

    def _newline(self, level: int) -> str:
        return "\n" + " " * (self.indent * level)

    def sequence(self, level: int, seq: list[object] | tuple[object, ...], compact: bool) -> str:
        parts: list[str] = []
        for value in seq:
            dumped = self.node(level + 1, value, block=True, compact=True)
            if not compact or parts:
                parts.append(self._newline(level))
            parts.append("-" if dumped.startswith("\n") else "- ")
            parts.append(dumped)
        return "".join(parts) or "[]"

    def mapping(self, level: int, mapping: dict[object, object], compact: bool) -> str:
        """A block mapping. Keys are strings here (js_key), and `node` of a string is `scalar` of it in a block:
        keys and string values go to `scalar` directly (an engram's ~30 pairs, 500 engrams a bulk approve)."""
        parts: list[str] = []
        keyed = {js_key(k): v for k, v in mapping.items()} if not all(type(k) is str for k in mapping) else mapping
        newline = self._newline(level)
        inner = level + 1
        scalar = self.scalar
        for key in js_key_order(keyed):  # type: ignore[arg-type]
            pair = newline if (not compact or parts) else ""
            key_dump = scalar(key, inner, True, True)
            explicit = len(key_dump) > 1024
            if explicit:
                pair += ("?" if key_dump.startswith("\n") else "? ") + key_dump + newline
            else:
                pair += key_dump
            value = keyed[key]
            if isinstance(value, str):
                value_dump = scalar(value, inner, False, True)
            else:
                value_dump = self.node(inner, value, block=True, compact=explicit)
            pair += (":" if value_dump.startswith("\n") else ": ") + value_dump
            parts.append(pair)
        return "".join(parts) or "{}"

    def scalar(self, string: str, level: int, iskey: bool, inblock: bool) -> str:
        """A string as js-yaml writes it. Short ones (keys, ids, dates, kinds: ~70 of an engram's ~80 scalars, the
        same in every engram) are kept as dumped: a bulk approve of 500 dumped 39,000 of them one character test at
        a time. The dumped form depends only on the arguments and this dumper's settings."""
        if len(string) > SHORT_SCALAR:
            return self._scalar(string, level, iskey, inblock)
        key = (string, level, iskey, inblock)
        found = self._short.get(key)
        if found is None:
            if len(self._short) >= SHORT_KEPT:
                self._short = {}  # a new table, not cleared in place: another thread may be reading the old one
            found = self._short[key] = self._scalar(string, level, iskey, inblock)
        return found

    def _scalar(self, string: str, level: int, iskey: bool, inblock: bool) -> str:
        quote = '"' if self.double else "'"
        if string == "":
            return quote * 2
        if string in _DEPRECATED_BOOLEANS or _BASE60.match(string):
            return quote + string + quote
        indent = self.indent * max(1, level)
        width = max(min(self.line_width, 40), self.line_width - indent)
        style = _choose_style(string, iskey, width, is_ambiguous, self.double, inblock)
        if style == PLAIN:
            return string
        if style == SINGLE:
            return "'" + string.replace("'", "''") + "'"
        if style == LITERAL:
            return "|" + _block_header(string, self.indent) + _drop_ending_newline(_indent_string(string, indent))
        if style == FOLDED:
            folded = _fold_string(string, width)
            return ">" + _block_header(string, self.indent) + _drop_ending_newline(_indent_string(folded, indent))
        return '"' + _escape(string) + '"'


ENGRAMS_DUMPER = Dumper(double_quotes=True)
TENSIONS_DUMPER = Dumper(double_quotes=False)


def dump_engrams_document(doc: dict[str, object]) -> str:
    return ENGRAMS_DUMPER.dump(doc)


def dump_engram_item(engram: dict[str, object]) -> str:
    """One engram exactly as it appears inside `engrams:` in a js-yaml dump (`  - id: …` lines)."""
    return ENGRAMS_DUMPER.node(2, engram, block=True, compact=True).join(["  - ", "\n"])


def dump_tensions_document(records: list[object]) -> str:
    return TENSIONS_DUMPER.dump(records)


def dump_tension_item(record: dict[str, object]) -> str:
    return TENSIONS_DUMPER.node(1, record, block=True, compact=True).join(["- ", "\n"])
