"""js-yaml 4 scalar typing and JavaScript number formatting, shared by the reader and the writer.

PLUR reads and writes its files with js-yaml 4 (DEFAULT_SCHEMA: YAML 1.2 core + timestamp + merge). A plain
scalar is resolved by trying null, bool, int, float and timestamp in that order; the rules below are those of
js-yaml 4.3 (lib/type/*.js), not YAML 1.1's (PyYAML) nor YAML 1.2's (ruamel): no underscores in numbers, no
base 60, `+.5` is a string, a number that overflows to Infinity is a string.
"""

from __future__ import annotations

import math
import re

from plur_desk.infra.jsvalues import JsTimestamp

_INT_RE = re.compile(r"[-+]?(?:0b[01]+|0x[0-9a-fA-F]+|0o[0-7]+|[0-9]+)\Z")
_FLOAT_RE = re.compile(
    r"(?:[-+]?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))\Z"
)
_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")
_TIMESTAMP_RE = re.compile(
    r"[0-9]{4}-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?"
    r"(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9]{2})?))?\Z"
)
_NUMBER_START = frozenset("0123456789+-.")
MAX_SAFE_INT = 2**53


def is_timestamp(text: str) -> bool:
    return bool(_DATE_RE.match(text) or _TIMESTAMP_RE.match(text))


def _js_int(text: str) -> int | float | None:
    if not _INT_RE.match(text):
        return None
    sign = -1 if text[0] == "-" else 1
    body = text[1:] if text[0] in "+-" else text
    if body[:2] == "0b":
        value = int(body[2:], 2)
    elif body[:2] == "0x":
        value = int(body[2:], 16)
    elif body[:2] == "0o":
        value = int(body[2:], 8)
    else:
        value = int(body, 10)
    if value > MAX_SAFE_INT:
        # JavaScript numbers are doubles: past 2**53 the value is rounded, past ~1.8e308 it is Infinity,
        # and js-yaml then refuses the int type (isFinite check).
        try:
            approx = float(value)
        except OverflowError:
            return None
        return int(approx) * sign
    return value * sign


def _js_float(text: str) -> float | None:
    if not _FLOAT_RE.match(text):
        return None
    low = text.lower()
    if low.endswith((".inf", ".nan")):
        if low.endswith("nan"):
            return math.nan
        return -math.inf if low[0] == "-" else math.inf
    value = float(text)
    if math.isinf(value):
        return None  # js-yaml: parseFloat overflows -> not a float -> a string
    return value


def resolve_plain(text: str) -> object:
    """Value of a plain (unquoted) scalar as js-yaml 4 would load it."""
    if not text or text in ("~", "null", "Null", "NULL"):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if text[0] in _NUMBER_START:
        as_int = _js_int(text)
        if as_int is not None:
            return as_int
        as_float = _js_float(text)
        if as_float is not None:
            return as_float
    if text[0].isdigit() and is_timestamp(text):
        return JsTimestamp(text)
    return text


def is_ambiguous(text: str) -> bool:
    """True when js-yaml's dumper must quote this string (some implicit type would resolve it)."""
    if text == "<<":
        return True  # merge type
    value = resolve_plain(text)
    return type(value) is not str


def is_js_integer(value: int | float) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return math.isfinite(value) and value.is_integer() and not (value == 0 and math.copysign(1.0, value) < 0)


def js_number_to_string(value: int | float) -> str:
    """ECMAScript Number::toString(10) for a finite number."""
    if isinstance(value, int) and abs(value) <= MAX_SAFE_INT:
        return str(value)
    value = float(value)
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    mantissa, _, exp = repr(abs(value)).partition("e")
    digits_int, _, digits_frac = mantissa.partition(".")
    if digits_frac == "0":
        digits_frac = ""
    digits = (digits_int + digits_frac).lstrip("0")
    # position of the decimal point relative to the start of `digits`
    point = len(digits_int) + (int(exp) if exp else 0)
    if digits_int == "0":
        stripped = digits_frac.lstrip("0")
        point = -(len(digits_frac) - len(stripped)) + (int(exp) if exp else 0)
        digits = stripped
    digits = digits.rstrip("0") or "0"
    k, n = len(digits), point
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    exp_text = ("+" if e >= 0 else "-") + str(abs(e))
    if k == 1:
        return sign + digits + "e" + exp_text
    return sign + digits[0] + "." + digits[1:] + "e" + exp_text


def js_key(value: object) -> str:
    """String(value) as JavaScript would turn a YAML key into an object property name."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and math.isnan(value):
            return "NaN"
        if isinstance(value, float) and math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return js_number_to_string(value)
    return str(value)


def is_array_index(key: str) -> bool:
    if not key or not key.isdigit() or not key.isascii():
        return False
    if len(key) > 1 and key[0] == "0":
        return False
    return int(key) < 2**32 - 1


def js_key_order(mapping: dict[str, object]) -> list[str]:
    """Object.keys() order: array-index keys first in numeric order, then the rest in insertion order."""
    keys = list(mapping)
    index_keys = [k for k in keys if k[:1].isdigit() and is_array_index(k)]
    if not index_keys:
        return keys
    index_keys.sort(key=int)
    return index_keys + [k for k in keys if not (k[:1].isdigit() and is_array_index(k))]
