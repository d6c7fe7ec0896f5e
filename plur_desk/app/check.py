"""`plur-desk check`: what is in a store and what PLUR would quarantine, without writing anything."""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from plur_desk.app.check_ids import duplicate_ids, held_engrams, renames_in
from plur_desk.domain.plur_rules.engram_rules import tension_problems
from plur_desk.domain.plur_rules.rekey import Renames
from plur_desk.domain.trust import Trust
from plur_desk.infra.memory import gc_paused
from plur_desk.infra.paths import cache_dir
from plur_desk.store.history.log import HistoryLog, MonthSummary, summarize_history
from plur_desk.store.journal import JOURNAL_DIR
from plur_desk.store.lists.engram_summary import EngramRow, summarize_engrams
from plur_desk.store.lists.list_file import TENSIONS, ListFile
from plur_desk.store.lists.parse_cache import cache_path
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
            what = f"{claim['event']} {claim['engram_id']}" if claim["engram_id"] else str(claim["event"])
            lines.append(
                f"{str(claim.get('reason', claim['trust'])).upper()} {where}: {what} "
                f"claiming {claim['claims']!r}: {claim['detail']}"
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


def _invalid_rows(name: str, rows: list[EngramRow], report: CheckReport, *, repeats: bool = True) -> None:
    """Entries PLUR quarantines; with `repeats`, a repeated id too (tensions: engram ids repeat by PLUR's rule)."""
    seen: dict[str, int] = {}
    for row in rows:
        key, reason = row.key, row.reason
        if repeats and reason is None and key is not None and key in seen:
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
    _invalid_rows("engrams.yaml", rows, report, repeats=False)
    _invalid_rows(tensions.path.name, _tension_rows(tensions), report)
    notes, renamed = duplicate_ids(root / "engrams.yaml", rows) if engrams.fatal is None else ([], set())
    report.warnings += notes
    held_notes, report.engrams["held"] = held_engrams(root, rows)
    report.warnings += held_notes
    ids = {row.key for row in rows if row.key} | renamed
    renames = renames_in(months)
    for value in tension_values:
        for side in ("engram_a", "engram_b"):
            if value.get(side) not in ids and renames.later(str(value.get(side)), ids) is None:
                report.warnings.append(
                    f"tension {value.get('id')} names {value.get(side)}, which is not in "
                    "engrams.yaml (compacted or deleted)"
                )
    logged = {pair for _name, month in months for pair in month.ours}
    reviewed = [(row.line, row.facts[3]) for row in rows if row.facts is not None and row.facts[3] is not None]
    for _line, engram in reviewed:
        engram_id, record = engram.get("id"), engram.get("review")
        assert isinstance(record, dict)
        if not any((name, str(record.get("at"))) in logged for name in renames.names(str(engram_id))):
            report.unfinished.append(
                f"engrams.yaml {engram_id}: a review record ({record.get('state')} by {record.get('by')} at "
                f"{record.get('at')}) but no history event; a plur_desk write was interrupted before its event was "
                "appended"
            )
    if os.path.lexists(log.dir.parent / JOURNAL_DIR) or os.path.lexists(log.dir.parent / JOURNAL_DIR.parent):
        from plur_desk.app.trust.verifier import TrustChecker
        from plur_desk.domain.trust import TrustState
        from plur_desk.store.plur_store import PlurStore
        from plur_desk.store.recovery import inspect

        trust = TrustChecker(root)  # check has no reviewer: only keys this user trusts verify a record
        report.unfinished += inspect(PlurStore(root), lambda claim: trust(claim).state is TrustState.VALID)
    _untrusted_claims(root, months, reviewed, renames, report)
    _baseline_claims(root, report)
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


REASONS = {  # the stable reason `check` gives for each verdict (README: "plur-desk check")
    "unsigned": "unsigned",
    "invalid": "invalid_signature",
    "unknown_signer": "unknown_signer",
    "untrusted_key": "untrusted_key",
    "foreign_key_for_identity": "foreign_key_for_identity",
    "confusable_identity": "confusable_identity",
    "review_without_decision": "review_without_decision",
    "undone_review_restored": "undone_review_restored",
}


def _claim(
    file: str, line: int | None, event: object, engram_id: object, claims: object, trust: Trust
) -> dict[str, object]:
    return {
        "file": file,
        "line": line,
        "reason": REASONS.get(trust.state.value, trust.state.value),
        "event": event,
        "engram_id": engram_id,
        "claims": claims,
        "trust": trust.state.value,
        "detail": trust.detail,
    }


def _untrusted_claims(
    root: Path,
    months: list[tuple[str, MonthSummary]],
    reviews: list[tuple[int, dict[str, object]]],
    renames: Renames,
    report: CheckReport,
) -> None:
    """Every `kind: human` event that is not signed by a key this user trusts for the claimed reviewer, every
    keys.yaml entry passing as the user, and every review record in engrams.yaml that no verified decision on the
    engram's content backs. (The signature code is imported only when there is a claim or a key to check.)"""
    from plur_desk.domain.decision import review_standing
    from plur_desk.domain.trust import TrustState

    claims = [(name, line, raw) for name, month in months for line, raw in month.claims]
    by_engram: dict[str, list[tuple[dict[str, object], Trust]]] = {}
    if claims or os.path.lexists(root / "keys.yaml") or reviews:
        from plur_desk.app.trust.verifier import TrustChecker
        from plur_desk.store.keys.signatures import claimed_human

        checker = TrustChecker(root)
        registry = checker.registry()
        if registry.problem:
            report.warnings.append(f"keys.yaml: {registry.problem}")
        report.warnings += checker.problems
        _foreign_keys(root, checker, report)
        signed_at: dict[str, str] = {}  # signature -> where history first holds it
        for name, line, raw in claims:
            event = json.loads(raw)
            event["_month"], event["_line"] = name[:-6], line
            signature = event.get("signature")
            if isinstance(signature, str):
                first = signed_at.setdefault(signature, f"history/{name} line {line}")
                if first != f"history/{name} line {line}":
                    report.untrusted.append(_replayed(name, line, event, first))
                    continue
            trust = checker.check(event)
            by_engram.setdefault(str(event.get("engram_id")), []).append((event, trust))
            if trust.suspicious:
                report.untrusted.append(
                    _claim(
                        f"history/{name}", line, event.get("event"), event.get("engram_id"), claimed_human(event), trust
                    )
                )
    carried = {
        (str(e.get("id")), str(r.get("at")), str(r.get("by")))
        for _l, e in reviews
        if isinstance(r := e.get("review"), dict)
    }
    for line, engram in reviews:
        engram_id = str(engram.get("id"))
        record = engram.get("review")
        assert isinstance(record, dict)
        at, by = str(record.get("at")), str(record.get("by"))
        # A review made before PLUR renamed the engram is signed under its old id; followed only when no engram
        # still under that id carries the same review (a copy must not borrow the original's signature).
        names = [engram_id] + [n for n in renames.earlier(engram_id) if (n, at, by) not in carried]
        events = sorted(
            (
                c
                for name in names
                for c in by_engram.get(name, [])
                if renames.follows(engram_id, name, c[0].get("timestamp"))
            ),
            key=lambda c: str(c[0].get("timestamp")),
        )
        standing = review_standing(engram, events, names)
        if standing.state is not TrustState.VALID:
            report.untrusted.append(
                _claim(
                    "engrams.yaml",
                    line,
                    f"review: {record.get('state')}",
                    engram.get("id"),
                    str(record.get("by", "")),
                    standing,
                )
            )


def _replayed(name: str, line: int, event: dict[str, object], first: str) -> dict[str, object]:
    """A human event whose signature history already holds: a copy (a replay), never a second decision."""
    from plur_desk.store.keys.signatures import claimed_human

    return {
        "file": f"history/{name}",
        "line": line,
        "event": event.get("event"),
        "engram_id": event.get("engram_id"),
        "claims": claimed_human(event),
        "trust": "replayed_event",
        "reason": "replayed_event",
        "detail": f"its signature is that of the event at {first}: a copy of that decision, not a new one",
    }


def _foreign_keys(root: Path, checker: object, report: CheckReport) -> None:
    """keys.yaml entries that give one of the user's own identities a key that is not theirs, and entries under a
    name that reads as a trusted reviewer's but is another."""
    from plur_desk.app.trust.verifier import TrustChecker
    from plur_desk.domain.trust import Trust, TrustState, fingerprint

    assert isinstance(checker, TrustChecker)
    found = [(e, TrustState.FOREIGN_KEY_FOR_IDENTITY, "") for e in checker.foreign_keys()]
    trusted = checker.trusted()
    for entry in checker.registry().entries:
        twin = trusted.lookalike(entry.identity)
        if twin is not None:
            found.append((entry, TrustState.CONFUSABLE_IDENTITY, twin))
    if not found:
        return
    from plur_desk.store.safe_open import read_regular

    try:  # never a FIFO or a device (read_regular), and only what is text
        text = read_regular(root / "keys.yaml")[0].decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        text = []
    for entry, state, twin in found:
        line = next((n for n, t in enumerate(text, 1) if entry.public_key in t), None)
        while line is not None and line > 1 and not text[line - 1].lstrip().startswith("- "):
            line -= 1  # the entry's first line (`- identity: …`)
        shown = f"{entry.identity!r} (fingerprint {fingerprint(entry.public_key)})"
        detail = (
            f"keys.yaml lists a key for {shown} that is not yours: whatever it signs is a forgery"
            if state is TrustState.FOREIGN_KEY_FOR_IDENTITY
            else f"keys.yaml lists a key for {shown}, a name that looks like the trusted {twin!r} but is another"
        )
        report.untrusted.append(_claim("keys.yaml", line, "key", None, entry.identity, Trust(state, detail)))


def _baseline_claims(root: Path, report: CheckReport) -> None:
    """Every line of the watched baseline that is not a validly signed claim (edited, planted, cut off): what it
    claims is not trusted (app/changes/watch.py), and it is reported here."""
    from plur_desk.store import baseline

    if not os.path.lexists(baseline.path_of(root)):
        return
    from plur_desk.app.changes.baseline_read import read_baseline
    from plur_desk.app.trust.verifier import TrustChecker

    for line, reason in read_baseline(root, TrustChecker(root)).problems:
        report.untrusted.append(
            {
                "file": baseline.RELATIVE,
                "line": line,
                "event": "baseline",
                "engram_id": None,
                "claims": "",
                "trust": "untrusted",
                "reason": "unverified_baseline_line",
                "detail": reason,
            }
        )
