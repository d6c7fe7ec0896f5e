"""The watched baseline's file read and verified: every line checked through the store's `TrustChecker` like any
human claim (a line that does not parse, is not a baseline line, or is not validly signed by a key this user trusts
is reported and claims nothing), the verified reading kept beside the parse cache, and each line as judged
(`Judged`), so that a change of keys decides again only which lines count (app/changes/watch.py)."""

from __future__ import annotations

import hashlib
import json
import marshal
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from plur_desk import __version__
from plur_desk.domain.agents.agent_changes import Baseline, Values
from plur_desk.domain.agents.baseline_lines import BadLine, Extras, Since, read_line, since_of
from plur_desk.infra.jobs import checkpoint
from plur_desk.store import baseline as baseline_file
from plur_desk.store.lists.parse_cache import CACHE_CHUNK, read_private, write_private
from plur_desk.store.safe_open import NotRegularFile

if TYPE_CHECKING:
    from plur_desk.app.trust.verifier import TrustChecker


@dataclass
class Judged:
    """One line as read, with what no change of trust alters: its number, the SHA-256 of its bytes, its event
    (None: not a JSON object), what is wrong with it whatever the keys (`problem`: not JSON, or a counted line that
    is not a baseline line), and whether it counted when last judged."""

    number: int
    digest: bytes
    event: dict[str, object] | None
    counted: bool
    problem: str | None = None
    parsed: bool = True  # False: a kept reading's line, its event not read yet (app/changes/watch.py reads it)
    # a kept reading's line: what its cache file says verifying it established ({public key: whether it verifies}).
    # Used only to judge this line once its digest matched the bytes read (`parsed`), never given to the checker's
    # memo: the cache file is as writable as the store, and the history and the ledger share that memo
    kept: dict[str, bool] | None = field(default=None, compare=False, repr=False)


@dataclass
class BaselineRead:
    """The verified baseline and every line that was not trusted (with its line number and why)."""

    baseline: Baseline = field(default_factory=Baseline)
    problems: list[tuple[int | None, str]] = field(default_factory=list)  # (line number, what is wrong)
    lines: int = 0
    # every line as judged, in file order; None when unknown (a reading kept beside the cache)
    judged: list[Judged] | None = field(default_factory=list, compare=False, repr=False)

    def problem_lines(self) -> list[str]:
        where = baseline_file.RELATIVE
        return [f"{where}{f' line {n}' if n else ''}: {reason}" for n, reason in self.problems]


def read_baseline(root: Path, trust: TrustChecker, cache: Path | None = None) -> BaselineRead:
    """Read `.plur-desk/baseline/baseline.jsonl` and keep only what verified lines say. With `cache` (the store's
    parse cache file), the verified reading is kept beside it, keyed by the file's digest, the trusted keys as the
    checker holds them and this version: the same bytes under the same keys read the same, without verifying."""
    read = BaselineRead()
    try:
        data = baseline_file.read_bytes(root)
    except NotRegularFile as exc:
        read.problems.append((None, str(exc)))
        return read
    except OSError as exc:
        read.problems.append((None, f"cannot be read: {exc.strerror or exc}"))
        return read
    if not data:
        return read
    key = _cache_key(data, trust)
    if cache is not None:
        kept = read_private(baseline_file.verified_cache(cache), baseline_file.VERIFIED_TAG).get(key)
        if kept is not None:
            return _from_cache(kept)
    _verify(baseline_file.lines_of(data), trust, read)
    if cache is not None:
        write_private(baseline_file.verified_cache(cache), baseline_file.VERIFIED_TAG, {key: _to_cache(read, trust)})
    return read


def _cache_key(data: bytes, trust: TrustChecker) -> bytes:
    registry = repr(trust.registry())  # keys.yaml read once for all the lines; its state is part of the answer
    trusted = repr(trust.trusted().keys)  # and the keys this user trusts: a key dropped since verifies nothing
    digest = hashlib.sha256(data)
    digest.update(f"\0{registry}\0{trusted}\0{__version__}\0extras,latest,pieces,judged".encode())
    return digest.digest()


def _to_cache(read: BaselineRead, trust: TrustChecker) -> object:
    b = read.baseline
    big = (_pieces(b.engrams), _pieces(b.engram_at), b.tensions, b.tension_at)
    # each line as judged, and what verifying it established (whose keys it verifies under): a later change of keys
    # judges the kept reading's lines again without verifying them again
    judged = [(j.number, j.digest, j.counted, j.problem, trust.verified(j.digest)) for j in read.judged or []]
    return (b.started, b.started_by, *big, read.problems, read.lines, _pieces(b.extras), b.latest, judged)


