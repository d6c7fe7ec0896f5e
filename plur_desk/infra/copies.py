"""A deep copy of a value read from a store file or made for one (dicts, lists, strings, numbers, None), for the
write path, which copies every entry it changes and every event it journals (a bulk approve of 500: ~2,000 copies).
"""

from __future__ import annotations

import copy
import marshal
from typing import TypeVar

T = TypeVar("T")


def copy_value(value: T) -> T:
    """What `copy.deepcopy(value)` returns, made by marshal when it can (in C, about three times faster): marshal
    writes only the plain built-in types, exactly (a subclass, such as `JsTimestamp`, or any other object is
    refused and copied by `copy.deepcopy`), and keeps a part shared within the value shared in the copy, as
    `deepcopy` does."""
    try:
        copied = marshal.loads(marshal.dumps(value))  # type: ignore[arg-type]
    except (ValueError, RecursionError):
        return copy.deepcopy(value)
    # deepcopy keeps each float object, marshal makes new ones: a NaN (YAML's .nan, one shared object) is equal to
    # itself only as the same object, so a copy holding a new one would differ from the original, and a decision
    # would then sign and journal an unchanged field as changed. Such a value is copied by deepcopy (a C compare).
    return copied if copied == value else copy.deepcopy(value)
