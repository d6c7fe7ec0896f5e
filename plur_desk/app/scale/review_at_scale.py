"""Review at scale for one open session: the writer ledger, near-duplicate clusters and the risk order.

Everything is derived and kept incrementally: `refresh()` feeds the ledger only the history lines it has not
seen and compares only new or changed engrams for clusters; it is safe to call after every ChangeSet. Only
`settle()` and `split()` change anything, and `settle()` goes through the session (audited, undoable).
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Mapping, Sequence
from datetime import datetime
from itertools import compress, count
from operator import attrgetter, is_, is_not, itemgetter, not_
from pathlib import Path
from typing import NamedTuple

from plur_desk.app.history.history_table import MonthChanged
from plur_desk.app.review.rows import DraftRow, created_of
from plur_desk.app.review.session import ChangeSet, ReviewSession
from plur_desk.app.scale.clusters import IN_PROCESS_MAX, Cluster, ClusterIndex, changed_ids, make_cluster_index
from plur_desk.app.scale.writer_book import WriterBook
from plur_desk.app.scale.writer_stats import WriterKey, WriterStats, writer_key
from plur_desk.app.scale.writers import Ledger, Line
from plur_desk.domain.engram_view import is_draft
from plur_desk.domain.risk import Risk, RiskInput, assess
from plur_desk.infra.errors import ActionRefused
from plur_desk.infra.jobs import checkpoint, computing, waiting
from plur_desk.infra.paths import store_cache_dir

_Prepared = tuple[int, int, float | None, str, int]  # writer rejected, decided; nearest approved; cluster
_NONE: _Prepared = (0, 0, None, "", 1)
_ID = attrgetter("id")
Key = tuple[float, str, str]  # (-score, created, id): the risk order, highest first
Records = Mapping[str, dict[str, object]]
RISK_ORDER_FROM = 36  # the queue opens in risk order once a store has more drafts than this
REBUILD = 256  # more changed keys than this: sort them all again rather than move each


class RiskRow(NamedTuple):
    row: DraftRow
    risk: Risk
    cluster: str  # representative id of its cluster, "" when alone
    cluster_size: int


class Ranking(NamedTuple):
    """One refresh's risk, handed to the GUI thread whole (new dicts every refresh, never changed afterwards)."""

    level: str
    risk: dict[str, RiskRow]  # draft id -> its risk
    rows: dict[str, DraftRow]  # draft id -> the row its risk was computed for
    rank: dict[str, int]  # draft id -> its place in risk order
    keys: dict[str, Key]
    prepared: dict[str, _Prepared]


def _shown(risk: RiskRow) -> tuple[Risk, str, int]:
    return risk.risk, risk.cluster, risk.cluster_size