def _pieces(table: dict[str, Any]) -> list[bytes]:
    """A table kept as marshal bytes of CACHE_CHUNK records each: the kept reading's file is then unpacked piece by
    piece (one `marshal.loads` of 50,000 engrams' values held the interpreter 100 ms on a quiet machine: the
    window's thread waited it out at every warm open)."""
    items = list(table.items())
    return [marshal.dumps(dict(items[n : n + CACHE_CHUNK])) for n in range(0, len(items), CACHE_CHUNK)]


def _unpieced(pieces: list[bytes]) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for piece in pieces:
        table.update(marshal.loads(piece))
        checkpoint()
    return table


def _from_cache(kept: object) -> BaselineRead:
    parts = cast(tuple[Any, ...], kept)  # written by _to_cache, under a key naming this version
    baseline = Baseline(
        started=parts[0],
        started_by=parts[1],
        engrams=_unpieced(parts[2]),
        engram_at=_unpieced(parts[3]),
        tensions=parts[4],
        tension_at=parts[5],
        extras=_unpieced(parts[8]),
        latest=parts[9],
    )
    judged = []
    for number, digest, counted, problem, verified in parts[10]:
        judged.append(Judged(number, digest, None, counted, problem, parsed=False, kept=dict(verified)))
    return BaselineRead(baseline, [(p[0], p[1]) for p in parts[6]], parts[7], judged=judged)


Reading = tuple[str, dict[str, Values], dict[str, Values], Extras]  # (claim, the values): what a line says
Taken = tuple[str, str, str, dict[str, Values], dict[str, Values], Extras, Since]  # (signed at, claim, by, the values)


def _verify(lines: list[tuple[int, bytes]], trust: TrustChecker, read: BaselineRead) -> None:
    read.lines += len(lines)
    apply_lines(read.baseline, collect(lines, trust, read.problems, read.judged))


def distrust(trust: TrustChecker, judged: Judged) -> str | None:
    """Why the line's claim is ignored by the keys as now, or None when it counts (its signature verified under a
    key once is not verified again: `TrustChecker.check` keeps that by the line's digest)."""
    if judged.event is None:
        return judged.problem
    kept = judged.kept if judged.parsed else None  # the kept answer, for bytes matched against the file read
    verdict = trust.check(judged.event, judged.digest, kept)
    if verdict.counts_as_human:
        return None
    return f"not trusted ({verdict.detail or verdict.label or 'claims no human'}); what it claims is ignored"


def collect(
    lines: list[tuple[int, bytes]],
    trust: TrustChecker,
    problems: list[tuple[int | None, str]],
    judged: list[Judged] | None = None,
    known: dict[bytes, Reading] | None = None,
) -> list[Taken]:
    """What the lines that verify say, oldest first (stable: file order within one instant); the others reported,
    and each line as judged added to `judged`. `known`: what lines say by their SHA-256 (lines this session made,
    read from the values they were made of): taken from there instead of parsing the line, once it verified."""
    judged = judged if judged is not None else []
    taken: list[Taken] = []
    for number, raw in lines:
        line = Judged(number, hashlib.sha256(raw).digest(), None, counted=False)
        judged.append(line)
        try:
            event = json.loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError):  # nested deeper than the decoder goes
            line.problem = "not a JSON line"
        else:
            line.event = event if isinstance(event, dict) else None
            line.problem = None if isinstance(event, dict) else "not a JSON object"
        why = distrust(trust, line)
        if why is not None:
            problems.append((number, why))
            continue
        line.counted = True
        event = cast(dict[str, object], line.event)
        said = known.pop(line.digest, None) if known else None
        try:
            claim, engrams, tensions, extras = said if said is not None else read_line(event)
        except BadLine as exc:
            line.problem = str(exc)
            problems.append((number, line.problem))
            continue
        actor = event.get("actor")
        by = str(actor.get("asserted_by", "")) if isinstance(actor, dict) else ""
        at = str(event.get("timestamp", ""))
        taken.append((at, claim, by, engrams, tensions, extras, since_of(event, at)))
    taken.sort(key=lambda line: line[0])
    return taken


def apply_lines(baseline: Baseline, taken: list[Taken]) -> None:
    for at, claim, by, engrams, tensions, extras, since in taken:
        if claim == "watching" and baseline.started is None:
            baseline.started, baseline.started_by = at, by
        baseline.take_line(at, engrams, tensions, extras, since)
