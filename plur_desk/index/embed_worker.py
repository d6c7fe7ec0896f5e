"""Whole-store embedding in its own process: `python -m plur_desk.index.embed_worker PARTS_DIR`.

stdin: marshal of [(content_hash, statement)] (already deduplicated, only what has no vector yet). The texts are
tokenised once, sorted by token count and cut into batches of similar length (little padding); onnxruntime runs
with one intra-op thread per core. Every PART_SIZE vectors a part file is written atomically into PARTS_DIR, so the
work is resumable (a restart embeds only what no part holds) and the window's semantic search can use what is
done. One line per part on stdout: `<done> <total>`. The window's process keeps its interpreter and cores for the
reviewer: this process runs at a lower priority.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

PART_SIZE = 2048
BATCH = 64


def embed_all(pairs: list[tuple[str, str]], parts: Path, report: Callable[[int, int], None]) -> int:
    from plur_desk.index.embeddings import Embedder, tokenize

    path = Embedder.model_file()
    if path is None or not pairs:
        return 0
    embedder = Embedder(path, threads=os.cpu_count() or 1)
    tokens = [tokenize(text) for _key, text in pairs]
    order = sorted(range(len(pairs)), key=lambda i: len(tokens[i]))
    parts.mkdir(parents=True, exist_ok=True)
    done = 0
    for first in range(0, len(order), PART_SIZE):
        chunk = order[first : first + PART_SIZE]
        vectors = np.concatenate(
            [embedder.embed_tokens([tokens[i] for i in chunk[b : b + BATCH]]) for b in range(0, len(chunk), BATCH)]
        )
        keys = np.array([pairs[i][0] for i in chunk], dtype=str)
        target = parts / f"part-{os.getpid()}-{first // PART_SIZE:05d}.npz"
        tmp = target.with_suffix(".tmp.npz")
        np.savez(tmp, keys=keys, vectors=vectors.astype(np.float16))
        tmp.replace(target)
        done += len(chunk)
        report(done, len(pairs))
    return done


def start(pairs: list[tuple[str, str]], parts: Path, nice: int = 5) -> subprocess.Popen[bytes]:
    """The worker process, fed its work; read its progress lines from `.stdout`. `nice`: how far below the
    window's priority it runs (the reviewer's actions come first)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "plur_desk.index.embed_worker", str(parts), str(nice)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
    )
    assert proc.stdin is not None
    try:
        proc.stdin.write(marshal.dumps(pairs))
        proc.stdin.close()
    except OSError:
        proc.kill()
    return proc


def _main() -> None:
    with contextlib.suppress(OSError):
        os.nice(int(sys.argv[2]))
    pairs = marshal.loads(sys.stdin.buffer.read())

    def report(done: int, total: int) -> None:
        sys.stdout.write(f"{done} {total}\n")
        sys.stdout.flush()

    embed_all(pairs, Path(sys.argv[1]), report)


if __name__ == "__main__":
    _main()
