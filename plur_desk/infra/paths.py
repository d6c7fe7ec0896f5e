"""Where plur_desk keeps its own files (platformdirs) and where PLUR's store is."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "plur-desk"


def config_dir() -> Path:
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def data_dir() -> Path:
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def default_store_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """PLUR's own rule: an explicit path, else $PLUR_PATH, else ~/.plur."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get("PLUR_PATH")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".plur"
