"""`plur-desk check`: what is in a store and what PLUR would quarantine, without writing anything."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from plur_desk.infra.errors import NotAPlurStore
from plur_desk.infra.paths import cache_dir
from plur_desk.store.list_file import ListFile
from plur_desk.store.plur_store import PlurStore


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
        if t:
            lines.append(f"tensions: {t['total']}  ({_fmt(t['by_status'])})")
        if h:
            lines.append(
                f"history: {h['total']} events in {len(events)} months; "
                f"{len(malformed)} malformed lines; chain: {h['chain']}"
            )
            for month, types in events.items():
                lines.append(f"  {month}: {_fmt(types)}")
            for bad in malformed[:50]:
                lines.append(f"  malformed: {bad['file']} line {bad['line']}: {bad['reason']}")
        for item in self.invalid:
            lines.append(f"INVALID {item['file']} line {item['line']} {item['id'] or '(no id)'}: {item['reason']}")
        for claim in self.untrusted:
            lines.append(
                f"{str(claim['trust']).upper()} human claim {claim['file']} line {claim['line']} "
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


def _fmt(counts: object) -> str:
    assert isinstance(counts, dict)
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))) or "none"


def _invalid_entries(snapshot: ListFile, report: CheckReport) -> None:
    seen: dict[str, int] = {}
    for entry in snapshot.entries:
        key = entry.key
        reason = entry.syntax_error or ("; ".join(entry.problems) if entry.problems else None)
        if reason is None and key is not None and key in seen:
            reason = f"duplicate id (first at line {seen[key]})"
        if key is not None:
            seen.setdefault(key, entry.line)
        if reason:
            if key is None and isinstance(entry.value, dict) and isinstance(entry.value.get("id"), object):
                key = str(entry.value.get("id")) if entry.value.get("id") is not None else None
            report.invalid.append({"file": snapshot.path.name, "id": key, "line": entry.line, "reason": reason})


def run_check(root: Path, *, use_cache: bool = True) -> CheckReport:
    """The parse cache is the window's (valid blocks by content digest, keyed by version; an invalid entry is never
    cached, so it is parsed and reported on every run); the store-wide checks below always run on the whole file."""
    report = CheckReport(store=str(root))
    try:
        store = PlurStore(root, cache_dir=cache_dir() if use_cache else None)
    except NotAPlurStore as exc:
        report.readable = False
        report.unreadable_reasons.append(str(exc))
        return report
    store.load(drafts_first=False)
    store.save_cache()
    reasons = [r for r in store.read_only_reasons() if "not writable" not in r]
    if reasons:
        report.readable = False
        report.unreadable_reasons = reasons
    engram_values = [e.value for e in store.engrams.entries if isinstance(e.value, dict)]
    report.engrams = {
        "total": len(store.engrams.entries),
        "valid": sum(1 for e in store.engrams.entries if e.valid),
        "by_status": dict(Counter(str(v.get("status", "(none)")) for v in engram_values)),
        "by_commitment": dict(Counter(str(v.get("commitment", "(none)")) for v in engram_values)),
        "layout": "plur" if store.engrams.regular else "other (read whole; a write rewrites the file)",
    }
    tension_values = [e.value for e in store.tensions.entries if isinstance(e.value, dict)]
    report.tensions = {
        "total": len(store.tensions.entries),
        "by_status": dict(Counter(str(v.get("status", "detected")) for v in tension_values)),
    }
    _invalid_entries(store.engrams, report)
    _invalid_entries(store.tensions, report)
    ids = {e.key for e in store.engrams.entries if e.key}
    for value in tension_values:
        for side in ("engram_a", "engram_b"):
            if value.get(side) not in ids:
                report.warnings.append(
                    f"tension {value.get('id')} names {value.get(side)}, which is not in "
                    "engrams.yaml (compacted or deleted)"
                )
    from plur_desk.app.history_index import HistoryIndex

    index = HistoryIndex(store.history)
    index.load()
    logged = index.human_decisions()
    for value in engram_values:
        record = value.get("review")
        if isinstance(record, dict) and (str(value.get("id")), str(record.get("at"))) not in logged:
            report.unfinished.append(
                f"engrams.yaml {value.get('id')}: a review record ({record.get('state')} by {record.get('by')} at "
                f"{record.get('at')}) but no history event; a plur_desk write was interrupted before its event was "
                "appended"
            )
    from plur_desk.store.recovery import inspect

    report.unfinished += inspect(store)
    history = store.history.read_all()
    _untrusted_claims(store, history.events, engram_values, report)
    months: dict[str, Counter[str]] = {}
    for event in history.events:
        months.setdefault(str(event["_month"]), Counter())[str(event.get("event"))] += 1
    month = sorted(months)[-1] if months else "0000-00"
    report.history = {
        "total": len(history.events),
        "events": {m: dict(c) for m, c in sorted(months.items())},
        "malformed_lines": [{"file": b.file, "line": b.line, "reason": b.reason} for b in history.malformed],
        "chain": store.history.mode(month).value,
    }
    return report


def _untrusted_claims(
    store: PlurStore, events: list[dict[str, object]], engrams: list[dict[str, object]], report: CheckReport
) -> None:
    """Every `kind: human` event that is not signed by the claimed reviewer's registered key, and every review
    record in engrams.yaml that no such event backs."""
    from plur_desk.app.trust import TrustChecker
    from plur_desk.domain.trust import TrustState, backs_review
    from plur_desk.store.signatures import claimed_human

    checker = TrustChecker(store.root)
    if checker.registry().problem:
        report.warnings.append(f"keys.yaml: {checker.registry().problem}")
    valid: dict[tuple[str, str], list[dict[str, object]]] = {}
    for event in events:
        trust = checker(event)
        if trust.state is TrustState.VALID:
            valid.setdefault((str(event.get("engram_id")), str(event.get("timestamp"))), []).append(event)
        elif trust.suspicious:
            report.untrusted.append(
                {
                    "file": f"history/{event['_month']}.jsonl",
                    "line": event["_line"],
                    "event": event.get("event"),
                    "engram_id": event.get("engram_id"),
                    "claims": claimed_human(event),
                    "trust": trust.state.value,
                    "detail": trust.detail,
                }
            )
    for engram in engrams:
        record = engram.get("review")
        engram_id = str(engram.get("id"))
        backed = valid.get((engram_id, str(record.get("at")))) if isinstance(record, dict) else None
        if isinstance(record, dict) and not any(backs_review(e, engram_id, record) for e in backed or []):
            report.untrusted.append(
                {
                    "file": "engrams.yaml",
                    "line": None,
                    "event": f"review: {record.get('state')}",
                    "engram_id": engram.get("id"),
                    "claims": str(record.get("by", "")),
                    "trust": TrustState.UNSIGNED.value,
                    "detail": "no validly signed history event records this review",
                }
            )
