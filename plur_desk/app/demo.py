"""The bundled demo store: always opened as a fresh copy, so the packaged one is never changed."""

from __future__ import annotations

import shutil
import time
from importlib import resources
from pathlib import Path

from plur_desk.infra.paths import cache_dir


def demo_source() -> Path:
    return Path(str(resources.files("plur_desk.resources") / "demo_store"))


def copy_demo_store(base: Path | None = None) -> Path:
    target_base = base or cache_dir() / "demo"
    target = target_base / time.strftime("demo-%Y%m%d-%H%M%S")
    suffix = 0
    while target.exists():
        suffix += 1
        target = target_base / f"{time.strftime('demo-%Y%m%d-%H%M%S')}-{suffix}"
    shutil.copytree(demo_source(), target)
    return target
