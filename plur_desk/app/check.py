"""`plur-desk check`: what is in a store and what PLUR would quarantine, without writing anything."""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from plur_desk.domain.engram_rules import tension_problems
from plur_desk.infra.memory import gc_paused
from plur_desk.infra.paths import cache_dir
from plur_desk.store.engram_summary import EngramRow, summarize_engrams
from plur_desk.store.history import HistoryLog, MonthSummary, summarize_history
from plur_desk.store.journal import JOURNAL_DIR
from plur_desk.store.list_file import TENSIONS, ListFile
from plur_desk.store.parse_cache import cache_path
from plur_desk.store.plur_store import find_store_problem


@dataclass
class CheckReport:
    store: str
    readable: bool = True
    unreadable_reasons: list[str] = field(default_factory=list)
    engrams: dict[str, object] = field(default_factory=dict)
    tensions: dict[str, object] = field(default_factory=dict)
    history: dict[str, object] = field(default_factory=dict)
    invalid: list[dict[str, object]] = field(default_factory=list)
    untrusted: list[dict[str, object]] = field(default_factory=list)  # human claims that are not validly signed
    warnings: list[str] = field(default_factory=list)
    # interrupted writes: pending write-ahead journal records, and human changes on disk without their event
    unfinished: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        if not self.readable:
            return 2
        if self.invalid or self.history.get("malformed_lines") or self.untrusted or self.unfinished:
            return 1
        return 0

    def to_json(self) -> str:
        return json.dumps(
            {
                "store": self.store,
                "ok": self.exit_code == 0,
                "exit_code": self.exit_code,
                "readable": self.readable,
                "unreadable_reasons": self.unreadable_reasons,
                "engrams": self.engrams,
                "tensions": self.tensions,
                "history": self.history,
                "invalid": self.invalid,
                "untrusted_human_claims": self.untrusted,
                "warnings": self.warnings,
                "unfinished": self.unfinished,
            },
            indent=2,
            ensure_ascii=False,
        )

    def to_text(self) -> str:
        lines = [f"PLUR store: {self.store}"]
        if not self.readable:
            lines += [f"  cannot be read: {r}" for r in self.unreadable_reasons]
        e, t, h = self.engrams, self.tensions, self.history
        events = h.get("events") if isinstance(h.get("events"), dict) else {}
        malformed = h.get("malformed_lines") if isinstance(h.get("malformed_lines"), list) else []
        assert isinstance(events, dict) and isinstance(malformed, list)
        if e:
            lines.append(f"engrams: {e['total']}  ({_fmt(e['by_status'])}; commitment: {_fmt(e['by_commitment'])})")
            waiting = e.get("waiting_for_review", 0)
            lines.append(
                f"drafts waiting for review: {waiting}  (active engrams with commitment draft, as the window's queue "
                "counts them; the commitment count above includes retired ones)"
            )
        if t:
            lines.append(f"tensions: {t['total']}  ({_fmt(t['by_status'])})")
        if h:
            months = len(events)
            lines.append(
                f"history: {h['total']} events in {months} month{'s' if months != 1 else ''}; "
                f"{len(malformed)} malformed line{'s' if len(malformed) != 1 else ''}; "
                f"chain: {h['chain']} ({CHAIN_MEANING.get(str(h['chain']), 'see PLUR-HISTORY-CHAIN')})"
            )
            for month, types in events.items():
                lines.append(f"  {month}: {_fmt(types)}")
            for bad in malformed[:50]:
                lines.append(f"  malformed: {bad['file']} line {bad['line']}: {bad['reason']}")
        for item in self.invalid:
            lines.append(f"INVALID {item['file']} line {item['line']} {item['id'] or '(no id)'}: {item['reason']}")
        for claim in self.untrusted:
            where = f"{claim['file']} line {claim['line']}" if claim["line"] is not None else str(claim["file"])
            lines.append(
                f"{str(claim['trust']).upper()} human claim {where} "
                f"{claim['event']} {claim['engram_id'] or ''} by {claim['claims']!r}: {claim['detail']}"
            )
        for warning in self.warnings:
            lines.append(f"warning: {warning}")
        lines += [f"UNFINISHED {line}" for line in self.unfinished]
        verdict = {
            0: "OK: every entry is valid",
            1: "PROBLEMS FOUND (see above); nothing was changed",
            2: "UNREADABLE (see above); nothing was changed",
        }[self.exit_code]
        lines.append(verdict)
        return "\n".join(lines)


