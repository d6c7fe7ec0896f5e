"""Search over one open store: the query language on Tantivy, optional embeddings, fused by reciprocal rank."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from plur_desk.app.review.rows import created_of
from plur_desk.app.review.session import ReviewSession
from plur_desk.domain.engram_view import EngramView
from plur_desk.index.embeddings import DIM
from plur_desk.index.fulltext import FulltextIndex, Hit
from plur_desk.index.query import ParsedQuery, parse
from plur_desk.index.vector_matrix import VectorMatrix
from plur_desk.infra.jobs import checkpoint, computing
from plur_desk.infra.paths import store_cache_dir

UPDATE_PATIENCE_S = 0.25  # the index's update after a decision waits at most this long for a computation's turn

if TYPE_CHECKING:
    from plur_desk.index.embeddings import Embedder, VectorCache

RRF_K = 60  # as PLUR's own hybrid recall
MIN_COSINE = 0.35  # below this a semantic neighbour is noise, not a result
MIN_SIMILAR = 0.45  # "similar engram" means a likely restatement or near-duplicate
Progress = Callable[[int, int], None]


@dataclass
class SearchResult:
    hits: list[Hit] = field(default_factory=list)
    total: int = 0
    ignored: list[str] = field(default_factory=list)
    semantic: bool = False

    @property
    def ids(self) -> list[str]:
        return [h.id for h in self.hits]


class SearchService:
    def __init__(self, session: ReviewSession, cache_root: Path, *, embeddings: bool = True) -> None:
        self.session = session
        base = store_cache_dir(cache_root, session.root)
        self.index = FulltextIndex(base / "tantivy")
        self._embeddings_wanted = embeddings
        self._embedder: Embedder | None = None
        self._embedder_tried = False
        self._embed_process: subprocess.Popen[bytes] | None = None
        self._embed_lock = threading.Lock()  # the process started and the stop asked for, seen together
        self._embedding_stopped = False  # the window closed: no embedding process is started any more
        from plur_desk.index.embeddings import VectorCache, vectors_file

        self.vectors = VectorCache.open(vectors_file(base) if embeddings else None)  # shared with clusters
        self.matrix = VectorMatrix(DIM)  # for similar() and semantic ranking: built by sync(), then updated by id

    # -- keeping in step -----------------------------------------------------------------------------------

    def _digests(self, ids: Iterable[str] | None = None) -> dict[str, tuple[str, dict[str, object], str]]:
        found = self.session.snapshot.digests(ids)
        return {key: (digest, value, created_of(value)) for key, (digest, value) in found.items()}

    def sync(self, progress: Progress | None = None) -> int:
        """Full comparison with the store (after opening, or after PLUR changed the file), as a computation's turn
        (infra/turns.py): not beside the history's indexing or the clusters."""
        with computing():
            count = self.index.sync(self._digests(), progress)
            if self.semantic_available:  # (without the model no vector is ever asked for: nothing to key)
                self.matrix.rebuild(vector_keys(self.session.all_engrams(), self.vectors), self.vectors.vectors)
        return count

    def sync_ids(self, ids: Iterable[str]) -> int:
        """After our own writes: only the engrams we know changed (a computation's turn, as `sync`, waited for
        briefly: a search typed after a decision should not find the old text for long)."""
        ids = set(ids)
        with computing(patience=UPDATE_PATIENCE_S):
            count = self.index.sync(self._digests(ids), partial=True)
            if self.semantic_available:
                changed: dict[str, str | None] = dict.fromkeys(ids)
                engrams = (e for i in ids if (e := self.session.engram(i)) is not None)
                changed.update(vector_keys(engrams, self.vectors))
                self.matrix.update(changed, self.vectors.vectors)
        return count

    # -- embeddings ----------------------------------------------------------------------------------------

    def embedder(self) -> Embedder | None:
        if not self._embeddings_wanted:
            return None
        if not self._embedder_tried:
            self._embedder_tried = True
            from plur_desk.index.embeddings import Embedder

            self._embedder = Embedder.load()
        return self._embedder

    @property
    def semantic_available(self) -> bool:
        """Whether the model is installed (without loading it: that happens in `embedder()`, off the GUI thread)."""
        if not self._embeddings_wanted:
            return False
        if self._embedder_tried:
            return self._embedder is not None
        from plur_desk.index.embeddings import Embedder

        return Embedder.model_file() is not None

    def embed_missing(self, progress: Progress | None = None, batch: int = 256) -> int:
        """Embed every statement with no cached vector, each distinct content once (`vector_keys`): in a separate
        process that writes its vectors as it goes (resumable; search uses them as they arrive)."""
        if not self.semantic_available:
            return 0
        by_hash: dict[str, str] = {}
        for text, key in self.vectors.keys_of(_statements(self.session.all_engrams())).items():
            by_hash.setdefault(key, text)
        missing = self.vectors.missing(list(by_hash))
        if missing and self.vectors.parts_dir is not None and not getattr(sys, "frozen", False):
            return self._embed_in_worker([(h, by_hash[h]) for h in missing], progress)
        embedder = self.embedder()
        if embedder is None:
            return 0
        done = 0
        for start in range(0, len(missing), batch):
            if self._embedding_stopped:  # the window closed: what is embedded is kept, the rest is for next time
                break
            chunk = missing[start : start + batch]
            self.vectors.add(chunk, embedder.embed([by_hash[h] for h in chunk]))
            done += len(chunk)
            if progress is not None:
                progress(done, len(missing))
        self.vectors.save()
        self.matrix.take_new_vectors(self.vectors.vectors)
        return done

    def _embed_in_worker(self, pairs: list[tuple[str, str]], progress: Progress | None) -> int:
        from plur_desk.index import embed_worker

        parts = self.vectors.parts_dir
        assert parts is not None
        with self._embed_lock:  # a stop asked while the work was waiting to start is not missed
            if self._embedding_stopped:
                return 0
            proc = self._embed_process = embed_worker.start(pairs, parts)
        assert proc.stdout is not None
        for line in proc.stdout:
            done, total = (int(x) for x in line.split())
            checkpoint(reviewer=True)  # the vectors are taken in when the reviewer pauses (up to 3 s later), not beside
            with computing():  # nor beside another computation (infra/turns.py); never while waiting for the process
                self.vectors.refresh()
                self.matrix.take_new_vectors(self.vectors.vectors)
            if progress is not None:
                progress(done, total)
        proc.wait()
        self._embed_process = None
        self.vectors.refresh()
        self.vectors.save()
        return sum(1 for key, _text in pairs if key in self.vectors.vectors)

    def stop_embedding(self) -> None:
        """On close: the embedding process stops, or never starts if its job had not reached it yet (the close
        waited for the whole embedding of a process started just after it: 3 s on the demo store); what it wrote is
        kept and the next start resumes from there."""
        with self._embed_lock:
            self._embedding_stopped = True
            proc = self._embed_process
        if proc is not None and proc.poll() is None:
            proc.kill()

    def _semantic_rank(self, text: str, candidates: set[str] | None, limit: int) -> list[Hit]:
        embedder = self.embedder()
        if embedder is None or not self.vectors.vectors:
            return []
        query = embedder.embed([text])[0]
        self._matrix_ready()
        return [Hit(i, s) for i, s in self.matrix.nearest(query, limit, among=candidates) if s >= MIN_COSINE]

    def _matrix_ready(self) -> None:
        if not self.matrix.built:  # a service used without sync() (a script): built once, here
            self.matrix.rebuild(vector_keys(self.session.all_engrams(), self.vectors), self.vectors.vectors)
        self.matrix.take_new_vectors(self.vectors.vectors)

    # -- queries -------------------------------------------------------------------------------------------

    def search(self, text: str, limit: int = 50) -> SearchResult:
        parsed = parse(text)
        sets = self._sets(parsed)
        now = self.session.now()
        query = self.index.build_query(parsed, now, sets)
        hits, total = self.index.search(query, limit if parsed.has_text else max(limit, 1))
        result = SearchResult(hits, total, parsed.ignored)
        if parsed.has_text and self.semantic_available and self.vectors.vectors:
            filters_only = self.index.build_query(parsed, now, sets, text=False)
            candidates = self.index.ids_matching(filters_only) if (parsed.filters or parsed.excluded_terms) else None
            depth = max(limit * 4, 100)
            bm25, _ = self.index.search(query, depth)
            semantic = self._semantic_rank(parsed.text(), candidates, depth)
            result.hits = fuse([bm25, semantic])[:limit]
            result.total = max(total, len(result.hits))
            result.semantic = True
        return result

    def _sets(self, parsed: ParsedQuery) -> dict[str, set[str]]:
        sets = {"tension": self.session.open_tension_ids()}
        if any(f.field == "is" and f.value in ("approved", "rejected", "unverified") for f in parsed.filters):
            sets["unverified"] = self.session.verdicts.unverified_reviews()
        return sets

    @staticmethod
    def ignored_parts(text: str) -> list[str]:
        """What the query language could not use in `text` (shown to the user)."""
        return parse(text).ignored

    def all_ids(self, text: str) -> set[str]:
        """Every engram matching the query (for bulk actions over all results, not only the visible rows)."""
        parsed = parse(text)
        query = self.index.build_query(parsed, self.session.now(), self._sets(parsed))
        return self.index.ids_matching(query)

    def filter_hint(self, text: str) -> str:
        """When a query finds nothing: the first filter that by itself matches no engram, said plainly (for `by:`
        and `session:`, with the writers or sessions there are), else ""."""
        parsed, now = parse(text), self.session.now()
        for flt in parsed.filters:
            if flt.negated or self.index.ids_matching(self.index.build_query(ParsedQuery(filters=[flt]), now)):
                continue
            hint = f"{flt.field}:{flt.value} matches no engram in this store"
            if flt.field == "by":
                writers = sorted({writer_of(e) for e in self.session.all_engrams()})
                hint += f"; writers here: {', '.join(writers[:8])}{' …' if len(writers) > 8 else ''}"
            if flt.field == "session":
                sessions = sorted({s for e in self.session.all_engrams() for s in EngramView(e).session_ids})
                named = f"{', '.join(sessions[:8])}{' …' if len(sessions) > 8 else ''}" if sessions else "none"
                hint += f"; sessions here: {named}"
            return hint + "."
        return ""

    def similar(self, engram_id: str, k: int = 5) -> list[Hit]:
        """Likely restatements or near-duplicates of one engram, scored by cosine similarity; advisory only.

        One measure only: without the embedding model (or before any vector is computed) there is none, rather
        than BM25 scores on another scale that rank unrelated statements next to real paraphrases.
        """
        engram = self.session.engram(engram_id)
        embedder = self.embedder()
        if engram is None or embedder is None or not self.vectors.vectors:
            return []
        statement = str(engram.get("statement", ""))
        vector = self.vectors.vectors.get(self.vectors.keys_of([statement])[statement])
        if vector is None:
            vector = embedder.embed([statement])[0]
        self._matrix_ready()
        return [Hit(i, s) for i, s in self.matrix.nearest(vector, k, exclude=engram_id) if s >= MIN_SIMILAR]


