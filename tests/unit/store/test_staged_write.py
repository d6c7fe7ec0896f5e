"""A store write stages the new file from its parts (no joined copy), hashes the same parts, and renames the staged
file over the store file only once its journal step is saved: whatever fails before the rename leaves the store
file, the snapshot and the folder as they were (no temp file, no journal record)."""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from unit.store.test_hostile_stores import good_engrams, session_for, write_store

from plur_desk.domain.commands import ApproveDrafts
from plur_desk.infra.errors import WriteFailed
from plur_desk.store import file_hash
from plur_desk.store.atomic import stage
from plur_desk.store.file_hash import FileHash
from plur_desk.store.journal import JOURNAL_DIR

ROOT = Path(__file__).resolve().parents[3]


def _split(data: bytes, cuts: list[int]) -> list[bytes | memoryview]:
    """`data` in parts at `cuts` (empty parts included), bytes and views of one buffer mixed."""
    view = memoryview(data)
    points = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    parts: list[bytes | memoryview] = [
        view[a:b] if i % 2 else bytes(view[a:b]) for i, (a, b) in enumerate(itertools.pairwise(points))
    ]
    return [b"", *parts, b""]


@settings(max_examples=200, deadline=None)
@given(
    st.binary(max_size=300),
    st.lists(
        st.tuples(st.integers(0, 300), st.binary(max_size=40), st.lists(st.integers(0, 400), max_size=6)), max_size=6
    ),
)
def test_the_hash_of_the_parts_is_the_hash_of_the_whole_file(data, edits):
    original = file_hash.CHECKPOINT
    file_hash.CHECKPOINT = 16  # many checkpoints, parts across them and inside them
    try:
        hashes = [(data, FileHash.of_parts(_split(data, [7, 16, 33])))]
        assert hashes[0][1].hexdigest == hashlib.sha256(data).hexdigest()
        for at, insert, cuts in edits:
            old, base = hashes[at % len(hashes)]  # from any earlier file, not only the last
            cut = at % (len(old) + 1)
            new = old[:cut] + insert + old[cut + len(insert) // 2 :]
            made = FileHash.of_parts(_split(new, cuts), base, cut)
            assert made.hexdigest == hashlib.sha256(new).hexdigest() and made.size == len(new)
            assert made.hexdigest == FileHash.of(new, base, cut).hexdigest
            hashes.append((new, made))
        for old, made in hashes:  # no state was changed in place: each hash still extends correctly
            assert FileHash.of_parts([old, b"x"], made, len(old)).hexdigest == hashlib.sha256(old + b"x").hexdigest()
    finally:
        file_hash.CHECKPOINT = original


def test_a_staged_file_holds_its_parts_and_replaces_the_target_only_when_committed(tmp_path):
    folder = tmp_path / "store"
    folder.mkdir()
    target = folder / "engrams.yaml"
    target.write_bytes(b"old\n")
    os.chmod(target, 0o640)
    data = os.urandom(3 << 20)
    parts = _split(data, [1, 1 << 20, (1 << 20) + 5, 3 << 20])
    staged = stage(target, parts, read_back=True)
    assert staged.data == data and staged.tmp.read_bytes() == data
    assert target.read_bytes() == b"old\n"  # not replaced yet
    staged.commit()
    assert target.read_bytes() == data and os.stat(target).st_mode & 0o777 == 0o640
    assert sorted(p.name for p in folder.iterdir()) == ["engrams.yaml"]
    dropped = stage(target, [b"never\n"])
    assert dropped.data is None
    dropped.discard()
    assert target.read_bytes() == data and sorted(p.name for p in folder.iterdir()) == ["engrams.yaml"]


def _folder(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()}


def test_a_journal_that_cannot_be_saved_leaves_no_staged_file(tmp_path):
    root = write_store(tmp_path / "store", good_engrams())
    session = session_for(root)
    before, snapshot = _folder(root), session.store.engrams
    (root / JOURNAL_DIR).parent.mkdir(exist_ok=True)
    (root / JOURNAL_DIR).write_text("a file where the journal folder goes\n")  # the record cannot be saved
    with pytest.raises(WriteFailed, match="Nothing was written"):
        session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-12-01-001"]))))
    assert _folder(root) == before  # the store file as it was, and no temp file beside it
    assert session.store.engrams is snapshot


_FILE_TOO_BIG = r"""
import resource, signal, sys
from pathlib import Path
from plur_desk.store.plur_store import PlurStore
from plur_desk.app.review.session import ReviewSession
from plur_desk.domain.commands import ApproveDrafts
from plur_desk.domain.review import Reviewer
from plur_desk.infra.errors import PlurDeskError
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
root = Path(sys.argv[1])
store = PlurStore(root); store.load()
session = ReviewSession(store, Reviewer("Tester"))
limit = (root / "engrams.yaml").stat().st_size - 100  # the new file cannot be written whole
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
try:
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-12-01-001"]))))
except (OSError, PlurDeskError) as exc:
    print("refused:", exc); sys.exit(0)
sys.exit(1)
"""


def test_a_store_file_that_cannot_be_written_whole_changes_nothing(tmp_path):
    root = write_store(tmp_path / "store", good_engrams())
    before = _folder(root)
    env = dict(os.environ, PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring", PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-c", _FILE_TOO_BIG, str(root)], capture_output=True, text=True, env=env, check=False
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert _folder(root) == before  # no temp file left, the store file as it was
    assert not list((root / JOURNAL_DIR).glob("*.json"))  # nothing journaled: the step never happened


def _open_on(inode: int) -> int:
    """How many of this process's descriptors are open on the file with this inode."""
    found = 0
    for name in os.listdir("/proc/self/fd"):
        try:
            found += os.stat(f"/proc/self/fd/{name}").st_ino == inode
        except OSError:
            continue
    return found


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="descriptors are listed in /proc on Linux")
def test_the_replaced_file_is_held_open_across_the_rename_and_let_go_after(tmp_path, monkeypatch):
    """A large store file replaced by a commit is still open when the rename runs (the filesystem then only
    unlinks a name; freeing its blocks, 13-24 ms for a 63 MB engrams.yaml, happens when the descriptor is closed
    on another thread), and nothing keeps it open afterwards. A small file is not held, nor anything not regular."""
    import threading

    from plur_desk.store import atomic

    target = tmp_path / "engrams.yaml"
    target.write_bytes(b"x" * (atomic.HOLD_FROM + 1))
    old = target.stat().st_ino
    held_at_rename: list[int] = []
    rename = os.replace
    monkeypatch.setattr(
        atomic.os, "replace", lambda a, b: (held_at_rename.append(_open_on(os.stat(b).st_ino)), rename(a, b))[1]
    )
    stage(target, [b"new contents\n"]).commit()
    assert held_at_rename == [1] and target.read_bytes() == b"new contents\n"
    for thread in [t for t in threading.enumerate() if t.name == "plur-desk-free-old"]:
        thread.join()
    assert _open_on(old) == 0
    small = target.stat().st_ino
    stage(target, [b"again\n"]).commit()
    assert held_at_rename[-1] == 0 and _open_on(small) == 0
    fifo = tmp_path / "tensions.yaml"
    os.mkfifo(fifo)
    stage(fifo, [b"a file now\n"]).commit()  # a FIFO is never opened (no writer: it would not block, but never)
    assert held_at_rename[-1] == 0 and fifo.read_bytes() == b"a file now\n"


