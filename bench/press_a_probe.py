"""Which plur_desk files run between pressing A on a draft and the window's `changes_applied` (docs/architecture.md,
"One decision, end to end"): run at the repo root with QT_QPA_PLATFORM=offscreen; prints the files by folder, and
the threads that ran plur_desk code (every thread: the decision's and the upkeep that follows it)."""

from __future__ import annotations

import shutil
import sys
import tempfile
import threading
from collections import defaultdict
from pathlib import Path

sys.path[:0] = [str(Path.cwd()), str(Path.cwd() / "tests")]
from PySide6.QtCore import Qt, QTimer  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from plur_desk.app.demo import demo_source  # noqa: E402
from plur_desk.app.settings import Settings, SettingsStore  # noqa: E402
from plur_desk.infra.clock import FixedClock  # noqa: E402
from plur_desk.ui.app import make_application  # noqa: E402
from plur_desk.ui.common.jobs import _Run  # noqa: E402
from plur_desk.ui.main_window import MainWindow  # noqa: E402

from support.moments import WINDOW_NOW  # noqa: E402

ROOT = Path("plur_desk").resolve()
seen: dict[str, set[str]] = defaultdict(set)
on = False


by_job: dict[int, set[str]] = defaultdict(set)  # each background job run: the files it ran
decisions: set[int] = set()  # the jobs that ran ReviewSession.execute
local = threading.local()


def profile(frame, event, arg):  # type: ignore[no-untyped-def]
    if on and event == "call":
        name = frame.f_code.co_filename
        if name.startswith(str(ROOT)):
            file = str(Path(name).relative_to(ROOT.parent))
            seen[file].add(threading.current_thread().name.split("-")[0])
            job = getattr(local, "job", None)
            if job is not None:
                by_job[job].add(file)
                if frame.f_code.co_name == "execute" and file.endswith("app/review/session.py"):
                    decisions.add(job)


def _profiled_run(self):  # type: ignore[no-untyped-def]
    local.job = id(self)
    sys.setprofile(profile)  # Qt's pool threads get no profile from threading.setprofile
    try:
        _run(self)
    finally:
        sys.setprofile(None)
        local.job = None


_run = _Run.run
_Run.run = _profiled_run
tmp = Path(tempfile.mkdtemp())
store = tmp / "store"
shutil.copytree(demo_source(), store, ignore=shutil.ignore_patterns(".plur-desk"))
app = make_application()
win = MainWindow(
    SettingsStore(tmp / "settings.yaml"), Settings(reviewer_name="Grace Tester"), "Grace Tester", FixedClock(WINDOW_NOW)
)
win.show()
win.open_path(store)


def loaded() -> bool:
    return win.session is not None and win.session.history.loaded and win.jobs.pending() == 0


def wait(cond, ms: int = 60000) -> None:  # type: ignore[no-untyped-def]
    timer = 0
    while not cond() and timer < ms:
        QTest.qWait(50)
        timer += 50
    assert cond(), "timed out"


wait(loaded)
QTest.qWait(3000)  # the background builds (finder, search) settle
done = []
win.changes_applied.connect(lambda *a: done.append(1))
win.drafts.select_row(0)
win.drafts.focus_queue()
sys.setprofile(profile)
threading.setprofile(profile)
on = True
QTest.keyClick(win.drafts.table, Qt.Key.Key_A)
wait(lambda: bool(done))
on = False
sys.setprofile(None)
threading.setprofile(None)
folders: dict[str, list[str]] = defaultdict(list)
for f in sorted(seen):
    folders[str(Path(f).parent)].append(Path(f).name)
threads = sorted(set().union(*seen.values()))
print(
    f"{len(seen)} files in {len(folders)} folders, {len({f.split('/')[1] for f in seen if '/' in f[10:]})} layers,"
    f" threads: {threads}"
)
by_thread: dict[str, int] = defaultdict(int)
for names in seen.values():
    for t in names:
        by_thread[t] += 1
print("files run per thread:", dict(sorted(by_thread.items())))
main_only = sorted(f for f, names in seen.items() if names == {"MainThread"})
print(f"{len(main_only)} files ran only on the GUI thread")
for folder, files in folders.items():
    print(f"{folder}: {', '.join(files)}")
decided = set().union(*(by_job[j] for j in decisions)) if decisions else set()
print(f"the decision's job (ReviewSession.execute, the session lane): {len(decided)} files")
for f in sorted(decided):
    print(f"  {f}")
QTimer.singleShot(0, app.quit)
