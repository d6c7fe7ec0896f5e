"""Files shipped with the package (style sheet, icons, demo store, the embedding model's files).

`RESOURCES` is their folder: a plain path (the package is installed unpacked, and the frozen build keeps the same
layout), not `importlib.resources`, whose import costs a launch ~10 ms before the first draft."""

from pathlib import Path

RESOURCES = Path(__file__).resolve().parent
