"""The SHA-256 of a whole store file, kept with the hash state at every `CHECKPOINT` bytes.

The journal records the whole file's hash before and after each write (recovery decides from them whether a step
happened). A write changes a few entries and leaves every byte before the first of them as it was, so the new
file's hash starts from the old file's state at the last checkpoint before that byte: only the rest is hashed
(PLUR appends new engrams, so drafts sit mostly near the end). The result is the plain SHA-256 of the whole file.
The new file is hashed from its parts as they are written (views of the old bytes and the new entries), never from
a joined copy. States are shared between the hashes of successive snapshots and never updated in place (always
copied first). Hashing runs in updates of at most 1 MiB, each of which releases the interpreter lock.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

CHECKPOINT = 1 << 20

Part = bytes | memoryview


class FileHash:
    __slots__ = ("_states", "hexdigest", "size")

    def __init__(self, states: list[Any], hexdigest: str, size: int) -> None:
        self._states = states  # _states[k]: the state after the first k * CHECKPOINT bytes
        self.hexdigest = hexdigest
        self.size = size

    @classmethod
    def of(cls, data: bytes, base: FileHash | None = None, same_upto: int = 0) -> FileHash:
        """The hash of `data`; `base` is the hash of a file whose first `same_upto` bytes are the same as data's."""
        return cls.of_parts([data], base, same_upto)

    @classmethod
    def of_parts(cls, parts: Sequence[Part], base: FileHash | None = None, same_upto: int = 0) -> FileHash:
        """The hash of the file made of `parts` one after the other (as `of` their concatenation)."""
        size = sum(len(part) for part in parts)
        keep = 0
        if base is not None:
            same_upto = min(same_upto, base.size, size)
            keep = min(same_upto // CHECKPOINT, len(base._states) - 1)
        states = base._states[: keep + 1] if base is not None else [hashlib.sha256()]
        state = states[-1].copy()
        pos = keep * CHECKPOINT  # the file offset hashed up to
        offset = 0  # the file offset of the part below
        for part in parts:
            end = offset + len(part)
            if end > pos:
                view = memoryview(part)
                while pos < end:
                    stop = min(pos - pos % CHECKPOINT + CHECKPOINT, end)  # never across a checkpoint
                    state.update(view[pos - offset : stop - offset])
                    pos = stop
                    if pos % CHECKPOINT == 0:
                        states.append(state.copy())
            offset = end
        return cls(states, state.hexdigest(), size)
