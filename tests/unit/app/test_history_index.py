"""HistoryIndex keeps positions by engram id and the rejection verdicts as lines arrive: every query answers
exactly what a full scan of all lines answers, after a load, after appends (ours and PLUR's) and after a reload."""

from __future__ import annotations

import json
import random

import pytest

from plur_desk.app.history.history_index import HistoryFilter, HistoryIndex, _names_engram, actor_name, parse_line
from plur_desk.app.history.history_lines import ids_in
from plur_desk.app.review.rows import Verdict
from plur_desk.domain.trust import Trust, TrustState
from plur_desk.store.history.log import HistoryLog

IDS = [f"ENG-2026-0{m}-01-00{i}" for m in range(1, 4) for i in range(4)] + ['ENG-"quoted"', "ENG-ü-1", "ENG-]x"]


def _trust(event: dict[str, object]) -> Trust:
    actor = event.get("actor")
    if isinstance(actor, dict) and actor.get("kind") == "human":
        return Trust(TrustState.VALID if actor.get("asserted_by") == "Ada" else TrustState.UNSIGNED, "test")
    return Trust(TrustState.NOT_HUMAN)


def _event(rng: random.Random, n: int, month: int) -> dict[str, object]:
    engram = rng.choice(IDS)
    other = rng.choice(IDS)
    stamp = f"2026-0{month}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:00:00.000Z"
    human = {"asserted_by": rng.choice(["Ada", "Bob"]), "kind": "human", "runtime": {"name": "plur-desk"}}
    agent = {"asserted_by": "agent:codex", "runtime": {"name": "plur-core"}}
    kind = rng.randrange(7)
    if kind == 0:
        return {
            "event": "engram_retired",
            "engram_id": engram,
            "timestamp": stamp,
            "data": {"action": "reject", "reason": f"r{n}", "content_hash": f"h{rng.randrange(4)}"},
            "actor": rng.choice([human, agent]),
        }
    if kind == 1:
        return {
            "event": "engram_updated",
            "engram_id": engram,
            "timestamp": stamp,
            "data": {"action": "undo", "undos": "reject"},
            "actor": human,
        }
    if kind == 2:
        return {"event": "co_injection", "engram_id": "INJ-1", "timestamp": stamp, "data": {"ids": [engram, other]}}
    if kind == 3:
        field = rng.choice(["engram_b", "winner", "loser", "earlier", "later"])
        return {"event": "tension_reviewed", "engram_id": other, "timestamp": stamp, "data": {field: engram}}
    if kind == 4:  # a statement that mentions an id in its text names nothing
        return {"event": "engram_updated", "engram_id": other, "timestamp": stamp, "data": {"to": f"see {engram}"}}
    if kind == 5:
        return {"event": "engram_created", "engram_id": engram, "timestamp": stamp, "actor": agent}
    return {"event": "feedback_received", "engram_id": engram, "timestamp": stamp, "data": {"ids": [1, engram]}}


def _write(root, rng: random.Random, month: int, count: int, start: int = 0) -> None:
    path = root / "history" / f"2026-0{month}.jsonl"
    with open(path, "a", encoding="utf-8") as handle:
        for n in range(start, start + count):
            event = _event(rng, n, month)
            if n % 11 == 0:  # written with \u escapes, as any JSON writer may
                handle.write(json.dumps(event, ensure_ascii=True).replace("_", "\\u005f", 1) + "\n")
            else:
                handle.write(json.dumps(event, ensure_ascii=False) + "\n")
        if start == 0:
            handle.write("not json at all\n" + ("\n" if month == 1 else "") + '{"event":"cut"} \r\n["x"]\n')


def _scan_timeline(index: HistoryIndex, engram_id: str) -> list[dict[str, object]]:
    events = [parse_line(*line) for line in index.lines]
    return sorted((e for e in events if _names_engram(e, engram_id)), key=lambda e: str(e.get("timestamp")))


def _scan_rejections(index: HistoryIndex) -> dict[str, Verdict]:
    """The full-scan rule as it was written before the index kept it."""
    verdicts: dict[str, Verdict] = {}
    candidates = [(line, parse_line(*line)) for line in index.lines if b'"reject"' in line[0]]
    for line, event in sorted(candidates, key=lambda c: str(c[1].get("timestamp", ""))):
        data = event.get("data")
        if isinstance(data, dict) and data.get("action") == "undo" and data.get("undos") == "reject":
            human = index.trust_of(line).counts_as_human  # only a human's undo takes back a human's verdict
            verdicts = {
                k: v
                for k, v in verdicts.items()
                if v.engram_id != event.get("engram_id") or (v.trust.counts_as_human and not human)
            }
            continue
        if event.get("event") == "engram_retired" and isinstance(data, dict) and data.get("action") == "reject":
            digest = data.get("content_hash")
            if isinstance(digest, str):
                trust = index.trust_of(line)
                verdict = Verdict(
                    str(event.get("engram_id")),
                    actor_name(event),
                    str(event.get("timestamp", "")),
                    str(data.get("reason", "")),
                    trust,
                )
                if trust.counts_as_human or digest not in verdicts or not verdicts[digest].trust.counts_as_human:
                    verdicts[digest] = verdict
    return verdicts


