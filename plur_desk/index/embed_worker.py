"""Whole-store embedding in its own process: `python -m plur_desk.index.embed_worker PARTS_DIR [NICE]`.

stdin: marshal frames, one after another, each of a list of (content_hash, statement) pairs (already deduplicated,
only what has no vector yet; FEED_PIECE pairs a frame: one `marshal.dumps` of 50,000 pairs held the window's
interpreter lock 40-50 ms as the embedding started at a store's open). The texts go
shortest first, PART_SIZE at a time: each part is tokenised, sorted by token count and cut into batches of equal
or nearly equal length (almost no padding; embeddings.length_batches); the batches run on one
onnxruntime session from one thread per core (session.run releases the GIL; one intra-op thread each, so a core
taken by another program stalls one batch, not a barrier in every layer). The next part is tokenised while the current one runs. Every part is written atomically
into PARTS_DIR, so the work is resumable (a restart embeds only what no part holds) and the window's semantic
search can use what is done. One line per part on stdout: `<done> <total>`. The window's process keeps its
interpreter and cores for the reviewer: this process runs niced and, on Linux, in the SCHED_IDLE class.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import BinaryIO

import numpy as np

from plur_desk.infra.jobs import give_way
from plur_desk.infra.workers import worker_command

PART_SIZE = 2048
FEED_PIECE = 2000  # pairs per marshal frame on the worker's stdin


def embed_all(
    pairs: list[tuple[str, str]],
    parts: Path,
    report: Callable[[int, int], None],
    model: Path | None = None,
    threads: int | None = None,
) -> int:
    from plur_desk.index.embeddings import Embedder, length_batches, tokenize

    path = model or Embedder.model_file()
    if path is None or not pairs:
        return 0
    threads = threads or os.cpu_count() or 1
    embedder = Embedder(path, threads=1)
    pairs = sorted(pairs, key=lambda pair: len(pair[1]))  # parts of similar lengths: little padding at their edges
    parts.mkdir(parents=True, exist_ok=True)
    done = 0
    with ThreadPoolExecutor(max_workers=threads) as pool:
        chunk = pairs[:PART_SIZE]
        tokens = [tokenize(text) for _key, text in chunk]
        for first in range(0, len(pairs), PART_SIZE):
            groups = length_batches(tokens, embedder.batch_tokens)
            running: list[Future[np.ndarray]] = [
                pool.submit(embedder.embed_tokens, [tokens[i] for i in rows]) for rows in groups
            ]
            following = pairs[first + PART_SIZE : first + 2 * PART_SIZE]
            next_tokens = [tokenize(text) for _key, text in following]  # while this part's batches run
            vectors = np.zeros((len(chunk), running[0].result().shape[1]), dtype=np.float32)
            for rows, future in zip(groups, running, strict=True):
                vectors[rows] = future.result()
            _write_part(parts, first // PART_SIZE, [key for key, _text in chunk], vectors)
            done += len(chunk)
            report(done, len(pairs))
            chunk, tokens = following, next_tokens
    return done


def _write_part(parts: Path, number: int, keys: list[str], vectors: np.ndarray) -> None:
    target = parts / f"part-{os.getpid()}-{number:05d}.npz"
    tmp = target.with_suffix(".tmp.npz")
    np.savez(tmp, keys=np.array(keys, dtype=str), vectors=vectors.astype(np.float16))
    tmp.replace(target)


def start(
    pairs: list[tuple[str, str]], parts: Path, nice: int = 5, model: Path | None = None
) -> subprocess.Popen[bytes]:
    """The worker process, fed its work; read its progress lines from `.stdout`. `nice`: how far below the
    window's priority it runs (the reviewer's actions come first). `model`: Embedder.model_file() when None,
    resolved here and passed on, so the vectors are the ones this process's cache is kept for (vectors_file)."""
    from plur_desk.index.embeddings import Embedder

    model = model if model is not None else Embedder.model_file()
    extra = [str(model)] if model is not None else []
    argv, env = worker_command("plur_desk.index.embed_worker", str(parts), str(nice), *extra)
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
    )
    assert proc.stdin is not None
    try:
        for first in range(0, len(pairs), FEED_PIECE):
            give_way()  # each frame is one C call that keeps the interpreter lock: a repaint goes first
            proc.stdin.write(marshal.dumps(pairs[first : first + FEED_PIECE]))
        proc.stdin.close()
    except OSError:
        proc.kill()
    return proc


def read_pairs(stream: BinaryIO) -> list[tuple[str, str]]:
    """Every frame `start` wrote, until the end of the stream."""
    pairs: list[tuple[str, str]] = []
    while True:
        try:
            pairs.extend(marshal.load(stream))
        except EOFError:
            return pairs


def _main() -> None:
    with contextlib.suppress(OSError):
        os.nice(int(sys.argv[2]))
    # Linux: run only on CPU time nobody else in this session wants, so the reviewer's actions are not slowed
    # (bench_embed --approve: median 131/223 ms with it running vs 153/192 ms without; at nice 5 alone, ~2x).
    with contextlib.suppress(OSError, AttributeError):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))  # type: ignore[attr-defined,unused-ignore]
    pairs = read_pairs(sys.stdin.buffer)

    def report(done: int, total: int) -> None:
        sys.stdout.write(f"{done} {total}\n")
        sys.stdout.flush()

    try:
        embed_all(pairs, Path(sys.argv[1]), report, model=Path(sys.argv[3]) if len(sys.argv) > 3 else None)
    except BrokenPipeError:
        # The window is gone (closed, or its process ended): every finished part is on disk and the next start
        # resumes from there. Nothing to report to anyone, so no traceback on the terminal it was started from.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)


if __name__ == "__main__":
    _main()
