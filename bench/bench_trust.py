"""Cost of verifying human claims: signing, a History trust filter (cold and cached), tombstones, `check`.

    python bench/bench_trust.py [--lines 200000] [--human 0.1]

Writes a history in PLUR 0.20's shape where a fraction of the lines are human claims signed by a registered key
(a few of them tampered), then times what the app does with them. Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey  # noqa: E402

from plur_desk.app.history.history_index import HistoryFilter, HistoryIndex  # noqa: E402
from plur_desk.app.trust.verifier import TrustChecker  # noqa: E402
from plur_desk.domain.trust import TrustState  # noqa: E402
from plur_desk.store.history.chain import js_stringify  # noqa: E402
from plur_desk.store.history.log import HistoryLog  # noqa: E402
from plur_desk.store.keys.keys_file import register_key  # noqa: E402
from plur_desk.store.keys.signatures import public_key_b64, sign  # noqa: E402


def _write(root: Path, lines: int, human: float) -> float:
    key = Ed25519PrivateKey.generate()
    register_key(root, "human:Ada", public_key_b64(key), "2026-01-01T00:00:00.000Z")
    rng = random.Random(7)
    (root / "history").mkdir()
    signing = 0.0
    with open(root / "history" / "2026-12.jsonl", "w") as handle:
        for i in range(lines):
            event: dict[str, object] = {
                "event": "engram_retired" if i % 3 == 0 else "engram_updated",
                "engram_id": f"ENG-2026-12-01-{i:06d}",
                "timestamp": f"2026-12-01T10:{i // 60000 % 60:02d}:{i // 1000 % 60:02d}.{i % 1000:03d}Z",
                "data": {"action": "reject", "reason": "no", "content_hash": f"{i:064d}"},
            }
            if rng.random() < human:
                event["actor"] = {"asserted_by": "Ada", "kind": "human", "runtime": {"name": "plur-desk"}}
                start = time.perf_counter()
                event = sign(event, key, "human:Ada")
                signing += time.perf_counter() - start
                if rng.random() < 0.01:
                    event["data"] = {"action": "reject", "reason": "tampered", "content_hash": "0" * 64}
            else:
                event["actor"] = {"asserted_by": "agent:miles"}
            handle.write(js_stringify(event) + "\n")
    return signing


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--human", type=float, default=0.1)
    ns = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        signing = _write(root, ns.lines, ns.human)
        index = HistoryIndex(HistoryLog(root), TrustChecker(root))
        index.load()
        humans = sum(1 for raw, _m, _n in index.lines if b'"human"' in raw)
        rows = [("sign one event (mean)", f"{signing / max(humans, 1) * 1e6:.0f} µs")]
        flt = HistoryFilter(trust=frozenset({TrustState.INVALID}))
        for label in ("History filter 'invalid signatures', first", "same filter again (cached)"):
            start = time.perf_counter()
            found = len(index.newest_first(flt))
            rows.append((label, f"{time.perf_counter() - start:.2f} s ({found} found)"))
        start = time.perf_counter()
        verdicts = index.rejections()
        rows.append(
            ("rejection tombstones (cached verdicts)", f"{time.perf_counter() - start:.2f} s ({len(verdicts)})")
        )
        print(f"{ns.lines:,} lines, {humans:,} signed human claims\n")
        print("| step | time |\n|---|---|")
        print("\n".join(f"| {a} | {b} |" for a, b in rows))
        print(json.dumps({"lines": ns.lines, "humans": humans}))


if __name__ == "__main__":
    main()
