"""Taking over an abandoned PLUR lock the way PLUR 0.21 does: one judged file, under a ladder of guard slots.

Transcribed from PLUR 0.21's `packages/core/src/store/async-lock.ts` (`takeOver`/`stealLock`,
`acquireStealSlot`, `stealGuardPath`, `judgeStealSlot`, `claimAndRemove`; read at
agent-memory-atlas-archive/plur-ai--plur@867f16071a6bd3ee0473c81d70c205a1dd9ac98e, the archived plur-ai/plur,
and a plur-ai/plur copy read without its commit). Why a guard at all: two waiters
that judged the same dead lock can both reach the rename claim, and the second one moves the first one's new,
live lock aside while a third creates one at the free path (PLUR's formal finding, persistence.md candidate 3).
Why a ladder: a guard left by a crashed stealer must never be removed by a read-then-unlink of someone else's
file, so a dead slot is stepped over, never deleted, while the judged token is still at the lock path.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

STEAL_GUARD_SLOTS = 8  # PLUR's STEAL_GUARD_SLOTS
GUARD_STALE_SECONDS = 10.0  # PLUR's GUARD_STALE_MS: a slot whose writer cannot be probed, untouched this long
_LINK_UNSUPPORTED = {"EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EINVAL"}  # PLUR's LINK_UNSUPPORTED

Alive = Callable[[str], "bool | None"]
Abandoned = Callable[[str, float], bool]  # (holder token, mtime) -> may a waiter take it over now?


@dataclass(frozen=True)
class Inspection:
    """One lock file's holder token (trimmed, as PLUR compares it), mtime and inode, read as one file."""

    holder: str
    mtime: float
    ino: int


def read_text(path: Path) -> str | None:
    """The file's text; None when it does not exist, "" when it is not a readable regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError:
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        return os.read(fd, 4096).decode("utf-8", errors="replace")
    except OSError:
        return ""
    finally:
        os.close(fd)


def inspect(path: Path) -> Inspection | None:
    """PLUR's inspectLock: stat, read, stat again; None when gone or replaced in between."""
    try:
        first = os.stat(path)
        text = read_text(path)
        again = os.stat(path)
    except OSError:
        return None
    if text is None or again.st_ino != first.st_ino:
        return None
    return Inspection(text.strip(), again.st_mtime, first.st_ino)


def guard_path(lock: Path, expected: str, k: int, ino: int | None = None) -> Path:
    """Slot k of the ladder for the lock instance holding `expected`.

    PLUR keys a token's ladder by sha256(token)[:16]. For an EMPTY lock the two 0.21 copies differ: one keys it by
    the inode (`"\\0ino:<ino>"`), the other by the empty token; `take_over` holds a slot of both ladders then.
    """
    ident = f"\0ino:{ino}" if expected == "" and ino is not None else expected
    key = hashlib.sha256(ident.encode("utf-8")).hexdigest()[:16]
    return lock.with_name(f"{lock.name}.guard-{key}-{k}")


def slot_state(slot: Path, alive: Alive, now: float) -> str:
    """PLUR's judgeStealSlot: "dead" iff its writer is gone (or unprobeable and untouched 10 s), else "live";
    "gone" when the slot does not exist. A slot created but not written yet reads "" and so counts as live."""
    seen = inspect(slot)
    if seen is None:
        return "gone"
    verdict = alive(seen.holder)
    if verdict is False or (verdict is None and now - seen.mtime > GUARD_STALE_SECONDS):
        return "dead"
    return "live"


