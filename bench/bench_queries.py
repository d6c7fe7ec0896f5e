"""What the window asks the app layer after a decision, headless, at 50,000 engrams and a million history lines:
the drafts queue after one and after a second approve, one engram's timeline, the rejection verdicts, all tension
rows. Run it once per checkout to put two versions side by side (the same store, the same history):

    python bench/bench_queries.py [--checkout PATH] [--engrams 50000] [--drafts 0.2] [--history-lines 1000000]

The store is the real PLUR's (bench_stall.py's template); the history is bench_stall.py's. PLUR has no queue,
timeline or verdicts of its own to compare with.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkout", type=Path, default=HERE, help="the plur_desk checkout to measure")
    parser.add_argument("--engrams", type=int, default=50000)
    parser.add_argument("--drafts", type=float, default=0.2)
    parser.add_argument("--history-lines", type=int, default=1_000_000)
    args = parser.parse_args()
    root = args.checkout.resolve()
    sys.path[:0] = [str(root), str(HERE / "bench"), str(HERE / "tests")]
    work = Path(tempfile.mkdtemp(prefix="bench-queries-"))
    for name in ("XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        os.environ[name] = str(work / name.lower())
    from bench_stall import template_store, write_history  # (puts this checkout on sys.path: ours goes first)

    sys.path.insert(0, str(root))
    import plur_desk
    from plur_desk.app.review.session import ReviewSession
    from plur_desk.domain.commands import ApproveDrafts
    from plur_desk.domain.review import Reviewer
    from plur_desk.store.plur_store import PlurStore

    assert str(plur_desk.__file__).startswith(str(root)), plur_desk.__file__
    store = work / "store"
    shutil.copytree(template_store(args.engrams, args.drafts), store)
    ids = [x.split(": ", 1)[1].strip() for x in (store / "engrams.yaml").open() if x.startswith("  - id: ")]
    write_history(store, args.history_lines, ids)
    session = ReviewSession(PlurStore(store), Reviewer("Bench Reviewer"))
    session.store.load()
    session.snapshot.reindex()
    session.load_history()
    out: dict[str, object] = {"checkout": str(root)}

    def timed(name: str, fn) -> object:  # type: ignore[no-untyped-def]
        began = time.perf_counter()
        result = fn()
        out[name] = round((time.perf_counter() - began) * 1000, 1)
        return result

    rows = timed("drafts() first", session.queue.rows)
    out["drafts"] = len(rows)  # type: ignore[arg-type]
    session.execute(ApproveDrafts(tuple(session.writes.seen([rows[0].id]))))  # type: ignore[index]
    timed("drafts()+counts() after the first approve", lambda: (session.queue.rows(), session.counts()))
    session.execute(ApproveDrafts(tuple(session.writes.seen([rows[1].id]))))  # type: ignore[index]
    timed("drafts()+counts() after a second approve", lambda: (session.queue.rows(), session.counts()))
    timed("timeline(one engram)", lambda: session.history.timeline(rows[5].id))  # type: ignore[index]
    timed("rejections()", session.history.rejections)
    timed("tensions(all)", lambda: session.tensions(("detected", "confirmed", "dismissed", "resolved")))
    out["load average"] = os.getloadavg()[0]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
