"""Where plur_desk keeps its own files (platformdirs) and where PLUR's store is."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

import platformdirs

if TYPE_CHECKING:
    import argparse

APP_NAME = "plur-desk"
STORE_HELP = "store directory (default: $PLUR_PATH, else ~/.plur)"


def config_dir() -> Path:
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def data_dir() -> Path:
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def store_cache_dir(cache_root: Path, root: Path) -> Path:
    """The folder of one store's derived data (its parse cache, search index, vectors) under `cache_root`, named
    by the store's path (`root` as the session holds it: resolved)."""
    return cache_root / "stores" / hashlib.sha256(str(root).encode()).hexdigest()[:16]


def default_store_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """PLUR's own rule: an explicit path, else $PLUR_PATH, else ~/.plur."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get("PLUR_PATH")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".plur"


def store_parser(
    command: str,
    description: str,
    *,
    epilog: str | None = None,
    json: str = "machine-readable output (a stable interface)",
) -> argparse.ArgumentParser:
    """A terminal command's parser, `plur-desk COMMAND [STORE] [--json]`: the store as PLUR finds it
    (`default_store_path`), `--json` for a machine-readable answer."""
    import argparse

    parser = argparse.ArgumentParser(prog=f"plur-desk {command}", description=description, epilog=epilog)
    parser.add_argument("store", nargs="?", help=STORE_HELP)
    parser.add_argument("--json", action="store_true", help=json)
    return parser
