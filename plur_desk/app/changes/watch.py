"""The watched baseline of one open store: read and verified, started, followed after each decision, and the agent
changes it shows.

Every line is checked through the store's `TrustChecker` like any human claim (app/changes/baseline_read.py): a
line that does not parse, is not a baseline line, or is not validly signed by a reviewer's registered key is
reported (`problems`) and claims nothing. Only verified lines make the baseline. Lines are written only by a reviewer's session: when watching
starts (`start`), after each of their decisions, undos and redos (`follow`: the values the decision's patches left,
never what an agent wrote beside them), and by Ratify and Revert.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

from plur_desk.app.changes.baseline_read import (
    BaselineRead,
    Judged,
    Reading,
    apply_lines,
    collect,
    distrust,
    read_baseline,
)
from plur_desk.domain.agents.agent_changes import (
    ENGRAM_FIELDS,
    RESTORE_FIELDS,
    TENSION_FIELDS,
    AgentChange,
    Values,
    detect,
    engram_extras,
    engram_values,
    tension_values,
)
from plur_desk.domain.agents.baseline_lines import (
    CLAIM_OF_ACTION,
    BadLine,
    Extras,
    Since,
    chunks,
    line_event,
    line_values,
    read_values,
)
from plur_desk.domain.agents.baseline_renames import follow_renames
from plur_desk.domain.review import ABSENT, Patch, Reviewer
from plur_desk.domain.seen import Seen
from plur_desk.infra.errors import ActionRefused, Outcome
from plur_desk.infra.jobs import giving_way
from plur_desk.store import baseline as baseline_file

if TYPE_CHECKING:  # the ratification's module (the commands) loads with the first decision, not at launch
    from collections.abc import Callable
    from datetime import datetime

    from plur_desk.app.changes.ratification import Ratified
    from plur_desk.app.history.history_index import HistoryIndex
    from plur_desk.app.review.snapshot import Snapshot
    from plur_desk.app.trust.signing import ReviewerKeys
    from plur_desk.app.trust.verifier import TrustChecker
    from plur_desk.store.plur_store import PlurStore


def changes_on_disk(store: PlurStore) -> tuple[BaselineRead, list[AgentChange]]:
    """For a terminal command: the store as loaded (app/bootstrap.open_store), the baseline verified, and the
    history of only the records that differ (read from the months since watching began). Writes nothing."""
    from plur_desk.app.review.snapshot import Snapshot
    from plur_desk.app.trust.verifier import TrustChecker
    from plur_desk.store.history.log import HistoryLog
    from plur_desk.store.recovery import rename_trail

    if store.read_only_reasons():
        raise ActionRefused("; ".join(store.read_only_reasons()))
    root = store.root
    snapshot = Snapshot(store)
    snapshot.reindex()
    trust = TrustChecker(root)
    read = read_baseline(root, trust, store.cache_file)
    baseline = read.baseline
    if not baseline.watched:
        return read, []
    months = [m for m in HistoryLog(root).month_files() if m.stem >= str(baseline.started)[:7]]
    events: dict[str, list[dict[str, object]]] = {}

    def prefetch(wanted: set[str]) -> None:
        events.update(baseline_file.events_naming(months, wanted) if wanted else {})

    def human(event: object) -> bool:
        return isinstance(event, dict) and trust(event).counts_as_human

    baseline = follow_renames(baseline, snapshot.engrams, lambda: rename_trail(root))
    found = detect(baseline, snapshot.engrams, snapshot.tensions, lambda i: events.get(i, []), human, prefetch)
    return read, found


class ChangeWatch:
    """The baseline as one session sees it: read again whenever the file changed, and written by its reviewer.
    A part of the session (app/review/session.py), given what it reads in its constructor: it never holds the
    session, which imports it."""

    def __init__(
        self,
        store: PlurStore,
        parts: tuple[Snapshot, TrustChecker, HistoryIndex, ReviewerKeys],
        reviewer: Reviewer,
        now: Callable[[], datetime],
        *,
        reading_only: bool,
    ) -> None:
        self.store, self.root, self.reviewer, self.now, self.reading_only = (
            store,
            store.root,
            reviewer,
            now,
            reading_only,
        )
        self.snapshot, self.trust, self.history, self.keys = parts
        self.cache = store.cache_file  # the store's parse cache file: the verified baseline is kept beside it
        # the bytes read, kept to compare (a memcmp: hashing 5.8 MB twice cost ~25 ms after every decision)
        self._prefix: bytes | None = None
        self._own: dict[bytes, Reading] = {}  # SHA-256 of a line this session appended -> what it says
        self._stamp: object = None
        self._read = BaselineRead()
        # id(operation) -> (the operation, what its ratification changed in the baseline): the operation is held, so
        # its id is never another's (a freed operation's id goes to the next one made, which would then sign as
        # `ratified` the agent's values of a change the reviewer had undone)
        self.ratified: dict[int, tuple[object, Ratified]] = {}

    def _file_stamp(self) -> object:
        try:
            st = baseline_file.path_of(self.root).stat()
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns, self.trust.generation)

    def read(self) -> BaselineRead:
        """The verified baseline, read again when the file changed: only the lines appended since when it grew
        (our own decisions' lines, a teammate's after a sync), all of it otherwise. When keys.yaml or a trust file
        changed, the trust of the lines read is decided again (`_rejudge`) without verifying them again."""
        self.trust.registry()  # bumps the generation when keys.yaml changed: the lines are judged again
        stamp = self._file_stamp()
        if stamp is not None and stamp == self._stamp:
            return self._read
        try:
            data = baseline_file.read_bytes(self.root)
        except OSError:
            data = None
        if data is None or not self._grown(data, stamp):
            self._read = read_baseline(self.root, self.trust, self.cache)
            self._own.clear()
            ended = data is not None and (data.endswith(b"\n") or (not data and not self._read.problems))
            self._prefix = data if ended else None  # b"": no line read (the lines written next are all new)
        self._stamp = stamp
        return self._read

    def _grown(self, data: bytes, stamp: object) -> bool:
        """Take only the lines appended after what was read (same file, every old byte unchanged, the new lines
        signed no earlier than any taken before), the old lines judged again first when the keys changed; False
        when the whole file must be read again."""
        old = self._stamp
        if self._prefix is None or stamp is None:
            return False
        if self._prefix and (old is None or old[0] != stamp[0]):  # type: ignore[index]
            return False  # lines were read from another file
        size = len(self._prefix)
        if len(data) < size or not data.startswith(self._prefix) or not data.endswith(b"\n"):
            return False
        if (old is None or old[3] != stamp[3]) and not self._rejudge():  # type: ignore[index]
            return False
        if len(data) == size:
            return True  # the same bytes: nothing to take
        first = data.count(b"\n", 0, size)
        lines = [(first + n, line) for n, line in baseline_file.lines_of(data[size:])]
        problems: list[tuple[int | None, str]] = []
        judged: list[Judged] = []
        taken = collect(lines, self.trust, problems, judged, self._own)
        if taken and taken[0][0] < self._read.baseline.latest:
            return False  # a line older than what it would follow (a merge put it there): read in signing order
        apply_lines(self._read.baseline, taken)
        self._read.problems += problems
        self._read.lines += len(lines)
        if self._read.judged is not None:
            self._read.judged += judged
        self._prefix = data
        return True

    def _rejudge(self) -> bool:
        """After keys.yaml or a trust file changed: each line read is judged again by the keys as now, from what
        verifying it established (whether its signature verifies under a key depends on its bytes and the key
        alone; only whether that key counts changed). The baseline stands when the same lines count (only the
        problems are said again); False when they differ, or were never judged here: the file is read again."""
        judged = self._read.judged
        if judged is None or len(judged) != self._read.lines or not self._parsed(judged):
            return False  # not every line read is known as judged: the file is read again
        problems: list[tuple[int | None, str]] = []
        for line in judged:
            why = distrust(self.trust, line)
            if line.event is not None and (why is None) != line.counted:
                return False  # a key now counts, or no longer does: the baseline is made again from its lines
            problem = line.problem if line.counted else why
            if problem is not None:
                problems.append((line.number, problem))
        self._read.problems = problems
        return True

    def _parsed(self, judged: list[Judged]) -> bool:
        """The events of a kept reading's lines, read from the bytes read here (each line's digest compared first:
        the reading was kept for these bytes); False when a line differs."""
        waiting = [line for line in judged if not line.parsed]
        raw = dict(baseline_file.lines_of(self._prefix)) if waiting and self._prefix else {}
        for line in waiting:
            data = raw.get(line.number)
            if data is None or hashlib.sha256(data).digest() != line.digest:
                return False
            try:
                event = json.loads(data)
            except (ValueError, UnicodeDecodeError, RecursionError):
                event = None  # its problem is kept with it
            line.event, line.parsed = (event if isinstance(event, dict) else None), True
        return True

    @property
    def watched(self) -> bool:
        return self.read().baseline.watched

    def changes(self) -> list[AgentChange]:
        """Every agent change since the baseline, on the session's current snapshot and history."""
        trust, history = self.trust, self.history

        def human(event: object) -> bool:
            return isinstance(event, dict) and trust.check(event).counts_as_human

        tensions = {str(t.get("id")): t for t in self.snapshot.tensions.values()}
        engrams = dict(self.snapshot.engrams)  # a copy another thread may keep
        watched = follow_renames(self.read().baseline, engrams, history.renames)  # PLUR 0.21's renames since
        return detect(watched, engrams, tensions, history.timeline, human)

    # -- writing ---------------------------------------------------------------------------------------------

    def _append(
        self,
        claim: str,
        engrams: dict[str, Values],
        tensions: dict[str, Values],
        note: str = "",
        extras: Extras | None = None,
        since: Since | None = None,
    ) -> None:
        if self.reading_only:
            raise ActionRefused("a read-only session writes no baseline")
        self.keys.ready()  # the key is reachable and keys.yaml holds no other key for this reviewer
        now = self.now()
        lines = []
        parts = chunks(engrams, tensions) if claim == "watching" else [(engrams, tensions)]
        own: dict[bytes, Reading] = {}
        # a repaint need not wait behind a whole store's lines (50 at 50,000 engrams, ~2.5 ms of Python each, on
        # the session's lane after its first decision: that approve's repaint waited for them)
        for part_engrams, part_tensions in giving_way(parts, every=1):
            values = line_values(part_engrams, part_tensions, extras)
            event = line_event(claim, values, self.reviewer, now, note=note, since=since)
            line = json.dumps(self.keys.sign(event), ensure_ascii=False, separators=(",", ":"))
            lines.append(line)
            with contextlib.suppress(BadLine):
                if all(isinstance(k, str) for k in itertools.chain(part_engrams, part_tensions)):
                    own[hashlib.sha256(line.encode("utf-8")).digest()] = (claim, *read_values(values))
        baseline_file.append(self.root, lines)
        # what these lines say, read from the values they were made of (what parsing them gives): when they are
        # read back, only whether they verify is checked (a whole store's snapshot unpacked again cost ~1 s)
        self._own.update(own)
        self.keys.register(now)

    def start(self) -> bool:
        """Start watching from the store's current state; False (nothing written) when it is watched already."""
        read = self.read()
        if read.baseline.watched:
            return False
        if read.problems:  # a planted or edited baseline: starting afresh would take the agents' state as watched
            raise ActionRefused(
                f"the baseline has {len(read.problems)} line(s) that do not verify ({read.problem_lines()[0]}); "
                "look at them (plur-desk check) and move the file away before watching again",
                outcome=Outcome.NOTHING_WRITTEN,
            )
        problem = self.store.read_only_reasons()
        if problem:
            raise ActionRefused(f"the store is read-only ({'; '.join(problem)}); watching was not started")
        by_id = self.snapshot.engrams
        engrams = {i: engram_values(e) for i, e in giving_way(by_id.items())}  # a repaint need not wait (50k: ~1 s)
        extras = {i: engram_extras(e) for i, e in giving_way(by_id.items())}
        tensions = {str(t.get("id")): tension_values(t) for t in self.snapshot.tensions.values()}
        note = "watching from here: claims nothing about the content"
        self._append("watching", engrams, tensions, note=note, extras=extras)
        return True

    def _start_with_first_decision(self) -> list[str]:
        """A store nobody watches yet is watched from this reviewer's first decision in it, its state then taken as
        the baseline: the key signs then anyway (signing at open would ask a locked keyring, or meet a key conflict,
        before any decision). Not over a baseline with lines that do not verify, nor in a read-only store."""
        if self.reading_only or self.store.read_only_reasons() or self.read().problems:
            return []
        self.start()
        return [
            "This store is now watched for agent changes (a line signed with your key in .plur-desk/baseline/ "
            "says where watching began; it claims nothing about the content)."
        ]

    def follow(
        self, patches: Iterable[Patch], command: object = None, op: object = None, *, undoing: bool = False
    ) -> list[str]:
        """After a decision, undo or redo of this reviewer: the values its patches left join the baseline (only the
        fields the decision wrote; anything else keeps its baseline value). A ratification records the values it let
        stand, and its undo the values before it (app/changes/ratification.py). Returns warnings (never raises: the
        decision is on disk already)."""
        patches = list(patches)
        if not patches:
            return []
        try:
            if not self.watched:
                return self._start_with_first_decision()
            engrams, tensions, extras = self.values_after(patches)
            claim, since = "decided", None
            held = self.ratified.get(id(op))
            if CLAIM_OF_ACTION.get(str(getattr(command, "action", ""))) or (held is not None and held[0] is op):
                from plur_desk.app.changes.ratification import ratified_values  # with the first ratify or revert

                claim, since = ratified_values(
                    self.ratified,
                    self.read().baseline,
                    self.snapshot,
                    (command, op, undoing),
                    (engrams, tensions, extras),
                )
            if engrams or tensions:
                self._append(claim, engrams, tensions, extras=extras, since=since)
        except Exception as exc:  # the decision stands; the baseline lags, and the change shows until ratified
            return [f"The decision was written, but the watched baseline could not follow it ({exc})."]
        return []

    def command_for(self, change: AgentChange, seen: Seen, *, ratify: bool) -> object:
        """The command that reverts (or ratifies) `change` as shown; `seen` is its record as displayed (a tension's
        with both engrams)."""
        from plur_desk.app.changes.ratification import command_for

        return command_for(change, seen, self.read().baseline, self.snapshot, ratify=ratify)

    def values_after(self, patches: list[Patch]) -> tuple[dict[str, Values], dict[str, Values], Extras]:
        baseline = self.read().baseline
        engrams: dict[str, Values] = {}
        tensions: dict[str, Values] = {}
        extras: Extras = {}
        for patch in patches:
            if patch.file == "engrams":
                known = engrams.get(patch.key) or baseline.engrams.get(patch.key)
                current = self.snapshot.engrams.get(patch.key)
                base = known or (engram_values(current) if current is not None else None)
                if base is not None:
                    engrams[patch.key] = _patched(ENGRAM_FIELDS, base, patch)
                held = extras.get(patch.key) or baseline.extras.get(patch.key)
                if held is None and known is None and current is not None:
                    held = engram_extras(current)  # new to the baseline: as the decision left it
                if held is not None:
                    extras[patch.key] = _patched_extras(held, patch)
            else:
                known = tensions.get(patch.key) or baseline.tensions.get(patch.key)
                record = self.snapshot.tensions.get(patch.key)
                base = known or (tension_values(record) if record is not None else None)
                if base is not None:
                    tensions[patch.key] = _patched(TENSION_FIELDS, base, patch)
        return engrams, tensions, extras


def _patched_extras(held: dict[str, object], patch: Patch) -> dict[str, object]:
    out = dict(held)
    for key, _old, new in patch.changes:
        if key in RESTORE_FIELDS:
            if new is ABSENT:
                out.pop(key, None)
            else:
                out[key] = new
    return out


def _patched(names: tuple[str, ...], base: Values, patch: Patch) -> Values:
    values = dict(zip(names, base, strict=True))
    for key, _old, new in patch.changes:
        value = None if new is ABSENT else new
        if key == "temporal":
            temporal = value if isinstance(value, dict) else {}
            values["valid_from"], values["valid_until"] = temporal.get("valid_from"), temporal.get("valid_until")
        elif key == "pinned":
            values["pinned"] = bool(value)
        elif key in values:
            values[key] = value if key != "status" or value is not None else "detected"
    return tuple(values[n] for n in names)
