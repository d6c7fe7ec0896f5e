"""A Tantivy full-text index of one store's engrams: derived data in the cache directory, updated incrementally.

Rebuilt when missing, unreadable or of an older format; kept in step by digest (the engram's YAML block), so only
engrams that changed since the last sync are re-indexed, and engrams gone from the store are deleted.

Which digest each indexed engram has is kept beside the index in `plur-desk-meta.jsonl`: a header line, then lines
of JSON objects (id -> digest, null for gone), later lines overriding earlier ones. A full sync writes the file again
in pieces of a few thousand ids; a sync after our own writes appends one line. Neither encodes or decodes the whole
map in one call: at 50,000 engrams that held the interpreter lock for hundreds of milliseconds and stalled the
window after every decision. A torn last line (a crash while appending) is ignored: those engrams are re-indexed.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import tantivy

from plur_desk.domain.engram_view import EngramView
from plur_desk.domain.plur_rules.validity import Window, closes_at, opens_at
from plur_desk.index.query import Filter, ParsedQuery
from plur_desk.infra.clock import parse_instant
from plur_desk.infra.jobs import checkpoints

FORMAT = 3  # 3: the session field
META_PIECE = 2000  # ids per line of the meta file: each line is encoded and decoded in a few milliseconds
COMPACT_AFTER = 256  # appended lines before the meta file is written again whole
NEVER = 2**62  # stands for an open bound in the validity range fields
Progress = Callable[[int, int], None]


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("id", stored=True, tokenizer_name="raw")
    builder.add_text_field("statement", stored=False, tokenizer_name="en_stem")
    for name in (
        "scope",
        "domain",
        "tag",
        "type",
        "status",
        "commitment",
        "writer",
        "review",
        "content_hash",
        "session",
    ):
        builder.add_text_field(name, stored=False, tokenizer_name="raw", index_option="basic")
    for name in ("created", "opens", "closes"):
        builder.add_integer_field(name, stored=False, indexed=True, fast=True)
    return builder.build()


def _ms(moment: datetime | None, default: int) -> int:
    return int(moment.timestamp() * 1000) if moment is not None else default


def _document(engram: dict[str, object], created: str) -> tantivy.Document:
    doc = tantivy.Document()
    doc.add_text("id", str(engram.get("id")))
    doc.add_text("statement", str(engram.get("statement", "")))
    doc.add_text("scope", str(engram.get("scope", "")))
    domain = str(engram.get("domain", "") or "")
    parts = domain.split(".") if domain else []
    for i in range(1, len(parts) + 1):
        doc.add_text("domain", ".".join(parts[:i]))
    tags = engram.get("tags")
    for tag in tags if isinstance(tags, list) else []:
        doc.add_text("tag", str(tag).lower())
    for name in ("type", "status", "commitment", "content_hash"):
        doc.add_text(name, str(engram.get(name, "") or ""))
    attribution = engram.get("attribution")
    writer = attribution.get("asserted_by") if isinstance(attribution, dict) else None
    doc.add_text("writer", str(writer or "unidentified").lower())
    for session in EngramView(engram).session_ids:  # every session that wrote it, so any of them finds it
        doc.add_text("session", session.lower())
    review = engram.get("review")
    doc.add_text("review", str(review.get("state")) if isinstance(review, dict) else "none")
    doc.add_integer("created", _ms(parse_instant(created), 0))
    window = Window.of(engram)
    doc.add_integer("opens", _ms(opens_at(window.valid_from), -NEVER))
    doc.add_integer("closes", _ms(closes_at(window.valid_until), NEVER))
    return doc


def _write_meta(path: Path, digests: dict[str, str]) -> None:
    """The whole map, a piece per line (each a short call), to a temporary file put in place at once."""
    items = list(digests.items())
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        handle.write(json.dumps({"format": FORMAT}) + "\n")
        for at in range(0, len(items), META_PIECE):
            handle.write(json.dumps(dict(items[at : at + META_PIECE])) + "\n")
    tmp.replace(path)


def _read_meta(path: Path) -> tuple[dict[str, str], int] | None:
    """The digests and how many lines were appended, or None when the file is missing, unreadable or of another
    format. Only the last line may be torn; a bad line before it means the file is not ours to trust."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None
    lines = text.split("\n")
    torn = lines.pop()  # after the last line feed: "" unless the last append was cut short
    try:
        if json.loads(lines[0]) != {"format": FORMAT}:
            return None
    except (ValueError, IndexError):
        return None
    digests: dict[str, str] = {}
    for line in lines[1:]:
        try:
            piece = json.loads(line)
        except ValueError:
            return None
        if not isinstance(piece, dict):
            return None
        for key, value in piece.items():
            if isinstance(value, str):
                digests[key] = value
            else:
                digests.pop(key, None)
    if torn:  # a torn append: the engrams it named keep their older digest (indexed again where they differ),
        return digests, COMPACT_AFTER  # and the next sync writes the file again whole instead of appending to it
    pieces = (len(digests) + META_PIECE - 1) // META_PIECE
    return digests, max(0, len(lines) - 1 - pieces)


