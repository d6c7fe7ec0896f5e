"""Process-wide memory settings of the window: malloc arenas (glibc only; elsewhere nothing happens) and which
objects the cyclic garbage collector walks."""

from __future__ import annotations

import ctypes
import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager

M_ARENA_MAX = -8  # glibc's mallopt parameter
WINDOW_ARENAS = 2


def limit_malloc_arenas(count: int = WINDOW_ARENAS) -> bool:
    """At most `count` malloc arenas. glibc gives each thread that allocates its own arena (up to 8 per core), and
    memory freed in one is not reused by the others: the window's loading, search and scale threads each kept
    their own free memory (measured at 50,000 engrams + 1M history lines: cold peak 1,248 -> 1,148 MB). Call it
    before threads start; returns whether the setting was applied."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process's own symbols: libc's (ctypes.util costs a launch 12 ms)
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    return bool(mallopt(M_ARENA_MAX, count))


M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
LARGE_BLOCK = 128 << 10  # glibc's own starting threshold, kept


def return_large_blocks(threshold: int = LARGE_BLOCK) -> bool:
    """Blocks of `threshold` bytes and more are mapped on their own and given back to the system when freed, always.
    glibc starts so, but raises the threshold to the size of each mapped block freed (up to 32 MiB): after the
    first large buffer (a file read, a cache chunk, a month of history) the next ones come from the heap, where
    what is freed stays resident (the heap only shrinks from its top). Measured at 50,000 engrams + 1M history lines:
    a warm window held ~115-122 MB of freed memory when loaded (RSS 657-683 MB, 543-562 MB after malloc_trim); with
    a fixed threshold a cold one held 5 MB. Setting it also fixes the trim threshold. Returns whether it was set."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, threshold))


FULL_PASS_NEVER = 1 << 30  # young collections before an automatic full pass: never, in practice


def keep_loaded_objects() -> None:
    """What is alive now is kept out of the cyclic collector's passes (`gc.freeze`): a loaded store is millions
    of tracked objects (the records, the history index, the search index's maps), and every full pass walked all
    of them holding the interpreter lock, 300-660 ms each at 50,000 engrams + 1,000,000 history lines (measured
    with gc.callbacks in bench/bench_stall.py), collecting nothing: the window's longest stalls. Objects freed by
    their reference count are freed as before; garbage in a reference cycle among kept objects waits for
    `collect_everything`."""
    gc.freeze()


def defer_full_collections() -> None:
    """No automatic full pass (each walks every object not kept, in one hold of the interpreter lock, whenever
    enough objects survived the young collections: after a decision, during a search). The window runs them
    itself with `collect_everything`, when the reviewer is idle. Young collections go on as before."""
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_PASS_NEVER)


def collect_recent() -> int:
    """A full pass over the objects not kept (those made since the last pass, or since the load), then what is alive
    is kept as well: the cost is what was made since, not the whole heap. Garbage in a cycle among kept objects
    waits for `collect_everything`."""
    found = gc.collect()
    gc.freeze()
    return found


def collect_everything() -> int:
    """A full pass over every object, kept ones included (a closed store, a replaced index: garbage in cycles is
    freed here), then what is alive is kept again. Returns the objects collected."""
    gc.unfreeze()
    return collect_recent()


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic collection inside: building millions of small objects (a store's records) or the window's modules
    and widgets, none of them garbage, the young collections only slow the build down (at launch ~190 of them,
    30-40 ms of a warm 50,000-engram launch). What is alive afterwards is kept out of the passes
    (`keep_loaded_objects`), before the collector is on again. Nested: only the outermost turns it back on."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            # kept first, then the collector on: the other way round, a thread that allocated between the two ran a
            # young collection over everything made while it was off, in one hold of the interpreter lock (a 170 ms
            # pass at a 50,000-engram cold open, bench_stall's gc.callbacks)
            keep_loaded_objects()
            gc.enable()
