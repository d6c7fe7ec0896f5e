"""Faithful YAML reading of PLUR's files: a fast parser for js-yaml's own layout, PyYAML (libyaml) for the rest.

Both give what js-yaml 4 would give (see yaml_types): strings stay strings (`"2026-01-01"`, `0936e75230430234`,
`+_`), unquoted timestamps come back as `JsTimestamp` so PLUR's quarantine rule can be applied, keys are
strings as in JavaScript. The fast parser understands exactly the subset js-yaml's dumper writes (block
mappings and sequences, plain / quoted / literal / folded scalars, `[]`, `{}`) and raises `Unsupported` for
anything else, so the caller falls back to the general parser; it never guesses.
"""

from __future__ import annotations

import re
import sys
from functools import cache
from typing import TYPE_CHECKING

from plur_desk.store.lists.yaml_types import js_key, resolve_plain

if TYPE_CHECKING:
    import yaml


class Unsupported(Exception):
    """The text is outside the fast parser's subset (not an error in itself)."""


class YamlSyntaxError(Exception):
    """The text is not YAML that js-yaml would load. `line` is 1-based within the parsed text."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


class UnsupportedYaml(YamlSyntaxError):
    """YAML that js-yaml may well read but plur_desk does not (aliases, merge keys): not a claim that PLUR fails."""


# ---------------------------------------------------------------------------------------------------------------
# General path: libyaml with js-yaml's typing


@cache
def js_yaml_loader() -> type[yaml.SafeLoader]:
    """libyaml typed as js-yaml types plain scalars and keys; made on first use (PyYAML's import: ~10 ms a launch)."""
    import yaml

    class JsYamlLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
        def resolve(self, kind, value, implicit):  # type: ignore[no-untyped-def]
            if kind is yaml.ScalarNode and implicit[0]:
                return "tag:plur-desk:plain"
            return super().resolve(kind, value, implicit)

        def construct_mapping(self, node, deep=False):  # type: ignore[no-untyped-def]
            if not isinstance(node, yaml.MappingNode):
                raise yaml.constructor.ConstructorError(None, None, "expected a mapping", node.start_mark)
            result: dict[str, object] = {}
            for key_node, value_node in node.value:
                if key_node.tag == "tag:plur-desk:plain" and key_node.value == "<<":
                    raise yaml.constructor.ConstructorError(
                        None, None, "YAML merge keys (<<) are not supported", key_node.start_mark
                    )
                key = js_key(self.construct_object(key_node, deep=True))
                if key in result:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicated mapping key {key!r}", key_node.start_mark
                    )
                result[sys.intern(key)] = self.construct_object(value_node, deep=deep)
            return result

    def construct_map(loader: JsYamlLoader, node: yaml.MappingNode):  # type: ignore[no-untyped-def]
        data: dict[str, object] = {}
        yield data
        data.update(loader.construct_mapping(node))  # type: ignore[no-untyped-call]

    JsYamlLoader.add_constructor("tag:plur-desk:plain", lambda _loader, node: resolve_plain(node.value))
    JsYamlLoader.add_constructor("tag:yaml.org,2002:map", construct_map)
    return JsYamlLoader


# YAML 1.1 (libyaml) breaks lines at NEL, LS and PS; YAML 1.2 (js-yaml) does not. They are swapped for
# noncharacters while libyaml parses, then swapped back.
_BREAKS_12 = {"\x85": "\ufdd0", "\u2028": "\ufdd1", "\u2029": "\ufdd2"}
_BREAKS_BACK = {v: k for k, v in _BREAKS_12.items()}
_SHIELD = str.maketrans(_BREAKS_12)
_UNSHIELD = str.maketrans(_BREAKS_BACK)


def _unshield(value: object) -> object:
    if isinstance(value, str):
        return type(value)(value.translate(_UNSHIELD))
    if isinstance(value, list):
        return [_unshield(v) for v in value]
    if isinstance(value, dict):
        return {_unshield(k): _unshield(v) for k, v in value.items()}
    return value


def load_general(text: str) -> object:
    """Parse any YAML document as js-yaml would type it. Aliases are refused (PLUR never writes them, and
    expanding them is how alias bombs work)."""
    shielded = any(ch in text for ch in _BREAKS_12) and not any(ch in text for ch in _BREAKS_BACK)
    if shielded:
        return _unshield(_load_general(text.translate(_SHIELD)))
    return _load_general(text)


MAX_DEPTH = 200
_BRACKETS = re.compile(r"[\[\]{}]")
_DEEP_INDENT = re.compile(r"^ {" + str(MAX_DEPTH * 2) + r",}\S", re.M)


