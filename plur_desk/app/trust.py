"""Trust of human claims for one store: keys.yaml read once per change of the file, each event classified."""

from __future__ import annotations

import os
from pathlib import Path

from plur_desk.domain.trust import Trust
from plur_desk.store.keys_file import KEYS_FILE, KeyRegistry, read_keys
from plur_desk.store.signatures import classify


class TrustChecker:
    def __init__(self, root: Path) -> None:
        self.path = root / KEYS_FILE
        self._stamp: tuple[int, int, int] | None = None
        self._registry = KeyRegistry()
        self.generation = 0  # bumped whenever keys.yaml changed: verdicts cached by callers are stale then

    def registry(self) -> KeyRegistry:
        try:
            st = os.stat(self.path)
            stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        except FileNotFoundError:
            stamp = (0, 0, 0)
        if stamp != self._stamp:
            self._registry = read_keys(self.path.parent)
            self._stamp = stamp
            self.generation += 1
        return self._registry

    def __call__(self, event: dict[str, object]) -> Trust:
        return classify(event, self.registry())

    def check(self, event: dict[str, object]) -> Trust:
        """Classify against keys.yaml as last read (a caller checking many lines refreshes once, then calls this:
        one stat per query, not one per line)."""
        return classify(event, self._registry)
