"""PLUR's lock protocol in Python: waiting, stealing from the dead, never from the living, token-checked release."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

from plur_desk.infra.errors import LockTimeout
from plur_desk.store.locking.lock import LockPolicy, holder_alive, locked, make_token


def test_acquire_and_release(tmp_path):
    target = tmp_path / "engrams.yaml"
    with locked(target) as token:
        content = (tmp_path / "engrams.yaml.lock").read_text()
        assert content == token and token.split(":")[:2] == [socket.gethostname(), str(os.getpid())]
    assert not (tmp_path / "engrams.yaml.lock").exists()


def test_a_live_holder_is_waited_for_then_refused(tmp_path):
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        (tmp_path / "t.lock").write_text(f"{socket.gethostname()}:{sleeper.pid}:1:1")
        with pytest.raises(LockTimeout, match=str(sleeper.pid)), locked(tmp_path / "t", LockPolicy(max_wait=0.5)):
            pass
        assert (tmp_path / "t.lock").read_text().startswith(socket.gethostname())  # never stolen from the living
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_dead_holders_lock_is_taken_at_once(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / "t.lock").write_text(f"{socket.gethostname()}:{dead.pid}:1:1")
    with locked(tmp_path / "t", LockPolicy(max_wait=5)):  # not the 60 s rule: taken as soon as seen dead
        pass
    assert not list(tmp_path.glob("t.lock*"))


def test_a_dead_predecessor_with_our_recycled_pid_is_not_mistaken_for_us(tmp_path):
    (tmp_path / "t.lock").write_text(f"{socket.gethostname()}:{os.getpid()}:1:999999")
    with locked(tmp_path / "t", LockPolicy(max_wait=2)):
        pass


def test_an_unknown_host_is_respected_until_its_lock_is_60_s_old(tmp_path):
    lock = tmp_path / "t.lock"
    lock.write_text("other-host:123:1:1")
    with pytest.raises(LockTimeout), locked(tmp_path / "t", LockPolicy(max_wait=0.2)):
        pass
    old = time.time() - 61
    os.utime(lock, (old, old))
    with locked(tmp_path / "t", LockPolicy(max_wait=2)):
        pass


def test_release_only_removes_our_own_token(tmp_path):
    lock = tmp_path / "t.lock"
    with locked(tmp_path / "t"):
        lock.write_text("someone-else:1:1:1")  # taken over meanwhile (e.g. after a steal)
    assert lock.read_text() == "someone-else:1:1:1"


def test_threads_exclude_each_other(tmp_path):
    counter = tmp_path / "n"
    counter.write_text("0")

    def bump():
        for _ in range(50):
            with locked(counter, LockPolicy(max_wait=30)):
                counter.write_text(str(int(counter.read_text()) + 1))

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counter.read_text() == "200"


def test_an_empty_lock_is_abandoned_after_ten_seconds_but_not_before(tmp_path):
    lock = tmp_path / "t.lock"
    lock.write_text("")  # a creator that died before writing its token (PLUR's own create-then-write can do this)
    with pytest.raises(LockTimeout), locked(tmp_path / "t", LockPolicy(max_wait=0.2)):
        pass
    old = time.time() - 11
    os.utime(lock, (old, old))
    with locked(tmp_path / "t", LockPolicy(max_wait=2)):
        pass


def test_our_lock_is_never_seen_empty_and_leaves_no_litter(tmp_path):
    seen = []
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            with contextlib.suppress(FileNotFoundError):
                seen.append((tmp_path / "t.lock").read_text())

    watcher = threading.Thread(target=watch)
    watcher.start()
    for _ in range(20000):  # until the watcher has seen the lock often enough (it depends on thread scheduling)
        with locked(tmp_path / "t"):
            pass
        if len(seen) >= 20:
            break
    stop.set()
    watcher.join()
    assert seen and all(s for s in seen)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("t.")] == []


def test_publish_files_of_dead_processes_are_swept(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    litter = tmp_path / f"t.lock.publish.{socket.gethostname()}_{dead.pid}_1_1"
    litter.write_text(f"{socket.gethostname()}:{dead.pid}:1:1")
    with locked(tmp_path / "t"):
        pass
    assert not litter.exists()


def test_a_token_another_thread_of_ours_just_released_is_not_taken_for_dead():
    # A waiter that read the holder's token just before that thread released it must not judge it stale: the
    # "steal" would then rename whichever lock replaced it, and two threads would be inside at once.
    released = make_token()  # minted by this process, no longer held
    assert holder_alive(released) is True