def _too_deep(text: str) -> bool:
    """libyaml and PyYAML recurse per nesting level and crash the process on very deep documents."""
    if text.count("[") + text.count("{") > MAX_DEPTH:
        depth = 0
        for match in _BRACKETS.finditer(text):
            depth += 1 if match.group() in "[{" else -1
            if depth > MAX_DEPTH:
                return True
    return _DEEP_INDENT.search(text) is not None


def check_parse_safety(text: str) -> None:
    """Refuse what would crash or blow up the parser: very deep nesting, aliases."""
    if _too_deep(text):
        raise YamlSyntaxError(f"YAML nesting is too deep (more than {MAX_DEPTH} levels); refusing to parse it")
    if "&" in text or "*" in text:
        import yaml

        try:
            for event in yaml.parse(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
                if isinstance(event, yaml.AliasEvent):
                    line = event.start_mark.line + 1 if event.start_mark else None
                    raise UnsupportedYaml(
                        "the file uses YAML anchors and aliases (or `<<` merge keys); plur_desk does not read them "
                        "(PLUR never writes them, though its YAML reader may accept them)",
                        line,
                    )
        except yaml.YAMLError as exc:
            raise _syntax_error(exc) from None


def _load_general(text: str) -> object:
    check_parse_safety(text)
    import yaml

    try:
        return yaml.load(text, Loader=js_yaml_loader())
    except yaml.YAMLError as exc:
        raise _syntax_error(exc) from None
    except RecursionError:
        raise YamlSyntaxError("YAML nesting is too deep") from None


def _syntax_error(exc: yaml.YAMLError) -> YamlSyntaxError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = mark.line + 1 if mark is not None else None
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    message = f"{context}; {problem}" if context else str(problem)
    return YamlSyntaxError(message.strip(), line)


# ---------------------------------------------------------------------------------------------------------------
# Fast path: js-yaml's dumper output

_DQ = re.compile(r'"((?:[^"\\]|\\.)*)"')
_SQ = re.compile(r"'((?:[^']|'')*)'")
_DQ_ESC = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)")
_SIMPLE_ESC = {
    "0": "\x00",
    "a": "\x07",
    "b": "\x08",
    "t": "\t",
    "\t": "\t",
    "n": "\n",
    "v": "\x0b",
    "f": "\x0c",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_PLAIN_BAD_FIRST = frozenset("-?:,[]{}#&*!|>'\"%@`")
_BLOCK_HEADERS = frozenset(["|", "|-", "|+", ">", ">-", ">+"])


def _unescape(match: re.Match[str]) -> str:
    code = match.group(1)
    if len(code) > 1:
        return chr(int(code[1:], 16))
    try:
        return _SIMPLE_ESC[code]
    except KeyError:
        raise Unsupported from None


def _double_quoted(text: str) -> tuple[str, str]:
    match = _DQ.match(text)
    if match is None:
        raise Unsupported
    body = match.group(1)
    if "\\" in body:
        body = _DQ_ESC.sub(_unescape, body)
    return body, text[match.end() :]


def _single_quoted(text: str) -> tuple[str, str]:
    match = _SQ.match(text)
    if match is None:
        raise Unsupported
    return match.group(1).replace("''", "'"), text[match.end() :]


def _plain(text: str) -> object:
    if text[0] in _PLAIN_BAD_FIRST and not (text[0] in "-?:" and len(text) > 1 and text[1] not in " \t"):
        raise Unsupported
    if " #" in text or ": " in text or text[-1] in " \t:" or "\t" in text:
        raise Unsupported
    return resolve_plain(text)


SHARED_UP_TO = 24  # characters: scopes, types, statuses, writers, dates and timestamps repeat across engrams


def _shared(value: object) -> object:
    """A short string scalar is interned: 50,000 engrams repeat a few scopes, types, writers and their own
    timestamps (created, updated, stored) hundreds of thousands of times; one object each saves ~36 MB there, and
    the parse cache and the parse workers' results (marshal) keep them interned."""
    return sys.intern(value) if type(value) is str and len(value) <= SHARED_UP_TO else value


# Lines already read, and what they said: a store repeats most of its lines (`    status: active`,
# `      positive: 0`, `    tags: []`) in every engram. A line `key: value` whose value is a scalar (or `[]`, `{}`, or
# nothing, a nested block following) gives the same column, key and value wherever it stands, so its reading is
# remembered by its text; the checks that depend on where it stands (its column against the mapping's, a key
# repeated in the same mapping) are made every time. Only short scalars (those `_shared` makes one object anyway)
# and short lines are kept, and the table is emptied when full, so it stays a few MB in any store.
_NESTED, _NEW_LIST, _NEW_MAP = 1, 2, 3  # what a remembered line's value is made of, besides a plain value (0)
_KNOWN_LINES: dict[str, tuple[int, str, object, int]] = {}
KNOWN_LINES_MAX = 1 << 14
_KNOWN_LINE_LENGTH = 96
_SHAREABLE = frozenset([str, int, float, bool, type(None)])


def _remember(line: str, ind: int, key: str, rest: str, value: object) -> None:
    if len(line) > _KNOWN_LINE_LENGTH:
        return
    if rest == "":
        made = _NESTED
    elif rest == "[]":
        made = _NEW_LIST
    elif rest == "{}":
        made = _NEW_MAP
    elif (
        type(value) in _SHAREABLE
        and rest not in _BLOCK_HEADERS
        and (type(value) is not str or len(value) <= SHARED_UP_TO)
    ):
        made = 0
    else:
        return
    if len(_KNOWN_LINES) >= KNOWN_LINES_MAX:
        _KNOWN_LINES.clear()
    _KNOWN_LINES[line] = (ind, key, value if made == 0 else None, made)


def forget_known_lines() -> None:
    """Empty the table of lines already read (tests compare a parse with and without it)."""
    _KNOWN_LINES.clear()


class _Parser:
    """Indentation parser over a list of lines; raises Unsupported outside js-yaml's dump subset."""

    __slots__ = ("lines", "n", "pos")

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.pos = 0
        self.n = len(lines)

    def next_content(self) -> tuple[int, int] | None:
        """(position, indent) of the next non-blank line, without consuming it."""
        pos = self.pos
        while pos < self.n:
            line = self.lines[pos]
            if line.strip(" "):
                if "\t" in line[: len(line) - len(line.lstrip())]:
                    raise Unsupported
                return pos, len(line) - len(line.lstrip(" "))
            pos += 1
        return None

    def mapping(self, indent: int) -> dict[str, object]:  # noqa: C901 -- the parser's hot loop, kept inline for speed
        result: dict[str, object] = {}
        lines = self.lines
        known = _KNOWN_LINES
        while self.pos < self.n:
            line = lines[self.pos]
            seen = known.get(line)
            if seen is not None:
                ind, key, value, made = seen
                if ind < indent:
                    break
                if ind > indent:
                    raise Unsupported
                if key in result:
                    raise YamlSyntaxError(f"duplicated mapping key {key!r}", self.pos + 1)
                self.pos += 1
                if made:
                    value = self.value("", indent) if made == _NESTED else [] if made == _NEW_LIST else {}
                result[key] = value
                continue
            content = line.lstrip(" ")
            if not content:
                if line:
                    raise Unsupported
                self.pos += 1
                continue
            ind = len(line) - len(content)
            if ind < indent:
                break
            if ind > indent or (content[0] == "-" and content[1:2] in (" ", "")):
                raise Unsupported
            if content[0] == '"':
                key, rest = _double_quoted(content)
            elif content[0] == "'":
                key, rest = _single_quoted(content)
            else:
                colon = content.find(":")
                while colon != -1 and colon + 1 < len(content) and content[colon + 1] != " ":
                    colon = content.find(":", colon + 1)
                if colon <= 0:
                    raise Unsupported
                key, rest = content[:colon], content[colon:]
                if key[0] in _PLAIN_BAD_FIRST or " #" in key or key[-1] in " \t":
                    raise Unsupported
                key = js_key(resolve_plain(key))
            if rest == ":":
                rest = ""
            elif rest[:2] == ": ":
                rest = rest[2:]
            else:
                raise Unsupported
            if key in result:
                raise YamlSyntaxError(f"duplicated mapping key {key!r}", self.pos + 1)
            self.pos += 1
            key = sys.intern(key)
            value = result[key] = self.value(rest, indent)
            _remember(line, ind, key, rest, value)
        return result

    def value(self, rest: str, parent_indent: int) -> object:
        """The value after `key: ` (or `- `); `parent_indent` is the column of that key (or dash)."""
        if rest == "":
            nxt = self.next_content()
            if nxt is None or nxt[1] <= parent_indent:
                return None
            self.pos, ind = nxt
            stripped = self.lines[self.pos][ind:]
            if stripped[:2] == "- " or stripped == "-":
                return self.sequence(ind)
            return self.mapping(ind)
        first = rest[0]
        value: object
        if first == '"':
            value, tail = _double_quoted(rest)
        elif first == "'":
            value, tail = _single_quoted(rest)
        elif rest in _BLOCK_HEADERS:
            return self.block_scalar(rest, parent_indent)
        elif rest == "[]":
            return []
        elif rest == "{}":
            return {}
        else:
            value, tail = _plain(rest), ""
        if tail:
            raise Unsupported
        return _shared(value)

    def sequence(self, indent: int) -> list[object]:  # noqa: C901 -- the parser's hot loop, kept inline for speed
        result: list[object] = []
        lines = self.lines
        while self.pos < self.n:
            line = lines[self.pos]
            content = line.lstrip(" ")
            if not content:
                if line:
                    raise Unsupported
                self.pos += 1
                continue
            ind = len(line) - len(content)
            if ind < indent:
                break
            if ind > indent or not (content[:2] == "- " or content == "-"):
                if ind == indent:
                    break
                raise Unsupported
            item = content[2:]
            if item[:1] in ('"', "'"):
                quoted, tail = (_double_quoted if item[0] == '"' else _single_quoted)(item)
                if tail[:2] == ": " or tail == ":":
                    lines[self.pos] = " " * (indent + 2) + item
                    result.append(self.mapping(indent + 2))
                    continue
                if tail:
                    raise Unsupported
                self.pos += 1
                result.append(_shared(quoted))
                continue
            if item == "" or item[:2] == "- " or item == "-":
                raise Unsupported
            if item in _BLOCK_HEADERS or item in ("[]", "{}"):
                self.pos += 1
                result.append(self.value(item, indent))
                continue
            if ": " in item or item.endswith(":"):
                lines[self.pos] = " " * (indent + 2) + item
                result.append(self.mapping(indent + 2))
                continue
            self.pos += 1
            result.append(_shared(_plain(item)))
        return result

    def block_scalar(self, header: str, parent_indent: int) -> str:  # noqa: C901 -- the parser's hot loop, kept inline for speed
        lines = self.lines
        start = self.pos
        end = start
        while end < self.n:
            line = lines[end]
            if line.strip(" ") and len(line) - len(line.lstrip(" ")) <= parent_indent:
                break
            end += 1
        body = lines[start:end]
        content_indent = None
        for line in body:
            if line.strip(" "):
                content_indent = len(line) - len(line.lstrip(" "))
                break
        if content_indent is None:
            raise Unsupported
        texts: list[str] = []
        for line in body:
            if not line.strip(" "):
                if len(line) > content_indent:
                    raise Unsupported
                texts.append("")
            elif len(line) - len(line.lstrip(" ")) < content_indent:
                raise Unsupported
            else:
                texts.append(line[content_indent:])
        if texts and texts[0] == "":
            raise Unsupported  # leading blank lines: leave the subtleties to libyaml
        trailing = 0
        while texts and texts[-1] == "":
            texts.pop()
            trailing += 1
        self.pos = end
        text = "\n".join(texts) if header[0] == "|" else _fold(texts)
        chomp = header[1:]
        if chomp == "-":
            return text
        if chomp == "+":
            return text + "\n" + "\n" * trailing
        return text + "\n"


def _fold(texts: list[str]) -> str:
    out: list[str] = []
    blank = 0
    prev_more: bool | None = None
    for line in texts:
        if line == "":
            blank += 1
            continue
        more = line[0] in " \t"
        if prev_more is None:
            pass
        elif not prev_more and not more:
            out.append(" " if blank == 0 else "\n" * blank)
        else:
            out.append("\n" * (blank + 1))
        out.append(line)
        blank = 0
        prev_more = more
    return "".join(out)


def parse_item_fast(text: str, item_indent: int) -> dict[str, object]:
    """Parse one top-level list item (`<indent>- key: …` through its last line) written by js-yaml."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        raise Unsupported
    first = lines[0]
    if first[:item_indent] != " " * item_indent or first[item_indent : item_indent + 2] != "- ":
        raise Unsupported
    lines[0] = " " * (item_indent + 2) + first[item_indent + 2 :]
    parser = _Parser(lines)
    result = parser.mapping(item_indent + 2)
    if parser.pos != parser.n:
        raise Unsupported
    return result


def parse_item(text: str, item_indent: int) -> object:
    """One list item: the fast parser when it applies, else libyaml. Raises YamlSyntaxError."""
    try:
        return parse_item_fast(text, item_indent)
    except Unsupported:
        pass
    except RecursionError:
        raise YamlSyntaxError("YAML nesting is too deep") from None
    doc = load_general(text)
    if not isinstance(doc, list) or len(doc) != 1:
        raise YamlSyntaxError("an entry of the list did not parse as exactly one item")
    return doc[0]
