"""Which lower-case words are ordinary English: the whole words of the MiniLM vocabulary shipped with plur_desk.

A word outside it ("nginx", "pnpm", "priya") is more likely a name, a tool or a place, which is what a
substituted slot usually holds. Only a data file is read; the model itself is not needed.
"""

from __future__ import annotations

from functools import lru_cache

from plur_desk.resources import RESOURCES


@lru_cache(maxsize=1)
def known_words() -> frozenset[str]:
    text = (RESOURCES / "minilm-vocab.txt").read_text(encoding="utf-8")
    return frozenset(w for w in text.split("\n") if w and not w.startswith(("##", "[")) and not w.isdigit())
