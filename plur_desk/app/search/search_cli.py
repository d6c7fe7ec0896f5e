"""`plur-desk search [STORE] QUERY [--json] [--limit N]`: the app's search from a terminal; never writes the store."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from plur_desk.infra.errors import PlurDeskError
from plur_desk.infra.paths import cache_dir, default_store_path

if TYPE_CHECKING:  # the index loads only when a search runs
    from plur_desk.app.review.session import ReviewSession
    from plur_desk.app.search.store_search import SearchResult


def state_of(engram: dict[str, object]) -> str:
    """What a reader needs to know first: a retired engram is not live; an active one is draft, leaning…"""
    status = str(engram.get("status", "active"))
    return str(engram.get("commitment", "active")) if status == "active" else status.upper()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="plur-desk search", description="Search a PLUR store (read-only).")
    parser.add_argument("args", nargs="+", metavar="[STORE] QUERY", help="optional store directory, then the query")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--no-semantic", action="store_true", help="BM25 only, even when the model is installed")
    ns = parser.parse_args(argv)
    store_arg = None
    terms = ns.args
    if len(terms) > 1:
        if Path(terms[0]).expanduser().is_dir():
            store_arg, terms = terms[0], terms[1:]
    elif Path(terms[0]).expanduser().is_dir() or os.sep in terms[0]:
        parser.error(f"missing QUERY: {terms[0]!r} looks like a store; give the words to search for after it")
    query = " ".join(terms)
    from plur_desk.app.review.bootstrap import open_session
    from plur_desk.app.review.reviewer import READER
    from plur_desk.app.search.store_search import SearchService

    try:
        verdicts = any(f"is:{v}" in query for v in ("approved", "rejected", "unverified"))
        session = open_session(default_store_path(store_arg), READER, load_history=verdicts)  # verdicts need events
    except PlurDeskError as exc:
        print(f"plur-desk search: {exc}", file=sys.stderr)
        return 2
    special = session.special_files()
    if special:
        for problem in special:
            print(f"plur-desk search: {problem}", file=sys.stderr)
        return 2
    service = SearchService(session, cache_dir(), embeddings=not ns.no_semantic)
    service.sync()
    if service.semantic_available:
        service.embed_missing()
    result = service.search(query, ns.limit)
    for note in result.ignored:
        print(f"note: {note}", file=sys.stderr)
    hint = "" if result.hits else service.filter_hint(query)
    if hint:
        print(f"note: {hint}", file=sys.stderr)
    _report(session, result, query, ns.json)
    return 0


def _report(session: ReviewSession, result: SearchResult, query: str, as_json: bool) -> None:
    best = max((hit.score for hit in result.hits), default=0.0) or 1.0
    if as_json:
        rows = []
        for hit in result.hits:
            engram = session.engram(hit.id) or {}
            rows.append(
                {
                    "id": hit.id,
                    "score": round(hit.score, 6),
                    "relevance": round(hit.score / best, 4),
                    "statement": engram.get("statement"),
                    "status": engram.get("status"),
                    "commitment": engram.get("commitment"),
                    "scope": engram.get("scope"),
                }
            )
        print(
            json.dumps(
                {
                    "query": query,
                    "total": result.total,
                    "semantic": result.semantic,
                    "ignored": result.ignored,
                    "hits": rows,
                },
                indent=2,
                ensure_ascii=False,
            )
        )
    else:
        for hit in result.hits:
            engram = session.engram(hit.id) or {}
            print(f"{hit.id}\t{state_of(engram)}\t{hit.score / best:4.0%}\t{engram.get('statement', '')}")
        how = "full text and meaning, ranks fused" if result.semantic else "full text (BM25)"
        print(
            f"({len(result.hits)} of {result.total} shown; relevance is each match's score as a share of the best "
            f"one's, by {how}; state is the commitment of an active engram, else its status)",
            file=sys.stderr,
        )
