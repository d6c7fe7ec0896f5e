"""`plur-desk search [STORE] QUERY [--json] [--limit N]`: the app's search from a terminal; never writes the store."""

from __future__ import annotations

import argparse
import json
import sys

from plur_desk.infra.errors import PlurDeskError
from plur_desk.infra.paths import cache_dir, default_store_path


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
        from pathlib import Path

        if Path(terms[0]).expanduser().is_dir():
            store_arg, terms = terms[0], terms[1:]
    query = " ".join(terms)
    from plur_desk.app.bootstrap import open_session
    from plur_desk.app.reviewer import READER
    from plur_desk.app.search import SearchService

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
        print(f"note: ignored {note}", file=sys.stderr)
    if ns.json:
        rows = []
        for hit in result.hits:
            engram = session.engram(hit.id) or {}
            rows.append(
                {
                    "id": hit.id,
                    "score": round(hit.score, 6),
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
            print(f"{hit.id}\t{hit.score:.3f}\t{engram.get('statement', '')}")
        print(
            f"({len(result.hits)} of {result.total} shown{'; hybrid BM25+embeddings' if result.semantic else ''})",
            file=sys.stderr,
        )
    return 0
