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
        return marshal.loads(marshal.dumps(value))  # type: ignore[no-any-return, arg-type]
    except (ValueError, RecursionError):
        return copy.deepcopy(value)
