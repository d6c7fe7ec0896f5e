"""Where the store is, by PLUR's own rule, and where our own files go (never inside the store)."""

from __future__ import annotations

from pathlib import Path

from plur_desk.infra.errors import ActionRefused, ChangedSinceError, Outcome, WriteFailed, told
from plur_desk.infra.paths import cache_dir, config_dir, data_dir, default_store_path


def test_store_path_explicit_then_plur_path_then_home(monkeypatch, tmp_path):
    monkeypatch.setenv("PLUR_PATH", str(tmp_path / "from-env"))
    assert default_store_path(str(tmp_path / "given")) == tmp_path / "given"
    assert default_store_path() == tmp_path / "from-env"
    monkeypatch.delenv("PLUR_PATH")
    assert default_store_path() == Path.home() / ".plur"
    monkeypatch.setenv("PLUR_PATH", "~/elsewhere")
    assert default_store_path() == Path.home() / "elsewhere"


def test_our_folders_follow_the_desktop_conventions(tmp_path):
    # tests/conftest.py points XDG_* into this test's home
    home = Path.home()
    assert config_dir().is_relative_to(home / ".config")
    assert cache_dir().is_relative_to(home / ".cache")
    assert data_dir().is_relative_to(home / ".local" / "share")
    assert len({config_dir(), cache_dir(), data_dir()}) == 3


def test_a_refusal_reused_after_a_write_no_longer_says_nothing_was_written():
    refused = ChangedSinceError("ENG-1", ["statement"])
    assert refused.outcome is Outcome.NOTHING_WRITTEN
    assert str(refused) == "ENG-1 changed since you looked (statement). Nothing was written. Reload and decide again."
    text = refused.without_outcome()
    assert "nothing was written" not in text.lower()
    assert text == "ENG-1 changed since you looked (statement). Reload and decide again."


def test_the_outcome_is_said_once_and_only_when_known():
    assert str(ActionRefused("not a draft")) == "not a draft"  # a refusal that does not say what was written
    assert str(WriteFailed("cannot open x;", outcome=Outcome.NOTHING_WRITTEN)) == "cannot open x. Nothing was written."
    assert told("", Outcome.NOTHING_WRITTEN, "Try again.") == "Nothing was written. Try again."
    assert told("held by PLUR", None, "Try again.") == "held by PLUR. Try again."