CHAIN_MEANING = {
    "legacy": "events are not hash-chained, as PLUR 0.20 writes them; nothing to verify, nothing wrong",
    "chained": "each event carries the hash of the one before; a changed or removed line would show",
    "mixed": "a chain exists, but a writer that does not chain wrote last; the gap is declared, not hidden",
}


def _fmt(counts: object) -> str:
    assert isinstance(counts, dict)
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))) or "none"


def _invalid_rows(name: str, rows: list[EngramRow], report: CheckReport) -> None:
    seen: dict[str, int] = {}
    for row in rows:
        key, reason = row.key, row.reason
        if reason is None and key is not None and key in seen:
            reason = f"duplicate id (first at line {seen[key]})"
        if key is not None:
            seen.setdefault(key, row.line)
        if reason:
            if key is None and row.facts is not None:
                key = str(row.facts[0]) if row.facts[0] is not None else None
            report.invalid.append({"file": name, "id": key, "line": row.line, "reason": reason})


def _tension_rows(snapshot: ListFile) -> list[EngramRow]:
    rows = []
    for entry in snapshot.entries:
        reason = entry.syntax_error or ("; ".join(entry.problems) if entry.problems else None)
        value = entry.value
        facts = (value.get("id"), "", "", None) if isinstance(value, dict) else None
        rows.append(EngramRow(snapshot.line(entry), entry.key, reason, entry.valid, facts))
    return rows


def run_check(root: Path, *, use_cache: bool = True) -> CheckReport:
    """Reads each file once. The parse cache is the window's: a block whose digest it holds is valid by
    construction and only its facts are read (an invalid entry is never cached, so it is parsed and reported on
    every run); a history month file whose digest is known gives its counts without parsing it again. The
    store-wide checks (duplicate ids, tension references, review records against history, signatures) always
    run on the whole store."""
    report = CheckReport(store=str(root))
    problem = find_store_problem(root)
    if problem:
        report.readable = False
        report.unreadable_reasons.append(problem)
        return report
    root = root.resolve()
    cache = cache_path(cache_dir(), root) if use_cache else None
    log = HistoryLog(root)
    with gc_paused():
        engrams = summarize_engrams(root / "engrams.yaml", cache)
        tensions = ListFile.read(root / "tensions.yaml", TENSIONS, tension_problems)
        months = summarize_history(log, cache.with_name("history-summary.marshal") if cache else None)
    reasons = [
        f"{name}{f', line {line}' if line else ''}: {fatal}"
        for name, fatal, line in (
            ("engrams.yaml", engrams.fatal, engrams.fatal_line),
            ("tensions.yaml", tensions.fatal, tensions.fatal_line),
        )
        if fatal
    ]
    reasons += log.special_files()
    if reasons:
        report.readable = False
        report.unreadable_reasons = reasons
    rows = engrams.rows
    facts = [row.facts for row in rows if row.facts is not None]
    report.engrams = {
        "total": len(rows),
        "valid": sum(1 for row in rows if row.valid),
        "by_status": dict(Counter(f[1] for f in facts)),
        "by_commitment": dict(Counter(f[2] for f in facts)),
        "layout": "plur" if engrams.regular else "other (read whole; a write rewrites the file)",
        # the window's queue: valid, active engrams with commitment draft (a retired draft is not waiting)
        "waiting_for_review": sum(1 for r in rows if r.valid and r.facts and r.facts[1:3] == ("active", "draft")),
    }
    tension_values = [e.value for e in tensions.entries if isinstance(e.value, dict)]
    report.tensions = {
        "total": len(tensions.entries),
        "by_status": dict(Counter(str(v.get("status", "detected")) for v in tension_values)),
    }
    _invalid_rows("engrams.yaml", rows, report)
    _invalid_rows(tensions.path.name, _tension_rows(tensions), report)
    ids = {row.key for row in rows if row.key}
    for value in tension_values:
        for side in ("engram_a", "engram_b"):
            if value.get(side) not in ids:
                report.warnings.append(
                    f"tension {value.get('id')} names {value.get(side)}, which is not in "
                    "engrams.yaml (compacted or deleted)"
                )
    logged = {pair for _name, month in months for pair in month.ours}
    reviews = [(r.facts[0], r.facts[3], r.line) for r in rows if r.facts is not None and r.facts[3] is not None]
    for engram_id, record, _line in reviews:
        if (str(engram_id), str(record.get("at"))) not in logged:
            report.unfinished.append(
                f"engrams.yaml {engram_id}: a review record ({record.get('state')} by {record.get('by')} at "
                f"{record.get('at')}) but no history event; a plur_desk write was interrupted before its event was "
                "appended"
            )
    if log.dir.parent.joinpath(JOURNAL_DIR).is_dir():
        from plur_desk.store.plur_store import PlurStore
        from plur_desk.store.recovery import inspect

        report.unfinished += inspect(PlurStore(root))
    _untrusted_claims(root, months, reviews, report)
    per_month = {name[:-6]: month for name, month in months if month.events}
    last = sorted(per_month)[-1] if per_month else "0000-00"
    report.history = {
        "total": sum(month.events for _name, month in months),
        "events": {m: dict(Counter(per_month[m].types)) for m in sorted(per_month)},
        "malformed_lines": [
            {"file": name, "line": line, "reason": reason} for name, month in months for line, reason in month.malformed
        ],
        "chain": log.mode(last).value,
    }
    return report


