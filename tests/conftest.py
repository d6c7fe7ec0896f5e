"""Shared test set-up: headless Qt, private platformdirs roots, no real home directory."""

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest


@pytest.fixture(autouse=True)
def _private_dirs(tmp_path, monkeypatch):
    """Every test gets its own config/cache roots and HOME; nothing touches the developer's machine."""
    home = tmp_path / "_home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.delenv("PLUR_PATH", raising=False)
    return


@pytest.fixture(autouse=True)
def _no_real_keyring():
    """Never the developer's keyring: the fail backend, chosen explicitly, so reviewer keys go to the 0600 file
    under this test's private data dir (tests that need a working keyring set their own backend)."""
    import keyring
    from keyring.backends import fail

    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(fail.Keyring())  # whatever a test chose does not leak into the next one