def publish(path: Path, token: str) -> bool:
    """Create `path` holding `token` whole (private file hard-linked into place); False if it exists."""
    private = path.with_name(f"{path.name}.publish.{safe(token)}")
    fd = os.open(private, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    try:
        os.write(fd, token.encode("utf-8"))
    finally:
        os.close(fd)
    linked = False
    try:
        os.link(private, path)
        linked = True
    except FileExistsError:
        return False
    except OSError as exc:
        if _errno_name(exc) not in _LINK_UNSUPPORTED:
            raise
    finally:
        with suppress(FileNotFoundError):
            os.unlink(private)
    if linked:
        return True
    return _create_then_write(path, token)


def _create_then_write(path: Path, token: str) -> bool:
    """PLUR's fallback where there are no hard links: create, write, then check the path still names our file."""
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return False
    try:
        os.write(fd, token.encode("utf-8"))
        ino = os.fstat(fd).st_ino
    finally:
        os.close(fd)
    try:
        return os.stat(path).st_ino == ino
    except FileNotFoundError:
        return False


def release_if_ours(path: Path, token: str) -> None:
    text = read_text(path)
    if text is not None and text.strip() == token:
        with suppress(FileNotFoundError):
            os.unlink(path)


def safe(token: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in token)


def _errno_name(exc: OSError) -> str:
    import errno

    return errno.errorcode.get(exc.errno or 0, "")


def _acquire_slot(lock: Path, expected: str, ino: int | None, token: str, alive: Alive, now: float) -> Path | None:
    """PLUR's acquireStealSlot: the lowest free slot above a run of dead ones, then verified (every lower slot
    must still exist and still be dead). None when another contender is taking this lock over."""
    for k in range(STEAL_GUARD_SLOTS):
        slot = guard_path(lock, expected, k, ino)
        try:
            taken = publish(slot, token)
        except OSError:
            return None
        if not taken:
            if slot_state(slot, alive, now) == "dead":
                continue
            return None
        for i in range(k):
            if slot_state(guard_path(lock, expected, i, ino), alive, now) != "dead":
                release_if_ours(slot, token)
                return None
        return slot
    return None


def _ladders(lock: Path, seen: Inspection) -> list[int | None]:
    """The ladders a takeover of this instance must hold: the token's, or for an empty lock both 0.21 forms."""
    return [seen.ino, None] if seen.holder == "" else [None]


def take_over(lock: Path, guard_token: str, claim_token: str, alive: Alive, abandoned: Abandoned, now: float) -> bool:
    """PLUR 0.21's takeOver. False when another contender holds the guard (back off briefly); True otherwise,
    whatever was found: the caller then tries the exclusive create again."""
    seen = inspect(lock)
    if seen is None or not abandoned(seen.holder, seen.mtime):
        return True
    held: list[Path] = []
    try:
        for ino in _ladders(lock, seen):
            slot = _acquire_slot(lock, seen.holder, ino, guard_token, alive, now)
            if slot is None:
                return False
            held.append(slot)
        current = inspect(lock)
        # Decision C2 in PLUR: the same file (token AND inode) and still abandoned now, not only when judged.
        if current is None or current.holder != seen.holder or current.ino != seen.ino:
            return True
        if not abandoned(current.holder, current.mtime):
            return True
        if _claim_and_remove(lock, current, claim_token):
            for ino in _ladders(lock, seen):
                for k in range(STEAL_GUARD_SLOTS):
                    other = guard_path(lock, seen.holder, k, ino)
                    if other not in held:
                        with suppress(FileNotFoundError):
                            os.unlink(other)
        return True
    finally:
        for slot in held:
            release_if_ours(slot, guard_token)


def _claim_and_remove(lock: Path, judged: Inspection, claim_token: str) -> bool:
    """Move the lock aside (rename is single-winner), confirm it is the judged file, remove it; if it is not,
    put that SAME file back by hard link, which never overwrites a lock someone took meanwhile."""
    claim = lock.with_name(f"{lock.name}.steal.{safe(claim_token)}")
    try:
        os.rename(lock, claim)
    except OSError:
        return False
    try:
        moved = inspect(claim)
        if moved is not None and moved.holder == judged.holder and moved.ino == judged.ino:
            os.unlink(claim)
            return True
        try:
            os.link(claim, lock)
        except FileExistsError:
            pass  # someone acquired meanwhile: theirs wins
        except OSError as exc:
            if _errno_name(exc) in _LINK_UNSUPPORTED and moved is not None:
                _create_then_write(lock, moved.holder)
        return False
    finally:
        with suppress(FileNotFoundError):
            os.unlink(claim)
