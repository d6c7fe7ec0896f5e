"""JSON of a large value written (and read back) one piece at a time: the same text, the interpreter lock let go
between the pieces.

The json module's C encoder holds the interpreter lock for the whole of one call. A write-ahead journal record of a
bulk approval of 500 drafts is ~530 KB, written and read back four times (through JSON, signed in canonical form,
dumped): four calls of 3-10 ms each in which the window's thread could not run a line of Python; the bulk phase of
bench_stall showed stalls of 18-27 ms with ~1 ms of the window's own work in them. Written piece by piece (each
item of a list of more than PIECE items on its own), every call is ~10 µs and the window takes the lock between
them.

The text is the one `json.dumps` writes: a list is its items joined with the separator, a dict its keys and values;
only a dict whose keys are all strings is split (json.dumps turns other keys into strings by rules of its own)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

PIECE = 32  # items: a list longer than this is written item by item
DEPTH = 4  # how deep a long list is looked for

_DUMPS = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps(value, ensure_ascii=False)


def long_list_within(value: object, depth: int = DEPTH) -> bool:
    """Whether `value` holds a list (or tuple) of more than PIECE items in its first `depth` levels. Asked of every
    value `js_stringify` writes (each event hashed, signed or verified): a plain loop, ~2 µs for an event (a
    generator over every child, with each dict's keys checked, took 5.5 µs of the 12 µs the event is written in)."""
    if isinstance(value, dict):
        items: Iterable[object] = value.values()
    elif isinstance(value, (list, tuple)):
        if len(value) > PIECE:
            return True
        items = value
    else:
        return False
    if depth > 1:
        for item in items:
            if isinstance(item, (dict, list, tuple)) and long_list_within(item, depth - 1):
                return True
    return False


def string_keys(value: dict[object, object]) -> bool:
    """Whether every key of `value` is a string: only such a dict is written in pieces (json.dumps turns other keys
    into strings by rules of its own)."""
    return all(type(k) is str for k in value)


def in_pieces(value: object, whole: Callable[[object], str], key: Callable[[str], str], comma: str, colon: str) -> str:
    """`value` written with `whole` for every piece (a value with no long list in it), its lists and dicts joined
    here with `comma` and `colon`, their keys written with `key`, in their order."""
    if not long_list_within(value) or (isinstance(value, dict) and not string_keys(value)):
        return whole(value)
    if isinstance(value, (list, tuple)):
        return "[" + comma.join(in_pieces(v, whole, key, comma, colon) for v in value) + "]"
    assert isinstance(value, dict)
    items = (key(k) + colon + in_pieces(v, whole, key, comma, colon) for k, v in value.items())
    return "{" + comma.join(items) + "}"


def dumps(value: object) -> str:
    """`json.dumps(value, ensure_ascii=False)`, the same text, written a piece at a time when it is large."""
    return in_pieces(value, _DUMPS, _DUMPS, ", ", ": ")


def through_json(value: object) -> object:
    """`json.loads(json.dumps(value, ensure_ascii=False))`, a piece at a time when it is large: the value as a
    reader of its JSON gets it (tuples as lists, and so on)."""
    if not long_list_within(value) or (isinstance(value, dict) and not string_keys(value)):
        return json.loads(_DUMPS(value))
    if isinstance(value, (list, tuple)):
        return [through_json(v) for v in value]
    assert isinstance(value, dict)
    return {k: through_json(v) for k, v in value.items()}
