"""Review at scale for one open session: the writer ledger, near-duplicate clusters and the risk order.

Everything is derived and kept incrementally: `refresh()` feeds the ledger only the history lines it has not
seen and compares only new or changed engrams for clusters; it is safe to call after every ChangeSet. Only
`settle()` and `split()` change anything, and `settle()` goes through the session (audited, undoable).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from plur_desk.app.clusters import Cluster, ClusterIndex, make_cluster_index
from plur_desk.app.history_table import MonthChanged
from plur_desk.app.rows import DraftRow, created_of, draft_row
from plur_desk.app.session import ChangeSet, ReviewSession
from plur_desk.app.writer_stats import WriterKey, WriterStats, writer_key
from plur_desk.app.writers import Ledger, Line
from plur_desk.domain.engram_view import is_draft
from plur_desk.domain.risk import Risk, RiskInput, assess
from plur_desk.infra.errors import ActionRefused

_Prepared = tuple[int, int, float | None, str, int]  # writer rejected, decided; nearest approved; cluster
RISK_ORDER_FROM = 36  # the queue opens in risk order once a store has more drafts than this


class RiskRow(NamedTuple):
    row: DraftRow
    risk: Risk
    cluster: str  # representative id of its cluster, "" when alone
    cluster_size: int


class ScaleView:
    def __init__(self, session: ReviewSession, clusters: ClusterIndex | None = None) -> None:
        self.session = session
        self.ledger = Ledger(trust=session.trust)  # only validly signed decisions count
        self.stale = False  # the last refresh met a month file that changed since its snapshot of the history
        self.index = clusters if clusters is not None else ClusterIndex()
        self._stats: dict[WriterKey, WriterStats] = {}
        self._clusters: list[Cluster] = []
        self._prepared: dict[str, _Prepared] = {}
        self._ready: dict[tuple[str, str, tuple[str, ...], str], RiskRow] = {}

    @classmethod
    def open(cls, session: ReviewSession, cache_root: Path | None, semantic: bool = True) -> ScaleView:
        """With the search index's vector cache, so drafts already embedded for search are not embedded again."""
        path = None
        if cache_root is not None:
            digest = hashlib.sha256(str(session.root).encode()).hexdigest()[:16]
            from plur_desk.index.embeddings import vectors_file  # numpy: not before the first draft

            path = vectors_file(cache_root / "stores" / digest)
        return cls(session, make_cluster_index(path, semantic))

    # -- upkeep --------------------------------------------------------------------------------------------

    def refresh(self) -> None:
        self.refresh_from(list(self.session.all_engrams()), self.session.history.lines, self.session.now())

    def refresh_from(
        self, engrams: list[dict[str, object]], lines: Sequence[Line], now: datetime, level: str = "decided"
    ) -> None:
        """From a snapshot taken on the caller's thread, so the work can run on another one; results are
        swapped in at the end, so a reader sees either the old or the new ledger and clusters. A month file that
        changed since the snapshot was taken (an agent's rewrite, a git pull) leaves the results as they were and
        `stale` set: compute again once the history is read again."""
        try:
            self.ledger.sync(lines)  # fed up to the lines read: a new list of lines (the reload) starts it over
        except MonthChanged:
            self.stale = True
            return
        self.stale = False
        stats = {s.writer: s for s in self.ledger.stats(engrams, now)}
        self.index.update(engrams, created_of)
        if self.index.cache is not None:
            self.index.cache.save()
        clusters = self.index.clusters()
        prepared = self._prepare(engrams, stats, clusters)
        ready = self._assess_all(engrams, prepared, now, level)
        self._stats, self._clusters, self._prepared, self._ready = stats, clusters, prepared, ready

    def _assess_all(
        self, engrams: list[dict[str, object]], prepared: dict[str, _Prepared], now: datetime, level: str
    ) -> dict[tuple[str, str, tuple[str, ...], str], RiskRow]:
        """Every draft's risk, computed here so the GUI thread only looks it up (keyed by what it rests on)."""
        tension_ids, rejected = self.session.open_tension_ids(), self.session.rejected_verdicts()
        out = {}
        for engram in engrams:
            ident = str(engram.get("id"))
            if ident in prepared:
                row = draft_row(engram, now, tension_ids, rejected)
                out[(ident, row.scope, row.flags, level)] = self._risk_row(row, level, prepared[ident])
        return out

    @staticmethod
    def _risk_row(row: DraftRow, level: str, prepared: _Prepared) -> RiskRow:
        rejected, decided, nearest, representative, size = prepared
        return RiskRow(
            row, assess(RiskInput(row.scope, level, row.flags, rejected, decided, nearest)), representative, size
        )

    def _prepare(
        self, engrams: list[dict[str, object]], stats: dict[WriterKey, WriterStats], clusters: list[Cluster]
    ) -> dict[str, _Prepared]:
        """What a draft's risk needs besides its row, per draft, so ordering the queue on the GUI thread is cheap."""
        membership = {m.id: c for c in clusters for m in c.members}
        out: dict[str, _Prepared] = {}
        for engram in engrams:
            if not is_draft(engram):
                continue
            ident = str(engram.get("id"))
            writer = stats.get(writer_key(engram))
            nearest = self.index.nearest_approved.get(ident)
            cluster = membership.get(ident)
            out[ident] = (
                writer.rejected if writer else 0,
                writer.decided if writer else 0,
                round(nearest[0], 2) if nearest else None,
                cluster.representative if cluster else "",
                cluster.size if cluster else 1,
            )
        return out

    # -- queries -------------------------------------------------------------------------------------------

    def writers(self) -> list[WriterStats]:
        return sorted(self._stats.values(), key=lambda s: (-s.drafts, s.writer))

    def writer_of(self, engram_id: str) -> WriterStats | None:
        engram = self.session.engram(engram_id)
        if engram is None:
            return None
        return self._stats.get(writer_key(engram))

    def writer_line(self, engram_id: str) -> str:
        stats = self.writer_of(engram_id)
        return stats.line() if stats else ""

    def clusters(self) -> list[Cluster]:
        return list(self._clusters)

    def risk_rows(self, rows: list[DraftRow], level: str = "decided", order: str = "risk") -> list[RiskRow]:
        """Rows with their risk and cluster; in risk order (highest first) or as given."""
        ready, prepared, none = self._ready, self._prepared, (0, 0, None, "", 1)
        out = []
        for row in rows:
            found = ready.get((row.id, row.scope, row.flags, level))
            out.append(
                RiskRow(row, found.risk, found.cluster, found.cluster_size)
                if found is not None
                else self._risk_row(row, level, prepared.get(row.id, none))  # arrived since the last refresh
            )
        if order == "risk":
            out.sort(key=lambda r: (-r.risk.score, r.row.created, r.row.id))
        return out

    def default_order(self) -> str:
        return "risk" if self.session.counts()["drafts"] > RISK_ORDER_FROM else "age"

    # -- actions -------------------------------------------------------------------------------------------

    def settle(
        self, cluster: Cluster, keep: str | None = None, level: str = "decided", refresh: bool = True
    ) -> ChangeSet:
        """Keep one member (the representative unless told) and reject every other draft as its duplicate.

        A kept draft is approved; a kept approved engram stays as it is ("reject all as duplicates of ENG-…").
        One audited, undoable operation; one history event per engram.
        """
        keep = keep or cluster.representative
        member = next((m for m in cluster.members if m.id == keep), None)
        if member is None:
            raise ActionRefused(f"{keep} is not in this cluster")
        others = [m.id for m in cluster.members if m.draft and m.id != keep]
        if not others and not member.draft:
            raise ActionRefused("nothing to settle: no other draft in this cluster")
        shown = {m.id: m.statement for m in cluster.members}
        roles = {m.id: (m.scope, m.draft) for m in cluster.members}
        change = self.session.settle_duplicates(
            keep, others, approve=member.draft, level=level, shown=shown, roles=roles
        )
        if refresh:  # the window refreshes on its own runner instead
            self.refresh()
        return change

    def split(self, cluster: Cluster, engram_id: str) -> None:
        """The reviewer says this member is not a duplicate of the others; it stays apart for this session."""
        others = [m.id for m in cluster.members if m.id != engram_id]
        if len(others) == len(cluster.members):
            raise ActionRefused(f"{engram_id} is not in this cluster")
        self.index.keep_apart(engram_id, others)
        self._clusters = self.index.clusters()
