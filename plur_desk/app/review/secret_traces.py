"""Where a secret edited out of a statement may still live, and the commands that purge it from there.

plur_desk keeps a removed secret out of the history it writes (domain/review.py), but it never rewrites what is
already on disk: earlier history lines are an append-only, hash-chained log, and a synced store's git history is
the user's. So the app finds those places and says how to clean them; the person decides.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from plur_desk.store.safe_open import NotRegularFile, read_regular


@dataclass(frozen=True)
class SecretTraces:
    engram_id: str
    root: Path
    history_lines: tuple[tuple[str, int], ...]  # (file under history/, 1-based line) that still hold a removed secret
    git: bool  # the store is a git work tree (PLUR's sync pushes it): its earlier commits may hold the secret

    def advice(self) -> str:
        """Plain text for the reviewer: what was kept out, where the secret may still be, and how to purge it."""
        root = shlex.quote(str(self.root))
        lines = [
            f"The credential-like string you removed from {self.engram_id} was not copied into history: the edit "
            "records a redacted marker and a hash. Treat the secret as exposed and rotate it; copies may remain in:"
        ]
        grep = f"grep -n {self.engram_id} {root}/history/*.jsonl"
        if self.history_lines:
            where = ", ".join(f"{name} line {n}" for name, n in self.history_lines[:5])
            more = f" and {len(self.history_lines) - 5} more" if len(self.history_lines) > 5 else ""
            lines.append(f"• earlier history lines: {where}{more} (list them: {grep})")
        else:
            lines.append(f"• earlier history lines: none found in this store's history/ folder (check: {grep})")
        if self.git:
            lines.append(
                f"• the store's git history (synced stores push it): find it with git -C {root} log -p -S 'SECRET'; "
                f"purge with git filter-repo --replace-text FILE (in {root}), then force-push every remote."
            )
        else:
            lines.append("• backups and copies of the store folder, and any git repository it was synced to.")
        return "\n".join(lines)


def find_traces(root: Path, engram_id: str, secrets: list[str]) -> SecretTraces:
    """Scan the store's history files (regular files only, read whole) for lines holding any of `secrets`."""
    found: list[tuple[str, int]] = []
    needles = [s.encode("utf-8", "surrogatepass") for s in secrets if s]
    folder = root / "history"
    names = sorted(p.name for p in folder.glob("*.jsonl")) if folder.is_dir() else []
    for name in names:
        try:
            data, _ = read_regular(folder / name)
        except (OSError, NotRegularFile):
            continue  # skipped here; the grep command in the advice searches every file
        for number, line in enumerate(data.split(b"\n"), start=1):
            if any(n in line for n in needles):
                found.append((name, number))
    return SecretTraces(engram_id, root, tuple(found), (root / ".git").exists())