def _untrusted_claims(
    root: Path,
    months: list[tuple[str, MonthSummary]],
    reviews: list[tuple[object, dict[str, object], int]],
    report: CheckReport,
) -> None:
    """Every `kind: human` event that is not signed by the claimed reviewer's registered key, and every review
    record in engrams.yaml that no such event backs. (The signature code is imported only when there is a claim or
    a key to check.)"""
    from plur_desk.domain.trust import TrustState, backs_review

    claims = [(name, line, raw) for name, month in months for line, raw in month.claims]
    valid: dict[tuple[str, str], list[dict[str, object]]] = {}
    if claims or (root / "keys.yaml").exists() or os.path.lexists(root / "keys.yaml"):
        from plur_desk.app.trust import TrustChecker
        from plur_desk.store.signatures import claimed_human, classify

        checker = TrustChecker(root)
        registry = checker.registry()
        if registry.problem:
            report.warnings.append(f"keys.yaml: {registry.problem}")
        for name, line, raw in claims:
            event = json.loads(raw)
            event["_month"], event["_line"] = name[:-6], line
            trust = classify(event, registry)
            if trust.state is TrustState.VALID:
                valid.setdefault((str(event.get("engram_id")), str(event.get("timestamp"))), []).append(event)
            elif trust.suspicious:
                report.untrusted.append(
                    {
                        "file": f"history/{name}",
                        "line": line,
                        "event": event.get("event"),
                        "engram_id": event.get("engram_id"),
                        "claims": claimed_human(event),
                        "trust": trust.state.value,
                        "detail": trust.detail,
                    }
                )
    for raw_id, record, at_line in reviews:
        engram_id = str(raw_id)
        backed = valid.get((engram_id, str(record.get("at"))))
        if not any(backs_review(e, engram_id, record) for e in backed or []):
            report.untrusted.append(
                {
                    "file": "engrams.yaml",
                    "line": at_line,
                    "event": f"review: {record.get('state')}",
                    "engram_id": raw_id,
                    "claims": str(record.get("by", "")),
                    "trust": TrustState.UNSIGNED.value,
                    "detail": "no validly signed history event records this review",
                }
            )