def _check(index: HistoryIndex) -> None:
    for engram_id in [*IDS, "ENG-none"]:
        assert index.timeline(engram_id) == _scan_timeline(index, engram_id), engram_id
        flt = HistoryFilter(engram_id=engram_id)
        expected = [e for e in reversed([parse_line(*line) for line in index.lines]) if flt.matches(e)]
        assert list(index.newest_first(flt)) == expected
    human = HistoryFilter(actor_kinds=frozenset({"human"}))
    assert list(index.newest_first(human)) == [
        e for e in reversed([parse_line(*line) for line in index.lines]) if human.matches(e)
    ]
    assert index.rejections() == _scan_rejections(index)
    ours = {
        (str(e.get("engram_id")), str(e.get("timestamp")))
        for e in (parse_line(*line) for line in index.lines)
        if '"plur-desk"' in json.dumps(e, ensure_ascii=False)
    }
    assert index.human_decisions() == ours
    assert index.malformed_count() == sum(
        1 for raw, _m, _n in index.lines if not (raw[:1] == b"{" and raw.rstrip()[-1:] == b"}")
    )


@pytest.mark.parametrize("seed", range(4))
def test_positions_and_verdicts_match_a_full_scan_through_appends(tmp_path, seed) -> None:
    rng = random.Random(seed)
    root = tmp_path / "store"
    (root / "history").mkdir(parents=True)
    for month in (1, 2):
        _write(root, rng, month, 150)
    index = HistoryIndex(HistoryLog(root), _trust)
    index.load_newest(50)
    assert index.partial
    _check(index)  # the first page's state answers for what it holds
    index.load()
    _check(index)
    assert index.rejections()  # the generated history has verdicts: the comparison is not between empties

    _write(root, rng, 2, 40, start=150)  # PLUR appends to the newest month
    assert index.refresh()
    _check(index)
    _write(root, rng, 3, 60)  # a new month (timestamps later than all before: applied on top)
    assert index.refresh()
    _check(index)

    # our own appends, including one older than the newest verdict (recomputed from the reject lines); the
    # store appends them to the month file before the index is told, and the index reads them from there
    late = _event(rng, 999, 3) | {"event": "engram_retired", "data": {"action": "reject", "content_hash": "h1"}}
    early = dict(late, timestamp="2026-01-01T00:00:00.000Z", engram_id=IDS[1])
    with open(root / "history" / "2026-03.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps(late) + "\n" + json.dumps(early) + "\n")
    index.add([late, early])
    assert [parse_line(*line)["engram_id"] for line in index.lines[-2:]] == [late["engram_id"], IDS[1]]
    _check(index)


def test_a_new_key_registry_recomputes_the_verdicts(tmp_path) -> None:
    rng = random.Random(7)
    root = tmp_path / "store"
    (root / "history").mkdir(parents=True)
    _write(root, rng, 1, 200)
    trusted = {"Ada"}

    def trust(event: dict[str, object]) -> Trust:
        actor = event.get("actor")
        if isinstance(actor, dict) and actor.get("kind") == "human":
            ok = actor.get("asserted_by") in trusted
            return Trust(TrustState.VALID if ok else TrustState.UNSIGNED, "test")
        return Trust(TrustState.NOT_HUMAN)

    class Checker:
        generation = 1

        def __call__(self, event: dict[str, object]) -> Trust:
            return trust(event)

    checker = Checker()
    index = HistoryIndex(HistoryLog(root), checker)
    index.load()
    before = index.rejections()
    assert before == _scan_rejections(index)
    trusted.add("Bob")
    checker.generation = 2
    after = index.rejections()
    assert after == _scan_rejections(index)
    assert any(v.by == "Bob" and v.trust.counts_as_human for v in after.values())


def test_ids_in_finds_every_named_engram_and_escaped_lines_are_parsed() -> None:
    line = json.dumps({"engram_id": "A", "data": {"ids": ["B", 'C"]'], "winner": "D", "to": "E"}}).encode()
    assert ids_in(line) == {"A", "B", 'C"]', "D"}
    escaped = b'{"engram\\u005fid":"X","data":{"loser":"Y"}}'
    assert ids_in(escaped) == {"X", "Y"}
    assert ids_in(b'{"data":{"ids":[1,"Z"]}}') == {"Z"}


def test_a_new_key_registry_rechecks_only_the_claims_of_a_human(tmp_path) -> None:
    """Registering a reviewer's key (the first decision of a session) changes keys.yaml: the verdicts stay as they
    are when no claim's trust changed, and only the lines that claim a human are checked again (an agent's
    rejection is trusted the same under any keys.yaml); when a claim's trust does change, they are recomputed."""
    rng = random.Random(7)
    root = tmp_path / "store"
    (root / "history").mkdir(parents=True)
    _write(root, rng, 1, 200)
    checked: list[dict[str, object]] = []
    trusted = {"Ada"}

    class Checker:
        generation = 1

        def __call__(self, event: dict[str, object]) -> Trust:
            checked.append(event)
            actor = event.get("actor")
            if isinstance(actor, dict) and actor.get("kind") == "human":
                ok = actor.get("asserted_by") in trusted
                return Trust(TrustState.VALID if ok else TrustState.UNSIGNED, "test")
            return Trust(TrustState.NOT_HUMAN)

    checker = Checker()
    index = HistoryIndex(HistoryLog(root), checker)
    index.load()
    before = index.rejections()
    rejections = [parse_line(*line) for line in index.lines if b'"reject"' in line[0]]
    assert any(e.get("actor", {}).get("kind") != "human" for e in rejections)  # agents' rejections are among them
    checked.clear()
    checker.generation = 2
    after = index.rejections()
    assert after == before == _scan_rejections(index)
    assert all(after[d] is before[d] for d in before)  # kept, not recomputed
    assert checked  # the claims were checked again…
    assert all(isinstance(e.get("actor"), dict) and e["actor"].get("kind") == "human" for e in checked)  # …only they
    trusted.add("Bob")
    checker.generation = 3
    changed = index.rejections()
    assert changed == _scan_rejections(index) != before
    assert any(v.by == "Bob" and v.trust.counts_as_human for v in changed.values())


def test_only_a_humans_undo_takes_back_a_humans_signed_rejection(tmp_path) -> None:
    """An agent's (or anyone's unverified) 'undo of reject' line must not erase a validly signed human rejection:
    a resubmitted draft with the rejected content would lose its 'rejected before' flag. A signed undo does."""
    root = tmp_path / "store"
    (root / "history").mkdir(parents=True)
    stamp = "2026-02-0{}T00:00:00.000Z"
    reject = {
        "event": "engram_retired",
        "engram_id": "ENG-7",
        "timestamp": stamp.format(2),
        "data": {"action": "reject", "content_hash": "h1", "reason": "wrong"},
        "actor": {"kind": "human", "asserted_by": "Ada"},
    }
    undo = {"event": "engram_updated", "engram_id": "ENG-7", "data": {"action": "undo", "undos": "reject"}}
    unsigned = [
        {**undo, "timestamp": stamp.format(3), "actor": {"asserted_by": "agent:codex"}},
        {**undo, "timestamp": stamp.format(4), "actor": {"kind": "human", "asserted_by": "Bob"}},
    ]
    path = root / "history" / "2026-02.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in [reject, *unsigned]))
    index = HistoryIndex(HistoryLog(root), _trust)
    index.load()
    assert index.rejections()["h1"].by == "Ada"
    assert index.rejections() == _scan_rejections(index)
    with open(path, "a") as handle:
        handle.write(json.dumps({**undo, "timestamp": stamp.format(5), "actor": reject["actor"]}) + "\n")
    index.refresh()
    assert index.rejections() == {} == _scan_rejections(index)


def _long_history(tmp_path, seed: int, per_month: int) -> tuple[HistoryIndex, HistoryFilter]:  # type: ignore[no-untyped-def]
    """Two months of generated history, loaded; and a filter by type that parses what it matches."""
    rng = random.Random(seed)
    root = tmp_path / "store"
    (root / "history").mkdir(parents=True)
    for month in (1, 2):
        _write(root, rng, month, per_month)
    index = HistoryIndex(HistoryLog(root), _trust)
    index.load()
    return index, HistoryFilter(types=frozenset({"engram_created"}))


def test_filtering_a_long_history_runs_no_young_collection(tmp_path) -> None:
    """Every line a filter parses is garbage at once: a young collection in the middle of a filter on the read pool
    held the interpreter lock (the window's thread waited 88 ms for one). The filter's answer is the same."""
    import gc

    index, flt = _long_history(tmp_path, 7, 2000)
    expected = [n for n, line in enumerate(index.lines) if parse_line(*line).get("event") == "engram_created"]
    passes: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            passes.append(info["generation"])

    thresholds = gc.get_threshold()
    gc.set_threshold(50, 2, 2)  # young passes every 50 allocations: a filter over 4,000 lines would see dozens
    gc.callbacks.append(seen)
    try:
        events = index.newest_first(flt)
    finally:
        gc.callbacks.remove(seen)
        gc.set_threshold(*thresholds)
    assert len(passes) <= 1, passes  # one may fall on the allocations before the matching starts; dozens without
    assert sorted(events._positions or []) == expected and expected


def test_a_claim_written_with_json_escapes_is_judged_and_shown_like_any_other(tmp_path) -> None:
    """`"h\\u0075man"` and `"rej\\u0065ct"` are "human" and "reject" to every JSON reader: a forged claim written so
    is still a candidate of the human-actor and trust filters and of the rejections (judged, shown NOT VERIFIED),
    never left out by the byte tests that narrow them."""
    root = tmp_path / "store"
    (root / "history").mkdir(parents=True)
    plain = {"event": "engram_created", "engram_id": "ENG-1", "timestamp": "2026-01-01T00:00:00.000Z"}
    forged = (
        '{"event":"engram_retired","engram_id":"ENG-2","timestamp":"2026-01-02T00:00:00.000Z",'
        '"data":{"action":"rej\\u0065ct","content_hash":"abc","reason":"no"},'
        '"actor":{"kind":"h\\u0075man","asserted_by":"Mallory"}}'
    )
    (root / "history" / "2026-01.jsonl").write_text(json.dumps(plain) + "\n" + forged + "\n", encoding="utf-8")
    for load in ("load", "load_newest"):
        index = HistoryIndex(HistoryLog(root), _trust)
        index.load() if load == "load" else index.load_newest(10)
        assert [parse_line(*line)["engram_id"] for line in index.human_lines()] == ["ENG-2"], load
        for flt in (
            HistoryFilter(actor_kinds=frozenset({"human"})),
            HistoryFilter(trust=frozenset({TrustState.UNSIGNED})),
            HistoryFilter(types=frozenset({"engram_retired"}), reviewer="mallory"),
        ):
            assert len(index.newest_first(flt)) == 1, (load, flt)
        verdict = index.rejections().get("abc")
        assert verdict is not None and verdict.engram_id == "ENG-2" and not verdict.trust.counts_as_human, load


def test_a_filter_nobody_wants_any_more_stops_early(tmp_path) -> None:
    index, flt = _long_history(tmp_path, 3, 5000)
    asked: list[int] = []
    wanted = index.newest_first(flt, stale=lambda: bool(asked.append(1)))  # asked, never stale
    assert len(wanted) == len(index.newest_first(flt)) > 0 and len(asked) >= 2  # asked every few thousand lines
    given_up = index.newest_first(flt, stale=lambda: len(asked) > 3 or bool(asked.append(1)))
    assert len(given_up) == 0


@pytest.mark.parametrize("seed", range(3))
def test_the_ledger_names_every_verdict_that_changed_since_an_answer(tmp_path, seed) -> None:
    """A follower (the draft queue) compares only the content hashes `rejections_touched` names: through appends in
    order, out of order (recomputed) and undos, every hash whose verdict differs from an earlier answer is named,
    an answer is never changed after it is handed out, and an answer nothing touched is the same object."""
    rng = random.Random(seed)
    root = tmp_path / "store"
    (root / "history").mkdir(parents=True)
    _write(root, rng, 1, 120)
    index = HistoryIndex(HistoryLog(root), _trust)
    index.load()
    answers = [(index.rejections(), dict(index.rejections()))]
    assert index.rejections() is answers[0][0]  # nothing read: the same answer
    with pytest.raises(TypeError):  # shared by every thread that asked: nobody can change it
        answers[0][0]["h0"] = None  # type: ignore[index]
    named = 0
    for step in range(12):
        if step == 5:  # older than every verdict: recomputed from all rejection lines
            early = _event(rng, 500, 1) | {"timestamp": "2026-01-01T00:00:00.000Z", "event": "engram_retired"}
            early["data"] = {"action": "reject", "reason": "early", "content_hash": "h2"}
            with open(root / "history" / "2026-01.jsonl", "a", encoding="utf-8") as handle:
                handle.write(json.dumps(early) + "\n")
        else:  # later than every line before: applied on top
            with open(root / "history" / "2026-03.jsonl", "a", encoding="utf-8") as handle:
                for n in range(15):
                    event = _event(rng, 200 + 15 * step + n, 3) | {"timestamp": f"2026-03-{step + 1:02d}T{n:02d}:00Z"}
                    handle.write(json.dumps(event) + "\n")
        index.refresh()
        latest = index.rejections()
        assert latest == _scan_rejections(index)
        for answer, copy in answers:
            assert answer == copy  # never changed after it was handed out
            touched = index.rejections_touched(answer)
            if touched is None:
                continue
            named += 1
            assert {d for d in set(copy) | set(latest) if copy.get(d) != latest.get(d)} <= touched
        answers = [*answers[-3:], (latest, dict(latest))]
    assert named >= 12  # most answers could be followed: the check above is not vacuous
    assert index.rejections_touched({}) is None  # not one of its answers