def _statements(engrams: Iterable[dict[str, object]]) -> list[str]:
    return [s for e in engrams if isinstance(s := e.get("statement"), str) and s]


def vector_keys(engrams: Iterable[dict[str, object]], cache: VectorCache) -> list[tuple[str, str]]:
    """(engram id, the key of its vector): PLUR's content hash of the statement the vector is computed from, as the
    clusters key it, so the two share the vectors wherever the engram's `content_hash` field agrees with its text.
    Never the field itself: an agent that edits a statement by hand leaves it stale, and an engram can carry
    another's, which would give the engram the vector of OTHER text."""
    engrams = list(engrams)
    keys = cache.keys_of(_statements(engrams))
    return [(str(e.get("id")), keys[s]) for e in engrams if isinstance(s := e.get("statement"), str) and s]


def writer_of(engram: dict[str, object]) -> str:
    attribution = engram.get("attribution")
    return str((attribution.get("asserted_by") if isinstance(attribution, dict) else None) or "unidentified")


def fuse(rankings: list[list[Hit]], k: int = RRF_K) -> list[Hit]:
    """Reciprocal rank fusion: score = sum over rankings of 1 / (k + rank)."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, hit in enumerate(ranking, start=1):
            scores[hit.id] = scores.get(hit.id, 0.0) + 1.0 / (k + rank)
    return [Hit(i, s) for i, s in sorted(scores.items(), key=lambda kv: -kv[1])]