@dataclass
class Hit:
    id: str
    score: float


class FulltextIndex:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.schema = _schema()
        self.digests: dict[str, str] = {}
        self._appended = 0  # lines appended to the meta file since it was last written whole
        self._open()

    def _meta_path(self) -> Path:
        return self.directory / "plur-desk-meta.jsonl"

    def _open(self) -> None:
        meta = _read_meta(self._meta_path())
        if meta is None:
            shutil.rmtree(self.directory, ignore_errors=True)  # derived data of an older format: rebuild
        self.directory.mkdir(parents=True, exist_ok=True)
        try:
            self.index = tantivy.Index(self.schema, path=str(self.directory), reuse=True)
        except (OSError, ValueError):
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory.mkdir(parents=True)
            self.index = tantivy.Index(self.schema, path=str(self.directory), reuse=True)
            meta = None
        self.digests, self._appended = meta if meta is not None else ({}, 0)

    def sync(
        self,
        engrams: dict[str, tuple[str, dict[str, object], str]],
        progress: Progress | None = None,
        *,
        partial: bool = False,
    ) -> int:
        """Bring the index in line with `engrams` (id -> (digest, value, created)); returns documents touched.

        With partial=True only the given engrams are looked at (after our own writes); otherwise engrams missing
        from `engrams` are deleted from the index.
        """
        changed = [i for i, (digest, _v, _c) in engrams.items() if self.digests.get(i) != digest]
        gone = [] if partial else [i for i in self.digests if i not in engrams]
        if not changed and not gone:
            return 0
        writer = self.index.writer(heap_size=64_000_000, num_threads=1)
        for engram_id in gone:
            writer.delete_documents_by_term("id", engram_id)
            self.digests.pop(engram_id, None)
        total = len(changed)
        for n, engram_id in enumerate(checkpoints(changed, 256), start=1):  # (a computation's steps: infra/turns.py)
            digest, value, created = engrams[engram_id]
            if engram_id in self.digests:
                writer.delete_documents_by_term("id", engram_id)
            writer.add_document(_document(value, created))
            self.digests[engram_id] = digest
            if progress is not None and (n % 2000 == 0 or n == total):
                progress(n, total)
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        if partial and self._appended < COMPACT_AFTER and self._meta_path().is_file():
            update: dict[str, str | None] = {i: self.digests[i] for i in changed}
            with self._meta_path().open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(update) + "\n")
            self._appended += 1
        else:
            _write_meta(self._meta_path(), self.digests)
            self._appended = 0
        return len(changed) + len(gone)

    # -- querying ------------------------------------------------------------------------------------------

    def _filter_query(self, flt: Filter, now: datetime, sets: dict[str, set[str]]) -> tantivy.Query | None:  # noqa: C901 -- one branch per query field
        s = self.schema
        value = flt.value
        if flt.field in ("status", "commitment", "scope", "type", "id"):
            return tantivy.Query.term_query(s, flt.field, value)
        if flt.field == "domain":
            return tantivy.Query.term_query(s, "domain", value)
        if flt.field == "tag":
            return tantivy.Query.term_query(s, "tag", value.lower())
        if flt.field == "by":  # as people type a writer: "claude-code" or "claude" finds "agent:claude-code"
            return tantivy.Query.regex_query(s, "writer", f"(.*:)?{_regex_literal(value.lower())}.*")
        if flt.field == "session":  # a session id is long: its first characters are enough
            return tantivy.Query.regex_query(s, "session", f"{_regex_literal(value.lower())}.*")
        if flt.field in ("before", "after"):
            day = int(datetime.fromisoformat(value).replace(tzinfo=UTC).timestamp() * 1000)
            if flt.field == "before":
                return tantivy.Query.range_query(s, "created", tantivy.FieldType.Integer, None, day, True, False)
            return tantivy.Query.range_query(s, "created", tantivy.FieldType.Integer, day, None, True, True)
        if flt.field == "in":
            ids = sorted(sets.get("tension", set()))
            return tantivy.Query.term_set_query(s, "id", ids) if ids else tantivy.Query.empty_query()
        now_ms = int(now.timestamp() * 1000)
        if value == "draft":  # waiting for review: a rejected draft is retired and no longer one
            return tantivy.Query.boolean_query(
                [
                    (tantivy.Occur.Must, tantivy.Query.term_query(s, "commitment", "draft")),
                    (tantivy.Occur.Must, tantivy.Query.term_query(s, "status", "active")),
                ]
            )
        if value == "locked":
            return tantivy.Query.term_query(s, "commitment", "locked")
        if value in ("active", "retired"):
            return tantivy.Query.term_query(s, "status", value)
        if value in ("rejected", "approved"):  # human verdicts: only reviews a signed event backs
            review = tantivy.Query.term_query(s, "review", value)
            unverified = sorted(sets.get("unverified", set()))
            if not unverified:
                return review
            return tantivy.Query.boolean_query(
                [
                    (tantivy.Occur.Must, review),
                    (tantivy.Occur.MustNot, tantivy.Query.term_set_query(s, "id", unverified)),
                ]
            )
        if value == "unverified":
            ids = sorted(sets.get("unverified", set()))
            return tantivy.Query.term_set_query(s, "id", ids) if ids else tantivy.Query.empty_query()
        if value == "expired":
            return tantivy.Query.range_query(s, "closes", tantivy.FieldType.Integer, None, now_ms, True, False)
        if value == "future":
            return tantivy.Query.range_query(s, "opens", tantivy.FieldType.Integer, now_ms, None, False, True)
        if value == "current":
            return tantivy.Query.boolean_query(
                [
                    (
                        tantivy.Occur.Must,
                        tantivy.Query.range_query(s, "opens", tantivy.FieldType.Integer, None, now_ms),
                    ),
                    (
                        tantivy.Occur.Must,
                        tantivy.Query.range_query(s, "closes", tantivy.FieldType.Integer, now_ms, None),
                    ),
                ]
            )
        return None

    def _text_query(self, text: str) -> tantivy.Query:
        query, _errors = self.index.parse_query_lenient(text, ["statement"])
        return query

    def build_query(
        self, parsed: ParsedQuery, now: datetime, sets: dict[str, set[str]] | None = None, text: bool = True
    ) -> tantivy.Query:
        sets = sets or {}
        clauses: list[tuple[tantivy.Occur, tantivy.Query]] = []
        if text and parsed.terms:
            clean = " ".join(_escape(t) for t in parsed.terms)
            if clean.strip():
                clauses.append((tantivy.Occur.Must, self._text_query(clean)))
        for phrase in parsed.phrases if text else []:
            clauses.append((tantivy.Occur.Must, self._text_query(f'"{_escape(phrase)}"')))
        for term in parsed.excluded_terms:
            clauses.append((tantivy.Occur.MustNot, self._text_query(_escape(term))))
        for phrase in parsed.excluded_phrases:
            clauses.append((tantivy.Occur.MustNot, self._text_query(f'"{_escape(phrase)}"')))
        for flt in parsed.filters:
            query = self._filter_query(flt, now, sets)
            if query is not None:
                clauses.append((tantivy.Occur.MustNot if flt.negated else tantivy.Occur.Must, query))
        if not any(occur == tantivy.Occur.Must for occur, _ in clauses):
            clauses.append((tantivy.Occur.Must, tantivy.Query.all_query()))
        return tantivy.Query.boolean_query(clauses)

    def search(self, query: tantivy.Query, limit: int) -> tuple[list[Hit], int]:
        searcher = self.index.searcher()
        limit = max(1, min(limit, max(1, searcher.num_docs)))
        result = searcher.search(query, limit=limit, count=True)
        hits = [Hit(str(searcher.doc(address)["id"][0]), float(score)) for score, address in result.hits]
        return hits, int(getattr(result, "count", None) or len(hits))

    def ids_matching(self, query: tantivy.Query) -> set[str]:
        searcher = self.index.searcher()
        if searcher.num_docs == 0:
            return set()
        result = searcher.search(query, limit=searcher.num_docs, count=False)
        return {str(searcher.doc(address)["id"][0]) for _score, address in result.hits}

    def num_docs(self) -> int:
        return int(self.index.searcher().num_docs)


_REGEX_META = set("\\.+*?()|[]{}^$#&-~")


def _regex_literal(text: str) -> str:
    """`text` matched literally by Tantivy's regex (its meta characters escaped; any other is itself)."""
    return "".join("\\" + c if c in _REGEX_META else c for c in text)


_SPECIAL = set('+-&|!(){}[]^"~*?:\\/')


def _escape(text: str) -> str:
    return "".join(" " if ch in _SPECIAL else ch for ch in text)


def words(values: Iterable[str]) -> str:
    return " ".join(_escape(v) for v in values)
