"""A/B of the warm open of a big store with signed decisions: two checkouts (today's main, this branch), each in
fresh processes, side by side with a warm PLUR `list()`.

    python bench/bench_trust_open.py OLD_CHECKOUT NEW_CHECKOUT [--engrams 50000] [--lines 1000000] [--rounds 5]

The store (made once under --stores, kept for later runs): engrams in PLUR's layout (8 % drafts, statements and
content hashes of their own), a history of --lines lines over twelve months, 1 % of them `kind: human` decisions
signed by the reviewer (a third of those rejections: the queue's tombstones verify each one when the history
loads). The reviewer's key is registered in keys.yaml (what today's code trusts) and is this user's own key in the
trust file (what this branch trusts). Timed: the drafts-first open until the first draft can be shown (warm parse
cache) and the whole history loaded with every verdict the queue needs; CPU and wall, min and median.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

CODE = r"""
import json, sys, time
from pathlib import Path
from plur_desk.app import bootstrap, loading

fill = sys.argv[2] == "fill"
cpu, wall = time.process_time(), time.perf_counter()
session = bootstrap.open_session(
    Path(sys.argv[1]), "Bench", ask_unlock=lambda _m: False, drafts_first=not fill, load_history=fill, for_review=True
)
out = {}
if not fill:
    loading.before_first_draft(session)
    out["first_cpu"], out["first_wall"] = time.process_time() - cpu, time.perf_counter() - wall
    cpu, wall = time.process_time(), time.perf_counter()
    loading.load_history(session)
    out["history_cpu"], out["history_wall"] = time.process_time() - cpu, time.perf_counter() - wall
    out["valid"] = sum(1 for v in session.history.rejections().values() if v.trust.counts_as_human)
print(json.dumps(out))
"""


def make_store(engrams: int, lines: int, stores: Path) -> tuple[Path, str]:
    """The store, and the reviewer's public key (its private key is kept beside the store, never in it)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from plur_desk.domain.plur_rules.derived import content_hash
    from plur_desk.store.keys.keys_file import register_key
    from plur_desk.store.keys.signatures import load_private_key, private_key_der, public_key_b64, sign
    from plur_desk.store.lists.yaml_dump import dump_engrams_document

    store = stores / f"t{engrams}-{lines}"
    key_file = stores / f"t{engrams}-{lines}.key"
    if (store / ".complete").exists():
        return store, public_key_b64(load_private_key(key_file.read_bytes()))
    shutil.rmtree(store, ignore_errors=True)
    (store / "history").mkdir(parents=True)
    key = Ed25519PrivateKey.generate()
    key_file.write_bytes(private_key_der(key))
    rng = random.Random(3)
    words = [
        "build",
        "cache",
        "deploy",
        "review",
        "test",
        "branch",
        "release",
        "schema",
        "queue",
        "token",
        "index",
        "secret",
    ]
    items, ids = [], []
    for i in range(engrams):
        statement = f"Engram {i}: " + " ".join(rng.choice(words) for _ in range(8))
        engram_id = f"ENG-2025-{i // 1000 % 12 + 1:02d}-{i % 28 + 1:02d}-{i:06d}"
        ids.append(engram_id)
        items.append(
            {
                "id": engram_id,
                "version": 2,
                "status": "active",
                "type": "behavioral",
                "scope": rng.choice(["project:web", "project:api"]),
                "statement": statement,
                "commitment": "draft" if rng.random() < 0.08 else "decided",
                "created_at": "2025-06-01T10:00:00.000Z",
                "content_hash": content_hash(statement),
            }
        )
    (store / "engrams.yaml").write_text(dump_engrams_document({"engrams": items}))
    register_key(store, "human:Bench", public_key_b64(key), "2025-01-01T00:00:00.000Z")
    per = lines // 12
    for month in range(1, 13):
        with open(store / "history" / f"2025-{month:02d}.jsonl", "w") as handle:
            for i in range(per):
                stamp = f"2025-{month:02d}-01T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}.{i % 1000:03d}Z"
                engram_id = rng.choice(ids)
                event: dict[str, object] = {"event": "engram_updated", "engram_id": engram_id, "timestamp": stamp}
                if rng.random() < 0.01:
                    reject = rng.random() < 1 / 3
                    event["event"] = "engram_retired" if reject else "engram_updated"
                    event["data"] = (
                        {"action": "reject", "reason": "no", "content_hash": f"{rng.getrandbits(256):064x}"}
                        if reject
                        else {"action": "approve", "field": "commitment", "from": "draft", "to": "decided"}
                    )
                    event["actor"] = {"asserted_by": "Bench", "kind": "human", "runtime": {"name": "plur-desk"}}
                    event = sign(event, key, "human:Bench")
                else:
                    event["data"] = {"type": "behavioral"}
                    event["actor"] = {"asserted_by": "agent:codex", "runtime": {"name": "plur-core"}}
                handle.write(json.dumps(event, separators=(",", ":")) + "\n")
    (store / ".complete").write_text("")
    return store, public_key_b64(key)


