"""`plur-desk writers [STORE] [--json]` and `plur-desk clusters [STORE] [--json]`: read-only terminal views."""

from __future__ import annotations

import argparse
import json
import sys

from plur_desk.app.scale.review_at_scale import ScaleView
from plur_desk.infra.errors import PlurDeskError
from plur_desk.infra.paths import cache_dir, default_store_path, store_parser


def _parser(name: str, description: str) -> argparse.ArgumentParser:
    return store_parser(name, description + " Writes nothing to the store.")


def _open(name: str, store: str | None, semantic: bool) -> ScaleView | None:
    from plur_desk.app.review.bootstrap import open_session

    try:
        session = open_session(default_store_path(store), "cli")
    except PlurDeskError as exc:
        print(f"plur-desk {name}: {exc}", file=sys.stderr)
        return None
    view = ScaleView.open(session, cache_dir(), semantic=semantic)
    view.refresh()
    for _again in range(3):  # a month file changed while it was read: read the history again
        if not view.stale:
            return view
        session.reload_if_changed()
        view.refresh()
    print(f"plur-desk {name}: the history keeps changing on disk while it is read; try again", file=sys.stderr)
    return None


def writers_main(argv: list[str]) -> int:
    parser = _parser("writers", "The writer ledger: what reviewers made of each agent's drafts.")
    args = parser.parse_args(argv)
    view = _open("writers", args.store, semantic=False)
    if view is None:
        return 2
    stats = view.writers()
    if args.json:
        print(json.dumps({"writers": [s.to_json() for s in stats]}, indent=2, ensure_ascii=False))
        return 0
    print(f"{'writer':<44}{'drafts':>7}{'appr':>6}{'+edit':>6}{'rej':>6}{'pend':>6}{'med h':>8}  30d drafts/appr/rej")
    for s in stats:
        median = f"{s.median_hours_to_decision:.1f}" if s.median_hours_to_decision is not None else "-"
        recent = "/".join(str(v) for v in s.last30[:3])
        print(
            f"{s.writer.label[:43]:<44}{s.drafts:>7}{s.approved:>6}{s.approved_after_edit:>6}{s.rejected:>6}"
            f"{s.pending:>6}{median:>8}  {recent}"
        )
        for reason, count in s.rejected_by_reason[:3]:
            print(f"    rejected {count} x {reason}")
    return 0


def clusters_main(argv: list[str]) -> int:
    parser = _parser("clusters", "Clusters of near-duplicate drafts, each member with the similarity that joined it.")
    parser.add_argument(
        "--no-semantic", action="store_true", help="word overlap only, even when the model is installed"
    )
    args = parser.parse_args(argv)
    view = _open("clusters", args.store, semantic=not args.no_semantic)
    if view is None:
        return 2
    clusters = view.clusters()
    if args.json:
        out = {
            "method": view.index.mode,
            "threshold": view.index.threshold,
            "clusters": [
                {
                    "representative": c.representative,
                    "approved": list(c.approved),
                    "members": [
                        {
                            "id": m.id,
                            "draft": m.draft,
                            "scope": m.scope,
                            "joined_by": m.joined_by,
                            "similarity": round(m.similarity, 4),
                            "statement": m.statement,
                        }
                        for m in c.members
                    ],
                }
                for c in clusters
            ],
        }
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    for c in clusters:
        note = f" (already approved: {', '.join(c.approved)})" if c.approved else ""
        print(f"cluster of {c.size} around {c.representative}{note}")
        for m in c.members:
            kind = "draft" if m.draft else "approved"
            print(f"  {m.id}\t{m.similarity:.3f}\t{m.joined_by}\t{kind}\t{m.statement}")
    n = len(clusters)
    print(f"({n} cluster{'' if n == 1 else 's'}; {view.index.mode}, threshold {view.index.threshold})", file=sys.stderr)
    return 0
