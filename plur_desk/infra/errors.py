"""Error types every layer raises; each carries a message a person can act on."""

from __future__ import annotations

import errno
import re
from pathlib import Path


class PlurDeskError(Exception):
    """Base class: `str(error)` is the plain-words message shown to the user."""


class NotAPlurStore(PlurDeskError):
    pass


class StoreUnreadable(PlurDeskError):
    """A store file PLUR itself would refuse; the store is opened read-only (or not at all)."""

    def __init__(self, path: Path, reason: str, line: int | None = None) -> None:
        where = f"{path}" + (f", line {line}" if line else "")
        super().__init__(f"{where}: {reason}")
        self.path = path
        self.reason = reason
        self.line = line


class ReadOnlyStore(PlurDeskError):
    pass


class ChangedSinceError(PlurDeskError):
    """What the reviewer saw is no longer what is on disk; nothing was written."""

    def __init__(self, engram_id: str, fields: list[str]) -> None:
        super().__init__(
            f"{engram_id} changed since you looked ({', '.join(fields)}); nothing was written. Reload and decide again."
        )
        self.engram_id = engram_id
        self.fields = fields


class LockTimeout(PlurDeskError):
    def __init__(self, lock_path: Path, holder: str, waited: float) -> None:
        super().__init__(
            f"{lock_path.name} is held by {holder or 'another process'}; gave up after {waited:.1f} s. "
            "Nothing was written; try again when PLUR is done."
        )
        self.lock_path = lock_path
        self.holder = holder


class ActionRefused(PlurDeskError):
    """A review action that does not apply (a winner outside the pair, an engram that is not a draft, …)."""


class LockedWithOpenTension(ActionRefused):
    """Approving to `locked` an engram in an open tension: PLUR 0.21 never steps such an engram into `locked`
    (CHANGELOG 0.21.0; `hasUnresolvedTension` in 0.20 too), so the reviewer is asked first; nothing was written."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__(
            "not approved to locked: " + "; ".join(lines) + ". PLUR keeps an engram in an open tension out of "
            "locked; settle the tension first, or approve to locked anyway. Nothing was written."
        )
        self.lines = lines


class WriteFailed(PlurDeskError):
    pass


class KeyUnavailable(ActionRefused):
    """The reviewer's signing key could not be reached (a locked keyring the reviewer did not unlock)."""


class KeyConflict(ActionRefused):
    """keys.yaml already holds another key for this reviewer's identity; replacing it needs confirmation."""


class PartialWrite(WriteFailed):
    """A store file was changed but what must follow (its history events, a second file) was not done; the
    write-ahead journal holds the rest and recovery completes it."""


_NOTHING_WRITTEN = re.compile(r"[;.]?\s*[Nn]othing was written[.;]?\s*")


def without_nothing_written(message: str) -> str:
    """A refusal's text reused where something *was* written: its "nothing was written" would be untrue there."""
    text = _NOTHING_WRITTEN.sub(". ", message).strip()
    text = re.sub(r"\. ([a-z])", lambda m: ". " + m.group(1).upper(), text)
    return text if text.endswith(".") else text + "."


DISK_FULL = frozenset({errno.ENOSPC, errno.EFBIG, errno.EDQUOT})  # no room (or quota, or file-size limit) left


def nothing_written(what: str, exc: OSError) -> str:
    """The message for a write refused by the system before any byte of the store changed: "the disk is full"
    only when it is (ENOSPC, EDQUOT, or EFBIG: a file-size limit), the system's own words otherwise."""
    if exc.errno in DISK_FULL:
        return f"{what}: the disk is full: nothing was written ({exc.strerror})."
    return f"{what}: {exc.strerror or exc}. Nothing was written."
