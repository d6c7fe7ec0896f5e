"""Error types every layer raises; each carries a message a person can act on.

What a refused or failed write left on disk is a value, `Outcome`, set where the write path knows it; the words that
say it are made here, in `told`, and nowhere else. Code that needs the reason without the outcome (a refusal quoted
inside a message about a write that *did* happen) calls `error.without_outcome()`, never edits the message text.
"""

from __future__ import annotations

import enum
import errno
from pathlib import Path


class Outcome(enum.Enum):
    """What a refused or failed action left on disk, as far as the layer raising it knows."""

    NOTHING_WRITTEN = "Nothing was written."
    # the second file of a two-file action refused: the first file's step was undone by a journaled step of its own
    SET_BACK = "engrams.yaml was not changed; tensions.yaml had already been changed and was set back."
    # ... and undoing it failed too: what was written is in the journal, and recovery finishes or reports it
    LEFT_TO_RECOVERY = (
        "engrams.yaml was not changed, but tensions.yaml had already been changed and could not be set back; the "
        "write-ahead journal keeps the action, and opening the store for review completes it or reports why it cannot."
    )


def told(reason: str, outcome: Outcome | None = None, then: str = "") -> str:
    """The one place a reason, its outcome and what to do next become a sentence for the reviewer."""
    text = reason.strip()
    if outcome is not None:
        text = (text.rstrip(".;:,") + ". " if text else "") + outcome.value
    if then:
        text = (text if text.endswith((".", "?", "!")) else text + ".") + " " + then
    return text


class PlurDeskError(Exception):
    """Base class: `str(error)` is the plain-words message shown to the user, made by `told` from the reason, the
    outcome (`None`: the raiser does not say what was written) and the advice that follows."""

    outcome: Outcome | None = None  # a class's usual outcome; an instance may say otherwise

    def __init__(self, reason: str = "", *, outcome: Outcome | None = None, then: str = "") -> None:
        super().__init__(reason)
        self.why = reason
        self.then = then
        if outcome is not None:
            self.outcome = outcome

    def __str__(self) -> str:
        return told(self.why, self.outcome, self.then)

    def without_outcome(self) -> str:
        """The message without what was written: for quoting inside news of a write that did happen."""
        return told(self.why, None, self.then)


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

    outcome = Outcome.NOTHING_WRITTEN

    def __init__(self, engram_id: str, fields: list[str]) -> None:
        super().__init__(f"{engram_id} changed since you looked ({', '.join(fields)})", then="Reload and decide again.")
        self.engram_id = engram_id
        self.fields = fields


class LockTimeout(PlurDeskError):
    outcome = Outcome.NOTHING_WRITTEN

    def __init__(self, lock_path: Path, holder: str, waited: float) -> None:
        super().__init__(
            f"{lock_path.name} is held by {holder or 'another process'}; gave up after {waited:.1f} s",
            then="Try again when PLUR is done.",
        )
        self.lock_path = lock_path
        self.holder = holder


class ActionRefused(PlurDeskError):
    """A review action that does not apply (a winner outside the pair, an engram that is not a draft, …)."""


class LockedWithOpenTension(ActionRefused):
    """Approving to `locked` an engram in an open tension: PLUR 0.21 never steps such an engram into `locked`
    (CHANGELOG 0.21.0; `hasUnresolvedTension` in 0.20 too), so the reviewer is asked first."""

    outcome = Outcome.NOTHING_WRITTEN

    def __init__(self, lines: list[str]) -> None:
        super().__init__(
            "not approved to locked: " + "; ".join(lines) + ". PLUR keeps an engram in an open tension out of "
            "locked; settle the tension first, or approve to locked anyway"
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


DISK_FULL = frozenset({errno.ENOSPC, errno.EFBIG, errno.EDQUOT})  # no room (or quota, or file-size limit) left


def refused_by_system(what: str, exc: OSError) -> WriteFailed:
    """A write refused by the system before any byte of the store changed: "the disk is full" only when it is
    (ENOSPC, EDQUOT, or EFBIG: a file-size limit), the system's own words otherwise."""
    if exc.errno in DISK_FULL:
        return WriteFailed(f"{what}: the disk is full ({exc.strerror})", outcome=Outcome.NOTHING_WRITTEN)
    return WriteFailed(f"{what}: {exc.strerror or exc}", outcome=Outcome.NOTHING_WRITTEN)
