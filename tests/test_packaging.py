"""Packaging metadata is valid and consistent: one application id, one version, icons, validated metainfo."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from plur_desk import APP_ID, __version__

ROOT = Path(__file__).resolve().parent.parent
LINUX = ROOT / "packaging" / "linux"


def test_metainfo_validates_with_appstreamcli():
    tool = shutil.which("appstreamcli")
    if tool is None:
        pytest.fail("appstreamcli is required (Debian package 'appstream'; ./dev.sh test installs it)")
    out = subprocess.run(
        [tool, "validate", "--no-net", "--pedantic", str(LINUX / f"{APP_ID}.metainfo.xml")],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_one_id_and_one_version_everywhere():
    tree = ET.parse(LINUX / f"{APP_ID}.metainfo.xml")
    assert tree.findtext("id") == APP_ID
    assert tree.find("launchable").text == f"{APP_ID}.desktop"
    releases = [r.get("version") for r in tree.iter("release")]
    assert releases[0] == __version__
    desktop = configparser.ConfigParser(interpolation=None)
    desktop.optionxform = str
    desktop.read(LINUX / f"{APP_ID}.desktop")
    entry = desktop["Desktop Entry"]
    assert entry["Icon"] == APP_ID and entry["Exec"].startswith("plur-desk")
    for shot in tree.iter("image"):
        assert (ROOT / "docs" / "screenshots" / Path(shot.text).name).is_file(), shot.text
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'version = { attr = "plur_desk.__version__" }' in pyproject


def test_icons_exist_in_every_size():
    for size in (16, 24, 32, 48, 64, 128, 256):
        assert (ROOT / "resources" / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png").is_file()
    assert (ROOT / "plur_desk" / "resources" / "plur-desk.svg").is_file()


def test_history_events_carry_the_version():
    from plur_desk.domain.review import Reviewer

    assert Reviewer("x").actor()["runtime"] == {"name": "plur-desk", "version": __version__}


def test_self_check_runs(tmp_path):
    import os
    import sys

    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    out = subprocess.run(
        [sys.executable, "-m", "plur_desk", "--self-check"], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "self-check passed" in out.stdout and "embedding query" in out.stdout


@pytest.mark.slow
def test_pyinstaller_bundle_builds_and_passes_its_self_check(tmp_path):
    """The one-folder bundle (about 25 s to build here) runs on every CI run."""
    out = subprocess.run(
        ["bash", str(ROOT / "packaging" / "pyinstaller" / "build.sh"), str(tmp_path / "dist")],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
        env={
            **__import__("os").environ,
            "XDG_CACHE_HOME": str(tmp_path / "cache"),
            "PYTHON": __import__("sys").executable,
        },
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "self-check passed" in out.stdout
