"""Shared test set-up: headless Qt, private platformdirs roots, no real home directory."""

import os
import sys
import weakref
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest
from hypothesis import HealthCheck, Phase, settings

# CI (which sets CI, as Hypothesis itself detects) runs each property on the same examples every time, and reports a
# failing example as it was found, unshrunk: shrinking re-runs the test hundreds of times, and a GUI property whose
# failure hung on timing kept Hypothesis shrinking for over 5 minutes. As many examples as anywhere else; the
# failure's blob is printed to replay it. Elsewhere Hypothesis's default (random examples, shrunk failures), or
# HYPOTHESIS_PROFILE=ci to see what CI sees.
settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    print_blob=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "default"))


def pytest_configure(config: pytest.Config) -> None:
    """pytest-xdist hands out the files in the order collected (below), not in its default order, by how many tests
    each holds: that put a file of one long test, such as the crash trials, near the end of the queue, where one
    worker ran it alone after the other had finished (tests/test_ci_order.py)."""
    config.addinivalue_line(
        "markers", "cold_vectors: the `window` fixture's cache holds no vectors: the window embeds the demo itself"
    )
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files with a long test (marked slow) first, each as a whole and in its order, the rest after as collected:
    on two workers, each handed whole files in this order, a long file reached last kept one worker busy for
    minutes after the other had finished."""
    slow = {item.path for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: item.path not in slow)  # a stable sort: every file's tests stay together, in order


@pytest.fixture(autouse=True)
def _private_dirs(tmp_path):
    """Every test gets its own config/cache roots and HOME; nothing touches the developer's machine. Its own
    MonkeyPatch, not the test's: a test calling monkeypatch.undo() would otherwise put the real HOME back mid-test
    (a reopened session then used the real home's key vault)."""
    private = pytest.MonkeyPatch()
    home = tmp_path / "_home"
    home.mkdir()
    private.setenv("HOME", str(home))
    private.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    private.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    private.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    private.delenv("PLUR_PATH", raising=False)
    # git's housekeeping after a commit or a fetch (`git maintenance run --auto`, 144 runs in the team sync tests)
    # is no part of what any test checks: ~9 % of those tests' CPU
    for n, (key, value) in enumerate((("maintenance.auto", "false"), ("gc.auto", "0"))):
        private.setenv(f"GIT_CONFIG_KEY_{n}", key)
        private.setenv(f"GIT_CONFIG_VALUE_{n}", value)
    private.setenv("GIT_CONFIG_COUNT", "2")
    yield
    private.undo()


@pytest.fixture(autouse=True)
def _no_real_keyring():
    """Never the developer's keyring: the fail backend, chosen explicitly, so reviewer keys go to the 0600 file
    under this test's private data dir (tests that need a working keyring set their own backend)."""
    import keyring
    from keyring.backends import fail

    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(fail.Keyring())  # whatever a test chose does not leak into the next one


_windows: "weakref.WeakSet[object]" = weakref.WeakSet()


@pytest.fixture(autouse=True, scope="session")
def _track_windows():
    """Every MainWindow a test builds, so what a closed one holds can be released after its test (below)."""
    from plur_desk.ui.main_window import MainWindow

    original = MainWindow.__init__

    def tracked(self, *args, **kwargs):
        original(self, *args, **kwargs)
        _windows.add(self)

    MainWindow.__init__ = tracked
    yield
    MainWindow.__init__ = original


@pytest.fixture(autouse=True)
def _release_closed_windows(_track_windows):
    """A closed window's Qt object is deleted, but its Python wrapper outlives it in reference cycles through
    bound methods kept by Qt-side connections, and with it the session, search index, ONNX sessions and vectors it
    held: ~100 MB a window test, enough to exhaust memory over the suite. Once Qt has deleted the window, its
    attributes are dropped so those are freed. What the window's controllers and panes still hold among
    themselves (reference cycles of wrappers whose Qt objects are gone) is collected here: a store load ends in
    gc.freeze() (infra/memory.gc_paused), which put the window's objects, alive then, out of the collector's
    reach, so they are unfrozen first (one window per process in the app: this matters only to a test run). The
    collection is made every few windows (a closed window awaiting it is told nothing: theme.apply skips an owner
    whose Qt object is gone)."""
    yield
    import gc

    import shiboken6
    from PySide6.QtCore import QCoreApplication, QEvent

    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    released = False
    for window in list(_windows):
        if not shiboken6.isValid(window):
            vars(window).clear()
            _windows.discard(window)
            released = True
    if released:
        _released[0] += 1
    # A full collection costs ~80 ms of CPU in a worker that has imported the whole app (~27 s over the UI tests):
    # made every few closed windows, or sooner once the process is large, memory stays bounded all the same.
    if _released[0] >= _COLLECT_EVERY or (_released[0] and _rss_bytes() > _COLLECT_ABOVE):
        _released[0] = 0
        gc.unfreeze()
        gc.collect()


_COLLECT_EVERY = 4  # closed windows
_COLLECT_ABOVE = 1_500_000_000  # bytes resident
_released = [0]  # closed windows released since the last collection


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0