def test_a_decision_fsyncs_each_file_once_and_each_folder_once_a_name_in_it_changed(tmp_path, monkeypatch):
    """One approve: the staged engrams.yaml, the journal record and the month file fsynced once each; the journal
    folder once when its record is renamed in and once when it is removed (a finished record must not come back
    after a power loss), and the store folder once (engrams.yaml renamed in). The staged file's fsync runs while
    the journal record is saved, and both have returned before engrams.yaml is renamed in."""
    root = write_store(tmp_path / "store", good_engrams())
    session = session_for(root)
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-12-01-001"]))))  # watching starts here
    synced: list[tuple[str, bool]] = []
    done: list[str] = []  # in order: each fsync returned, each rename made
    real_fsync, real_replace = os.fsync, os.replace

    def name(path: str) -> str:
        return re.sub(r"[^/]*\.json\.\d+\.\d+\.tmp$|\.\d+\.\d+\.tmp$", ".tmp", os.path.relpath(path, root))

    def fsync(fd: int) -> None:
        path = os.readlink(f"/proc/self/fd/{fd}")
        synced.append((name(path), os.path.isdir(path)))
        if name(path) == "engrams.yaml.tmp":
            time.sleep(0.3)  # a slow disk: the journal is saved meanwhile, and the rename must wait for it
        real_fsync(fd)
        done.append(f"fsync {name(path)}")

    def replace(src, dst):  # type: ignore[no-untyped-def]
        real_replace(src, dst)
        done.append(f"rename {name(str(dst))}")

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    session.writes.engrams(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-12-01-002"]))), _context(session))
    journal = str(JOURNAL_DIR)
    expected = [
        ("engrams.yaml.tmp", False),
        (f"{journal}/.tmp", False),
        (journal, True),
        (".", True),
        ("history/2026-12.jsonl", False),
        (journal, True),
    ]
    assert sorted(synced) == sorted(expected), synced
    renamed_in = done.index("rename engrams.yaml")
    before = done[:renamed_in]
    assert "fsync engrams.yaml.tmp" in before and f"fsync {journal}/.tmp" in before and f"fsync {journal}" in before
    assert done[renamed_in + 1 :] == ["fsync .", "fsync history/2026-12.jsonl", f"fsync {journal}"], done
    assert not any((root / JOURNAL_DIR).iterdir())


def _context(session):  # type: ignore[no-untyped-def]
    from plur_desk.domain.commands import Context

    return Context(session.reviewer, session.now())


def test_a_failure_after_engrams_yaml_was_renamed_in_keeps_its_step_for_recovery(tmp_path, monkeypatch):
    """The store folder's fsync fails after the rename: the file is the new one, so its journal step must stay
    (recovery completes it, its events included), not be dropped as a step that did not happen."""
    import plur_desk.store.atomic as atomic

    root = write_store(tmp_path / "store", good_engrams())
    session = session_for(root)
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-12-01-001"]))))  # watching starts here
    real = atomic.fsync_dir

    def failing(path):  # type: ignore[no-untyped-def]
        if Path(path) == root:
            raise OSError(5, "Input/output error")
        return real(path)

    monkeypatch.setattr(atomic, "fsync_dir", failing)
    with pytest.raises(OSError, match="Input/output error"):
        session.writes.engrams(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-12-01-002"]))), _context(session))
    monkeypatch.setattr(atomic, "fsync_dir", real)
    records = list((root / JOURNAL_DIR).glob("*.json"))
    assert len(records) == 1 and "ENG-2026-12-01-002" in records[0].read_text()  # the step, kept for recovery


def test_a_failed_fsync_of_the_staged_file_renames_nothing_and_drops_its_step(tmp_path, monkeypatch):
    """The staged engrams.yaml's fsync (run while the journal record is saved) fails: engrams.yaml is not
    replaced, the step that was journaled is taken back (no record left), no event is appended."""
    root = write_store(tmp_path / "store", good_engrams())
    session = session_for(root)
    session.execute(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-12-01-001"]))))  # watching starts here
    before = (root / "engrams.yaml").read_bytes()
    history = sorted((p.name, p.read_bytes()) for p in (root / "history").glob("*.jsonl"))
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        path = os.readlink(f"/proc/self/fd/{fd}")
        if os.path.basename(path).startswith("engrams.yaml.") and path.endswith(".tmp"):
            raise OSError(5, "Input/output error")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(WriteFailed, match=r"cannot write the new engrams\.yaml"):
        session.writes.engrams(ApproveDrafts(tuple(session.writes.seen(["ENG-2026-12-01-002"]))), _context(session))
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert (root / "engrams.yaml").read_bytes() == before
    assert sorted((p.name, p.read_bytes()) for p in (root / "history").glob("*.jsonl")) == history
    assert not any((root / JOURNAL_DIR).iterdir())
    assert not list(root.glob("engrams.yaml.*.tmp"))


def test_a_staged_file_whose_fsync_failed_keeps_failing_and_is_never_renamed(tmp_path, monkeypatch):
    """A failed fsync of a file staged to sync later is an error on every wait for it, not only the first (a second
    wait once returned nothing, leaving no bytes and no error), and its commit renames nothing."""
    folder = tmp_path / "store"
    folder.mkdir()
    target = folder / "engrams.yaml"
    target.write_bytes(b"old\n")
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if os.readlink(f"/proc/self/fd/{fd}").endswith(".tmp"):
            raise OSError(5, "Input/output error")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    staged = stage(target, [b"new\n"], read_back=True, sync_later=True)
    for _ in range(2):
        with pytest.raises(OSError, match="Input/output error"):
            staged.synced()
    with pytest.raises(OSError, match="Input/output error"):
        staged.commit()
    assert target.read_bytes() == b"old\n" and sorted(p.name for p in folder.iterdir()) == ["engrams.yaml"]
    with pytest.raises(OSError, match="Input/output error"):
        stage(target, [b"new\n"])  # staged to sync at once: the error at once, no temp file left
    assert sorted(p.name for p in folder.iterdir()) == ["engrams.yaml"]


def _resident_pages(path: Path) -> int:
    """How many of the file's pages the kernel holds in memory (mincore over a read-only mapping)."""
    import ctypes
    import mmap

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    size = path.stat().st_size
    pages = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
    fd = os.open(path, os.O_RDONLY)
    try:
        address = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        assert address not in (None, ctypes.c_void_p(-1).value), ctypes.get_errno()
        try:
            vector = ctypes.create_string_buffer(pages)
            assert libc.mincore(address, size, vector) == 0, ctypes.get_errno()
            return sum(byte & 1 for byte in vector.raw)
        finally:
            libc.munmap(address, size)
    finally:
        os.close(fd)


def _cached_and_clean(path: Path, data: bytes) -> None:
    """`path` holds `data`, in the page cache (written and read) and clean (fsynced): pages the kernel may let go."""
    path.write_bytes(data)
    assert path.read_bytes() == data
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _drops_pages(probe: Path) -> bool:
    """Whether this file system lets a file's cached pages go when asked (not tmpfs, whose pages are the file)."""
    _cached_and_clean(probe, b"p" * (1 << 20))
    cached = _resident_pages(probe)
    fd = os.open(probe, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return cached > 0 and _resident_pages(probe) == 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mincore and posix_fadvise as Linux has them")
def test_a_large_file_about_to_be_replaced_lets_its_cached_pages_go_first(tmp_path):
    """The new file's pages are then those the kernel has just freed, not long-free memory a virtual machine has
    handed back to its host (each faulted in again: bench/bench_decision.py's p95 211 -> 85 ms). The old file's
    pages go before the new file is written; its bytes on disk, and what the rename leaves, are unchanged."""
    if not _drops_pages(tmp_path / "probe"):
        pytest.skip("this file system keeps a file's pages when asked to let them go (tmpfs) or caches none")
    target = tmp_path / "engrams.yaml"
    old = os.urandom(1 << 21)
    _cached_and_clean(target, old)
    before = _resident_pages(target)
    opened = os.open(target, os.O_RDONLY)  # the old file as it was, whatever the rename does
    try:
        staged = stage(target, [b"new " * 1000])
        assert _resident_pages(Path(f"/proc/self/fd/{opened}")) == 0 < before
        staged.commit()
        assert os.pread(opened, len(old) + 1, 0) == old
    finally:
        os.close(opened)
    assert target.read_bytes() == b"new " * 1000


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mincore as Linux has it")
def test_a_small_file_about_to_be_replaced_keeps_its_cached_pages(tmp_path):
    """Files under a megabyte (tensions.yaml, the journal's records) are not worth a system call each."""
    target = tmp_path / "tensions.yaml"
    _cached_and_clean(target, b"x" * 4096 * 4)
    before = _resident_pages(target)
    stage(target, [b"y"]).discard()
    assert _resident_pages(target) == before