class ScaleView:
    def __init__(self, session: ReviewSession, clusters: ClusterIndex | None = None) -> None:
        self.session = session
        self.ledger = Ledger(trust=session.trust)  # only validly signed decisions count
        self.book = WriterBook(self.ledger)
        self.stale = False  # the last refresh met a month file that changed since its snapshot of the history
        self.index = clusters if clusters is not None else ClusterIndex()
        self.changed: set[str] = set()  # drafts whose risk or cluster (as shown) changed in the last refresh
        self._records: Records = {}
        self._stats: dict[WriterKey, WriterStats] = {}
        self._clusters: list[Cluster] = []
        self._ranking = Ranking("", {}, {}, {}, {}, {})
        self._sorted: list[Key] = []  # the ranking's keys in order (this side's own list)
        self._members: tuple[list[Cluster], dict[str, Cluster]] = ([], {})  # clusters and who is in which
        self._writer_of: dict[str, WriterKey] = {}  # draft id -> its writer (the attribution's)
        self._drafts_of: dict[WriterKey, set[str]] = {}
        self._waiting: ClusterIndex | None = None  # the embedding clusters, taken once the store's vectors are in

    @classmethod
    def open(
        cls, session: ReviewSession, cache_root: Path | None, semantic: bool = True, wait_for_vectors: bool = False
    ) -> ScaleView:
        """With the search index's vector cache, so drafts already embedded for search are not embedded again.

        `wait_for_vectors` (the window, where the embedding process fills that cache): while more than
        `IN_PROCESS_MAX` active statements have no vector yet, clusters are by word overlap, and by embeddings from
        the first refresh that finds the vectors in. Embedding them here instead would do the embedding process's
        work a second time, in the window's process (a cold 50,000-engram store: minutes of a second ONNX run)."""
        path = None
        if cache_root is not None:
            from plur_desk.index.embeddings import vectors_file  # numpy: not before the first draft

            path = vectors_file(store_cache_dir(cache_root, session.root))
        index = make_cluster_index(path, semantic)
        view = cls(session, index)
        if wait_for_vectors and index.cache is not None:
            view.index, view._waiting = ClusterIndex(), index
        return view

    @property
    def waiting_for_vectors(self) -> bool:
        """Clusters are by word overlap until the embedding process has embedded the store."""
        return self._waiting is not None

    def _take_embeddings(self, records: Records) -> None:
        waiting = self._waiting
        if waiting is None or waiting.cache is None:
            return
        cache = waiting.cache
        cache.refresh()  # the parts the embedding process wrote since
        statements = [
            s for e in records.values() if e.get("status") == "active" and isinstance(s := e.get("statement"), str)
        ]
        if len(cache.missing(list(cache.keys_of(statements).values()))) <= IN_PROCESS_MAX:
            self.index, self._waiting = waiting, None  # every engram is compared again, with its vector

    # -- upkeep --------------------------------------------------------------------------------------------

    def refresh(self) -> None:
        self.refresh_from(self.session.engrams_by_id(), self.session.history.lines, self.session.now())

    def refresh_from(
        self,
        engrams: Records | list[dict[str, object]],
        lines: Sequence[Line],
        now: datetime,
        level: str = "decided",
        rows: list[DraftRow] | None = None,
    ) -> None:
        """From a snapshot taken on the caller's thread (the engrams, best a dict by id that is not changed
        afterwards, and the queue's rows), so the work can run on another one; results are swapped in at the end,
        so a reader sees either the old or the new ledger and clusters. A month file that changed since the
        snapshot was taken (an agent's rewrite, a git pull) leaves the results as they were and `stale` set:
        compute again once the history is read again.

        What it costs is what changed: engrams whose record object changed since the last refresh (found by
        identity, in C), ids whose history the ledger read since, drafts of writers whose counts moved, drafts
        whose cluster or nearest approved engram moved, and queue rows that are new objects.

        Computed as a turn (infra/turns.py): beside the history's indexing or the search's intake, one of them
        runs Python at a time, handing on at the steps."""
        with computing():
            self._refresh_from(engrams, lines, now, level, rows)

    def _refresh_from(
        self,
        engrams: Records | list[dict[str, object]],
        lines: Sequence[Line],
        now: datetime,
        level: str,
        rows: list[DraftRow] | None,
    ) -> None:
        checkpoint(reviewer=True)
        try:
            self.ledger.sync(lines)  # fed up to the lines read: a new list of lines (the reload) starts it over
        except MonthChanged:
            self.stale = True
            return
        self.stale = False
        records = engrams if isinstance(engrams, Mapping) else {str(e.get("id")): e for e in engrams}
        self._take_embeddings(records)
        changed = changed_ids(self._records, records)
        stats = self.book.update(records, changed, now)
        checkpoint(reviewer=True)  # between the stages, a run of decisions goes first (infra/window_first.py)
        self.index.update(records, created_of, changed if self.index.seen is self._records else None)
        if self.index.cache is not None:
            with waiting():  # (writing the vectors to disk: not computing, another computation's turn meanwhile)
                self.index.cache.save()
        clusters = self.index.clusters()
        checkpoint(reviewer=True)
        prepared, moved = self._prepare(records, changed, stats, clusters)
        checkpoint(reviewer=True)
        ranking, shown = self._assess(self.session.queue.rows() if rows is None else rows, prepared, moved, level)
        self._records, self._stats, self._clusters, self._ranking, self.changed = (
            records, stats, clusters, ranking, shown
        )  # fmt: skip

    def _prepare(
        self, records: Records, changed: set[str], stats: dict[WriterKey, WriterStats], clusters: list[Cluster]
    ) -> tuple[dict[str, _Prepared], set[str]]:
        """What a draft's risk needs besides its row, per draft, so ordering the queue on the GUI thread is cheap;
        derived again only for the drafts whose inputs moved. Returns the new values and the drafts that moved."""
        dirty = set(changed)
        old = self._stats
        for key in old.keys() | stats.keys():
            if _counts(old.get(key)) != _counts(stats.get(key)):
                dirty |= self._drafts_of.get(key, set())
        near = self.index.take_near_changed()
        dirty |= set(self._writer_of) if near is None else near
        membership = self._membership(clusters, dirty)
        prepared, moved = dict(self._ranking.prepared), set()
        for ident in dirty:
            record = records.get(ident)
            if record is None or not is_draft(record):
                self._forget_writer(ident)
                if prepared.pop(ident, None) is not None:
                    moved.add(ident)
                continue
            known = self._writer_of.get(ident)
            if known is None or ident in changed:
                self._forget_writer(ident)
                known = self._writer_of[ident] = writer_key(record)
                self._drafts_of.setdefault(known, set()).add(ident)
            key = known
            writer, nearest, cluster = stats.get(key), self.index.nearest_approved.get(ident), membership.get(ident)
            value = (
                writer.rejected if writer else 0,
                writer.decided if writer else 0,
                round(nearest[0], 2) if nearest else None,
                cluster.representative if cluster else "",
                cluster.size if cluster else 1,
            )
            if prepared.get(ident) != value:
                prepared[ident] = value
                moved.add(ident)
        return prepared, moved

    def _forget_writer(self, ident: str) -> None:
        key = self._writer_of.pop(ident, None)
        if key is not None:
            self._drafts_of[key].discard(ident)

    def _membership(self, clusters: list[Cluster], dirty: set[str]) -> dict[str, Cluster]:
        """Who is in which cluster, kept by the clusters that changed (a part of the graph cut again makes new
        cluster objects; the others are the very objects of the last refresh); their members join `dirty`."""
        before, membership = self._members
        old = dict(zip(map(id, before), before, strict=True))
        new = dict(zip(map(id, clusters), clusters, strict=True))
        for gone in old.keys() - new.keys():
            for member in old[gone].members:
                if membership.get(member.id) is old[gone]:
                    del membership[member.id]
                dirty.add(member.id)
        for came in new.keys() - old.keys():
            for member in new[came].members:
                membership[member.id] = new[came]
                dirty.add(member.id)
        self._members = (clusters, membership)
        return membership

    def _assess(
        self, rows: list[DraftRow], prepared: dict[str, _Prepared], moved: set[str], level: str
    ) -> tuple[Ranking, set[str]]:
        """Every queue row's risk and place in risk order, computed here so the GUI thread only looks them up;
        only rows that are new objects, or whose prepared values moved, are assessed again."""
        last = self._ranking
        same = last.level == level
        ids = list(map(_ID, rows))
        if same and not moved and len(ids) == len(last.rows) and all(map(is_, map(last.rows.get, ids), rows)):
            return (last if last.prepared is prepared else last._replace(prepared=prepared)), set()
        risk, row_of, keys = (dict(last.risk), dict(last.rows), dict(last.keys)) if same else ({}, {}, {})
        ordered = list(self._sorted) if same else []  # a copy: a failure half way leaves the last one whole
        by_id = dict(zip(ids, rows, strict=True))
        stale = set(compress(ids, map(is_not, map(row_of.get, ids), rows)))
        stale.update(moved & by_id.keys())
        shown: set[str] = set()
        rekeyed: list[tuple[Key | None, Key | None]] = []
        for ident in row_of.keys() - by_id.keys():
            del risk[ident], row_of[ident]
            rekeyed.append((keys.pop(ident), None))
            shown.add(ident)
        for ident in stale:
            row = by_id[ident]
            new = self._risk_row(row, level, prepared.get(ident, _NONE))
            before = risk.get(ident)
            if before is None or _shown(before) != _shown(new):
                shown.add(ident)
            risk[ident], row_of[ident] = new, row
            key = (-new.risk.score, row.created, ident)
            if keys.get(ident) != key:
                rekeyed.append((keys.get(ident), key))
                keys[ident] = key
        if len(rekeyed) > REBUILD:
            ordered = sorted(keys.values())
        else:
            for was, becomes in rekeyed:
                if was is not None:
                    del ordered[bisect_left(ordered, was)]
                if becomes is not None:
                    insort(ordered, becomes)
        self._sorted = ordered
        rank = dict(zip(map(itemgetter(2), ordered), count())) if rekeyed or not same else last.rank
        return Ranking(level, risk, row_of, rank, keys, prepared), shown

    @staticmethod
    def _risk_row(row: DraftRow, level: str, prepared: _Prepared) -> RiskRow:
        rejected, decided, nearest, representative, size = prepared
        return RiskRow(
            row, assess(RiskInput(row.scope, level, row.flags, rejected, decided, nearest)), representative, size
        )

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

    @property
    def ranking(self) -> object:
        """The last refresh's ranking: a new object every refresh, so an order made from it holds while it is the
        same object."""
        return self._ranking

    def order(self, rows: list[DraftRow], level: str, by_risk: bool) -> tuple[list[DraftRow], dict[str, RiskRow]]:
        """`rows` (in risk order when `by_risk`, else as given) and the risk of each, by id. The rows the last
        refresh assessed (the very row objects) are looked up and put in order in C; only rows that arrived or
        changed since are assessed here, and placed among the others by their key."""
        ranking = self._ranking
        if ranking.level != level:
            ranking = Ranking(level, {}, {}, {}, {}, ranking.prepared)
        known = list(map(is_, map(ranking.rows.get, map(_ID, rows)), rows))
        risk = ranking.risk
        stale = list(compress(rows, map(not_, known)))
        if stale:
            risk = dict(risk)
            for row in stale:
                risk[row.id] = self._risk_row(row, level, ranking.prepared.get(row.id, _NONE))
        if not by_risk:
            return rows, risk
        if len(stale) > REBUILD:
            return sorted(rows, key=lambda r: (-risk[r.id].risk.score, r.created, r.id)), risk
        kept = list(compress(rows, known)) if stale else rows
        places = list(map(ranking.rank.__getitem__, map(_ID, kept)))
        out = list(map(kept.__getitem__, sorted(range(len(kept)), key=places.__getitem__)))
        if stale:
            keys = list(map(ranking.keys.__getitem__, map(_ID, out)))
            for row in stale:
                key = (-risk[row.id].risk.score, row.created, row.id)
                at = bisect_left(keys, key)
                keys.insert(at, key)
                out.insert(at, row)
        return out, risk

    def risk_rows(self, rows: list[DraftRow], level: str = "decided", order: str = "risk") -> list[RiskRow]:
        """Rows with their risk and cluster; in risk order (highest first) or as given."""
        ordered, risk = self.order(rows, level, order == "risk")
        return [risk[row.id] for row in ordered]

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


def _counts(stats: WriterStats | None) -> tuple[int, int]:
    """What a draft's risk reads of its writer's numbers."""
    return (stats.rejected, stats.decided) if stats is not None else (0, 0)
