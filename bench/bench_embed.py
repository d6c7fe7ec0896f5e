"""Whole-store embedding throughput, as the window runs it: one separate process (plur_desk.index.embed_worker),
each distinct content_hash once, token-length-bucketed batches, one onnxruntime session run from one thread per
core, vectors written in parts as it goes (resumable).

    python bench/bench_embed.py STORE [STORE ...] [--rounds 1] [--limit N] [--nice 0] [--stages 4096] [--out FILE]

Per store and model (the model package's file, and the int8-compute model packaging/build_embed_model.py derives
from it, alternating in each round): wall time, statements/s, the worker's CPU seconds (user + system, from
wait4) and the rate the same CPU work gives on all cores of an otherwise idle machine ("cpu-bound /s" =
statements x cores / CPU seconds), with the load average at the start and end. `--stages N` adds a single-thread
per-stage profile on N statements (tokenise, pad, session.run, pool + normalise, write) and the cosine between the
two models' vectors for those statements.

Use stores where every engram has its own statement and content_hash: tests/node/make_store.mjs with rng
"mulberry32" (the default generator repeats about 225 statements, which makes embedding look free), e.g.
`echo '{"n":50000,"rng":"mulberry32"}' | PLUR_PATH=/tmp/s50k node tests/node/make_store.mjs`.
PLUR embeds nothing in bulk (it embeds on learn() when enabled), so there is no PLUR figure to put beside these.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from plur_desk.index import embed_worker  # noqa: E402
from plur_desk.index.embeddings import (  # noqa: E402
    DERIVED_MODEL,
    Embedder,
    _tokenize_reference,
    length_batches,
    tokenize,
)
from plur_desk.store.plur_store import PlurStore  # noqa: E402


def distinct_statements(root: Path) -> tuple[int, list[tuple[str, str]]]:
    store = PlurStore(root)
    store.load()
    by_hash: dict[str, str] = {}
    for entry in store.engrams.entries:
        value = entry.value
        if entry.valid and isinstance(value, dict) and isinstance(value.get("content_hash"), str):
            by_hash.setdefault(str(value["content_hash"]), str(value.get("statement", "")))
    return len(store.engrams.entries), list(by_hash.items())


def run_worker(pairs: list[tuple[str, str]], model: Path, nice: int) -> dict[str, float]:
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        proc = embed_worker.start(pairs, Path(tmp) / "parts", nice, model=model)
        first = None
        assert proc.stdout is not None
        for _line in proc.stdout:
            first = first or time.perf_counter() - t0
        _pid, status, usage = os.wait4(proc.pid, 0)
        took = time.perf_counter() - t0
        written = sum(len(np.load(p)["keys"]) for p in (Path(tmp) / "parts").glob("part-*.npz"))
    assert status == 0 and written == len(pairs), (status, written)
    cpu = usage.ru_utime + usage.ru_stime
    cores = os.cpu_count() or 1
    return {
        "seconds": took,
        "per_s": len(pairs) / took,
        "cpu_s": cpu,
        "cpu_bound_per_s": len(pairs) * cores / cpu,
        "first_part_s": first or 0.0,
        "rss_mb": usage.ru_maxrss / 1024,
        "load": (load0 + os.getloadavg()[0]) / 2,
    }


def stages(pairs: list[tuple[str, str]], models: dict[str, Path]) -> str:
    """One thread, in process: where the time of one statement goes, per model (CPU ms per statement)."""
    texts = [text for _key, text in pairs]
    t0 = time.process_time()
    tokens = [tokenize(text) for text in texts]
    tokenize_ms = 1000 * (time.process_time() - t0) / len(texts)
    t0 = time.process_time()
    for text in texts:
        _tokenize_reference(text)
    reference_ms = 1000 * (time.process_time() - t0) / len(texts)
    lines = [
        f"tokenise: {tokenize_ms:.3f} CPU ms / statement memoised per word (this store's vocabulary is small), "
        f"{reference_ms:.3f} without the memo (any vocabulary's worst case)"
    ]
    vectors = {}
    for name, path in models.items():
        embedder = Embedder(path, threads=1)
        pad = run = pool = 0.0
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for rows in length_batches(tokens, embedder.batch_tokens):
            c0 = time.process_time()
            width = max(len(tokens[i]) for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            for r, i in enumerate(rows):
                ids[r, : len(tokens[i])] = tokens[i]
                mask[r, : len(tokens[i])] = 1
            c1 = time.process_time()
            hidden = embedder.session.run(
                None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            )[0]
            c2 = time.process_time()
            summed = (hidden * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
            out[rows] = summed / np.linalg.norm(summed, axis=1, keepdims=True)
            c3 = time.process_time()
            pad, run, pool = pad + c1 - c0, run + c2 - c1, pool + c3 - c2
        c0 = time.process_time()
        np.savez(io.BytesIO(), keys=np.array([k for k, _ in pairs], dtype=str), vectors=out.astype(np.float16))
        write = time.process_time() - c0
        vectors[name] = out
        n = len(texts)
        lines.append(
            f"{name}: pad {1000 * pad / n:.3f}, session.run {1000 * run / n:.2f}, pool+normalise "
            f"{1000 * pool / n:.3f}, write {1000 * write / n:.3f} CPU ms / statement"
        )
    if len(vectors) == 2:
        a, b = vectors.values()
        cos = np.sum(a * b, axis=1)
        lines.append(
            f"cosine derived vs package over {len(cos)} statements: min {cos.min():.4f}, 1st percentile "
            f"{np.percentile(cos, 1):.4f}, mean {cos.mean():.4f}"
        )
    padded = sum(
        len(rows) * max(len(tokens[i]) for i in rows) for rows in length_batches(tokens, embedder.batch_tokens)
    )
    real = sum(len(t) for t in tokens)
    lines.append(f"tokens per statement {real / len(tokens):.1f}; padding {100 * (padded - real) / real:.1f} %")
    return "\n".join(lines)


def approve_latency(root: Path, pairs: list[tuple[str, str]], rounds: int, per_round: int = 10) -> str:
    """Approve one draft at a time (median, ms) on a copy of the store, alternating: no embedding, then the embedding
    process running on the whole store as the window starts it (nice 5, SCHED_IDLE on Linux)."""
    import shutil

    from plur_desk.app.review.session import ReviewSession
    from plur_desk.domain.commands import ApproveDrafts
    from plur_desk.domain.review import Reviewer

    times: dict[str, list[float]] = {
        "without embedding": [],
        "with the embedding process (as the window starts it)": [],
    }
    with tempfile.TemporaryDirectory() as tmp:
        store = PlurStore(shutil.copytree(root, Path(tmp) / "store"))
        store.load()
        session = ReviewSession(store, Reviewer("bench"))
        drafts = [row.id for row in session.queue.rows()]
        for _ in range(rounds):
            for label in times:
                proc = embed_worker.start(pairs, Path(tmp) / "parts", 5) if label.startswith("with the") else None
                time.sleep(3 if proc else 0)  # past the model load: the worker is running batches
                for _ in range(per_round):
                    draft = drafts.pop()
                    t0 = time.perf_counter()
                    session.execute(ApproveDrafts(tuple(session.writes.seen([draft]))))
                    times[label].append(time.perf_counter() - t0)
                if proc is not None:
                    proc.kill()
                    proc.wait()
    return "\n".join(
        f"approve one draft, {label}: median {1000 * statistics.median(v):.0f} ms, "
        f"max {1000 * max(v):.0f} ms ({len(v)} approvals)"
        for label, v in times.items()
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("stores", type=Path, nargs="+")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=1, help="throughput rounds per model (0: none)")
    parser.add_argument("--nice", type=int, default=0, help="the window runs it at 5; 0 measures throughput alone")
    parser.add_argument("--stages", type=int, default=0, help="statements for the per-stage profile (0: none)")
    parser.add_argument("--only", choices=["package", "derived"], default=None)
    parser.add_argument("--approve", type=int, default=0, help="rounds of the approve-latency comparison (0: none)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    package = Embedder.package_model_file()
    assert package is not None, "the embeddings extra must be installed"
    models = {"package model": package}
    if Embedder.model_file() == DERIVED_MODEL:
        models["derived int8-compute model"] = DERIVED_MODEL
    if args.only:
        models = {k: v for k, v in models.items() if k.startswith(args.only)}
    rows = [
        "| store (engrams) | distinct statements | model | time | statements / s | worker CPU s | "
        "cpu-bound / s on all cores | first part | worker peak RSS | load average |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    profile = []
    for root in args.stores:
        engrams, every = distinct_statements(root)
        pairs = every[: args.limit or None]
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in models}
        for _ in range(args.rounds):
            for name, path in models.items():
                runs[name].append(run_worker(pairs, path, args.nice))
                print(name, {k: round(v, 1) for k, v in runs[name][-1].items()}, flush=True)
        for name, got in [(name, got) for name, got in runs.items() if got]:

            def med(key: str, got: list[dict[str, float]] = got) -> float:
                return statistics.median(r[key] for r in got)

            span = (
                f" [{min(r['seconds'] for r in got):.1f}–{max(r['seconds'] for r in got):.1f}]" if len(got) > 1 else ""
            )
            rows.append(
                f"| {engrams:,} | {len(pairs):,} | {name} | {med('seconds'):.1f} s{span} | {med('per_s'):.0f} | "
                f"{med('cpu_s'):.1f} | {med('cpu_bound_per_s'):.0f} | {med('first_part_s'):.1f} s | "
                f"{med('rss_mb'):.0f} MB | {med('load'):.1f} |"
            )
        if args.approve:
            profile.append(
                f"{root.name}, load {os.getloadavg()[0]:.1f}:\n" + approve_latency(root, every, args.approve)
            )
        if args.stages:
            profile.append(f"stages, {root.name}, {args.stages} statements:\n" + stages(pairs[: args.stages], models))
    report = "\n".join([*rows, "", *profile, "", f"cores {os.cpu_count()}, nice {args.nice}, rounds {args.rounds}"])
    print(report)
    if args.out:
        args.out.write_text(report + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
