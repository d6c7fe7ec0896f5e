"""An agent's hand edit of one engram in engrams.yaml, the way the tests simulate PLUR or an agent changing the
store under the reviewer: only that engram's block changes, every other byte of the file stays as it was."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


def edit_block(root: Path, engram_id: str, change: Callable[[str], str]) -> None:
    """Replace the block of `engram_id` (from its `id:` line up to the next entry, or the end of the file) by
    `change(block)`."""
    path = root / "engrams.yaml"
    text = path.read_text()
    start = text.index(f"id: {engram_id}\n")
    end = text.find("\n  - ", start)
    end = len(text) if end < 0 else end
    path.write_text(text[:start] + change(text[start:end]) + text[end:])


def rewrite_block(root: Path, engram_id: str, old: str, new: str) -> None:
    """In the block of `engram_id`, the first `old` becomes `new` (which must be there: a test that edits nothing
    would pass for the wrong reason)."""

    def replace(block: str) -> str:
        assert old in block, block
        return block.replace(old, new, 1)

    edit_block(root, engram_id, replace)


def add_after_statement(root: Path, engram_id: str, line: str) -> None:
    """In the block of `engram_id`, `line` (with its own indentation) is added right after the statement line."""

    def add(block: str) -> str:
        at = block.index("\n", block.index("statement:"))
        return block[: at + 1] + line + "\n" + block[at + 1 :]

    edit_block(root, engram_id, add)