def run(checkout: Path, work: Path, mode: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(checkout), "XDG_CACHE_HOME": str(work / "cache")}
    env["XDG_CONFIG_HOME"], env["XDG_DATA_HOME"] = str(work / "config"), str(work / "data")
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    proc = subprocess.run(
        [sys.executable, "-c", CODE, str(work / "store"), mode],
        capture_output=True,
        text=True,
        env=env,
        cwd=work,
        timeout=3600,
        check=True,
    )
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def plur_list(store: Path, home: Path) -> float:
    from support.node import plur_env, run_node

    home.mkdir(parents=True, exist_ok=True)
    env = plur_env(store, home)
    run_node("bench_plur.mjs", payload={"op": "list"}, env=env, timeout=3600)  # cold: the warm one is timed
    result = run_node("bench_plur.mjs", payload={"op": "list"}, env=env, timeout=3600)
    assert isinstance(result, dict)
    return float(result["seconds"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--engrams", type=int, default=50_000)
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--stores", type=Path, default=Path(tempfile.gettempdir()) / "plur-desk-bench-trust")
    args = parser.parse_args()
    store, public_key = make_store(args.engrams, args.lines, args.stores)
    base = Path(tempfile.mkdtemp(prefix="plur-trust-open-"))
    checkouts = {"today": args.old, "verified": args.new}
    for name, checkout in checkouts.items():
        shutil.copytree(store, base / name / "store")
        trust = base / name / "config" / "plur-desk" / "trusted-keys.json"  # the user's own key (this branch)
        trust.parent.mkdir(parents=True)
        entry = {"identity": "human:Bench", "public_key": public_key, "source": "own", "added_at": "x"}
        trust.write_text(json.dumps({"schema_version": 1, "keys": [entry]}))
        run(checkout, base / name, "fill")
    results: dict[str, list[dict[str, float]]] = {name: [] for name in checkouts}
    loads = [os.getloadavg()[0]]
    for index in range(args.rounds):
        for name in list(checkouts)[:: 1 if index % 2 == 0 else -1]:
            results[name].append(run(checkouts[name], base / name, "open"))
    loads.append(os.getloadavg()[0])
    listed = plur_list(base / "today" / "store", base / "node-home")
    print(f"{args.engrams:,} engrams, {args.lines:,} history lines; {args.rounds} alternated rounds\n")
    print("| | first draft CPU (min / median) | first draft wall | history + verdicts CPU | history wall | valid |")
    print("|---|---|---|---|---|---|")
    for name, runs in results.items():
        cells = []
        for key in ("first_cpu", "first_wall", "history_cpu", "history_wall"):
            values = [r[key] for r in runs]
            cells.append(f"{min(values):.2f} / {statistics.median(values):.2f} s")
        print(f"| {name} | " + " | ".join(cells) + f" | {int(runs[0]['valid'])} |")
    print(f"| PLUR list() warm | {listed:.2f} s | | | | |")
    print(f"\nload average {loads[0]:.1f} -> {loads[1]:.1f}")
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
