"""The command line and the desktop basics: help, no display, a cancelled first run, demo copies, window size."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from plur_desk.app.demo import OWNER_FILE, copy_demo_store, sweep_demo_copies

ROOT = Path(__file__).resolve().parents[1]


def _plur_desk(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "plur_desk", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=env or dict(os.environ),
        check=False,
    )


def test_help_lists_every_terminal_command_with_one_line():
    from plur_desk.cli import COMMANDS

    out = _plur_desk("--help")
    assert out.returncode == 0
    for name in ("check", "search"):
        lines = [line for line in out.stdout.splitlines() if line.strip().startswith(name + " ")]
        assert len(lines) == 1, out.stdout
    assert {c.name for c in COMMANDS} >= {"check", "search"}


@pytest.mark.parametrize("command", ["check", "search"])
def test_each_terminal_command_has_its_own_help(command):
    out = _plur_desk(command, "--help")
    assert out.returncode == 0
    assert out.stdout.startswith(f"usage: plur-desk {command}")


def test_no_display_exits_at_once_with_a_message(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"}}
    out = _plur_desk("--demo", "--reviewer", "Ada", env=env)
    assert out.returncode == 2
    assert "no display" in out.stderr
    assert "plur-desk check" in out.stderr


def test_cancelling_the_first_run_dialog_says_why_nothing_opened(qtbot, capsys, monkeypatch):
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from plur_desk.ui.app import run_app

    def cancel() -> None:
        modal = QApplication.activeModalWidget()
        if modal is None:
            QTimer.singleShot(20, cancel)
            return
        assert modal.windowTitle() == "Who is reviewing?"
        modal.reject()

    QTimer.singleShot(20, cancel)
    code = run_app(store=None, reviewer=None, demo=True, self_check=False)
    assert code == 1
    assert "no reviewer name given" in capsys.readouterr().err


def test_demo_copies_do_not_pile_up(tmp_path):
    base = tmp_path / "demo"
    first = copy_demo_store(base)
    assert (first / "engrams.yaml").is_file()
    # A copy whose owner process is gone, one from before owners were recorded, and one still in use.
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (first / OWNER_FILE).write_text(f"{os.uname().nodename}:{dead.pid}\n")
    legacy = base / "demo-20260101-000000"
    legacy.mkdir()
    in_use = copy_demo_store(base)  # owned by this (living) process; may reuse the first copy's name
    assert [p.name for p in base.iterdir()] == [in_use.name]
    assert (in_use / OWNER_FILE).read_text().endswith(f":{os.getpid()}\n")
    again = copy_demo_store(base)
    assert in_use.exists(), "a copy another window has open is never removed"
    assert sorted(p.name for p in base.iterdir()) == sorted([in_use.name, again.name])
    assert sweep_demo_copies(base) == []


def test_window_fits_a_small_screen_and_restores_its_geometry(qtbot, tmp_path):
    from plur_desk.app.settings import Settings, SettingsStore
    from plur_desk.ui.app import make_application
    from plur_desk.ui.main_window import MainWindow

    make_application()
    settings_store = SettingsStore(tmp_path / "config" / "settings.yaml")
    win = MainWindow(settings_store, Settings(reviewer_name="Ada"), "Ada")
    qtbot.addWidget(win)
    hint = win.minimumSizeHint()
    assert hint.width() <= 1280 and hint.height() <= 720, hint
    available = win.screen().availableGeometry()
    assert win.width() <= available.width() and win.height() <= available.height()
    win.show()
    size = (min(hint.width() + 8, available.width()), min(hint.height() + 8, available.height()))
    win.resize(*size)
    win.move(13, 17)
    win.close()
    again = MainWindow(settings_store, Settings(reviewer_name="Ada"), "Ada")
    qtbot.addWidget(again)
    assert (again.width(), again.height()) == size
