"""The history is read from its month files when a view asks, so a month file that changed under us must never be
served stale or torn: a rewrite in place (even one the file's stat does not show), a replacement (a git pull), a
shortening or a month made into a FIFO is detected by the read itself, shown as such, and the next refresh reads
the history again; growth (an agent's appends) is read incrementally, after checking the bytes read before."""

from __future__ import annotations

import json
import os
import zlib
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from plur_desk.app.history.history_index import HistoryFilter, HistoryIndex
from plur_desk.app.history.history_table import changed_event, parse_line
from plur_desk.domain.commands import RejectDrafts
from plur_desk.store.history.log import HistoryLog
from plur_desk.store.keys.keys_file import replace_key
from plur_desk.store.keys.signatures import public_key_b64

from support.blocks import rewrite_block
from support.sessions import reopen

CHANGED = changed_event()["event"]
EPOCH = "1970-01-01T00:00:00.000Z"


def _line(n: int, month: int, word: str) -> str:
    return json.dumps(
        {
            "event": "engram_updated",
            "engram_id": f"ENG-{n % 5}",
            "timestamp": f"2026-0{month}-01T00:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
            "data": {"to": f"{word}-{n:04d}"},
            "actor": {"asserted_by": "agent:codex"},
        },
        separators=(",", ":"),
    )


def _store(tmp_path: Path, word: str = "before") -> Path:
    root = tmp_path / "store"
    (root / "history").mkdir(parents=True)
    for month in (1, 2):
        (root / "history" / f"2026-0{month}.jsonl").write_text(
            "".join(_line(n, month, word) + "\n" for n in range(400))
        )
    return root


def _split(root: Path) -> list[tuple[bytes, str, int]]:
    """Every complete, non-blank line of every regular month file, split one by one."""
    return _split_regular(root)


def _texts(events: object) -> list[str]:
    return [str(e.get("data", {}).get("to")) for e in events]  # type: ignore[attr-defined]


def _rewrite_in_place(path: Path, old: bytes, new: bytes) -> None:
    """Same inode, same size, and the same times as before: nothing in the file's stat says it changed."""
    st = os.stat(path)
    data = path.read_bytes().replace(old, new)
    assert len(data) == st.st_size
    with open(path, "r+b") as handle:
        handle.write(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_a_view_never_shows_the_old_text_of_a_month_rewritten_in_place(tmp_path) -> None:
    root = _store(tmp_path)
    index = HistoryIndex(HistoryLog(root))
    index.load()
    view = index.newest_first()
    assert _texts(view[0:3]) == ["before-0399", "before-0398", "before-0397"]  # month 2, read and kept
    oldest = len(view) - 1  # month 1's first line: not read yet
    assert "before" in _texts([index.timeline("ENG-0")[0]])[0]

    _rewrite_in_place(root / "history" / "2026-01.jsonl", b"before", b"after!")
    assert view[oldest]["event"] == CHANGED  # not the old text, not a torn line: the read found the change
    assert index.timeline("ENG-0") == [changed_event()]
    text = index.newest_first(HistoryFilter(text="before-0001"))
    assert text.changed and not len(text)
    assert index.changed_on_disk()  # the read marked it, though the file's stat is as before

    assert index.refresh()  # read again
    assert not index.changed_on_disk()
    assert list(index.lines) == _split(root)
    fresh = index.newest_first()
    assert _texts([fresh[len(fresh) - 1]]) == ["after!-0000"]
    assert _texts(index.timeline("ENG-0"))[:2] == ["after!-0000", "after!-0005"]
    assert _texts(index.newest_first(HistoryFilter(text="-0001"))) == ["before-0001", "after!-0001"]


def test_rows_a_view_kept_are_dropped_once_the_stat_shows_a_change(tmp_path) -> None:
    """A git pull replaces a month file (a new inode; here with other text at the same offsets): the rows a view
    already read are not shown again from memory once the index has seen the change."""
    root = _store(tmp_path)
    index = HistoryIndex(HistoryLog(root))
    index.load()
    view = index.newest_first()
    assert _texts([view[0]]) == ["before-0399"]
    path = root / "history" / "2026-02.jsonl"
    replacement = path.with_name("2026-02.jsonl.pulled")
    replacement.write_bytes(path.read_bytes().replace(b"before", b"pulled"))
    os.replace(replacement, path)

    assert index.changed_on_disk()
    assert view[0]["event"] == CHANGED
    generation = index.generation
    assert index.refresh()
    assert index.generation == generation + 1  # not an append: everything read again
    assert _texts([index.newest_first()[0]]) == ["pulled-0399"]
    assert list(index.lines) == _split(root)


def test_appends_are_read_from_the_last_known_size(tmp_path) -> None:
    root = _store(tmp_path)
    index = HistoryIndex(HistoryLog(root))
    index.load()
    lines, generation = index.lines, index.generation
    view = index.newest_first()
    assert _texts([view[0]]) == ["before-0399"]
    with open(root / "history" / "2026-02.jsonl", "a") as handle:
        handle.write(_line(400, 2, "appended") + "\n" + _line(401, 2, "appended")[:30])  # the last one cut off
    assert index.changed_on_disk()
    assert index.refresh()
    assert index.lines is lines and index.generation == generation  # read on, not read again
    assert len(lines) == 801 and lines[-1] == _split(root)[-1]
    assert _texts([view[0]]) == ["before-0399"]  # a view made before still shows what it showed
    assert _texts(index.newest_first()[0:2]) == ["appended-0400", "before-0399"]
    assert not index.changed_on_disk() and not index.refresh()  # the cut-off line waits until it is complete
    with open(root / "history" / "2026-02.jsonl", "a") as handle:
        handle.write(_line(401, 2, "appended")[30:] + "\n")
    assert index.refresh() and index.lines is lines
    assert list(lines) == _split(root)
    assert [parse_line(*line)["engram_id"] for line in lines.take([799, 800, 801])] == ["ENG-4", "ENG-0", "ENG-1"]


def test_growth_after_an_earlier_line_changed_is_read_again(tmp_path) -> None:
    """An append whose file also changed before the size read last (same inode) is not an append: the catch-up
    checks only the chunk the append goes on in, so the change is found by the next read of the changed chunk,
    which shows it as such; the refresh after that reads the month again."""
    root = _store(tmp_path)
    index = HistoryIndex(HistoryLog(root))
    index.load()
    generation = index.generation
    path = root / "history" / "2026-02.jsonl"
    data = path.read_bytes().replace(b"before-0007", b"edited-0007")
    with open(path, "r+b") as handle:
        handle.write(data + (_line(400, 2, "appended") + "\n").encode())
    assert index.refresh()
    assert _texts(index.newest_first()[0:1]) == ["appended-0400"]
    found = index.newest_first(HistoryFilter(text="edited-0007"))
    assert found.changed and not len(found)  # never the old text
    assert index.changed_on_disk() and index.refresh()
    assert index.generation == generation + 1
    assert list(index.lines) == _split(root)
    assert _texts(index.newest_first(HistoryFilter(text="edited-0007"))) == ["edited-0007"]


def test_a_month_shortened_or_made_a_fifo_is_never_read_from(tmp_path) -> None:
    root = _store(tmp_path)
    index = HistoryIndex(HistoryLog(root))
    index.load()
    view = index.newest_first()
    path = root / "history" / "2026-01.jsonl"
    path.unlink()
    os.mkfifo(path)  # opening it to read would block without a writer: it is never opened as a month file
    assert view[len(view) - 1]["event"] == CHANGED
    assert index.timeline("ENG-0") == [changed_event()]
    assert index.changed_on_disk() and index.refresh()
    assert list(index.lines) == _split_regular(root)
    path.unlink()
    path.write_text(_line(0, 1, "short") + "\n")
    assert index.refresh()
    assert list(index.lines) == _split(root)


def _split_regular(root: Path) -> list[tuple[bytes, str, int]]:
    out = []
    for path in sorted(p for p in (root / "history").glob("*.jsonl") if p.is_file()):
        data = path.read_bytes()
        for number, raw in enumerate(data[: data.rfind(b"\n") + 1].split(b"\n")[:-1], start=1):
            if raw.strip():
                out.append((raw, path.stem, number))
    return out


def _keep_crc32(chunk: bytes, at: int, byte: int, free: range) -> bytes:
    """`chunk` with byte `at` set to `byte`, and bit 0 of some `free` bytes flipped so its CRC-32 is unchanged
    (CRC-32 is affine over GF(2): solve for the flips that cancel the edit's difference)."""
    target = bytearray(chunk)
    target[at] = byte
    base = zlib.crc32(bytes(len(chunk)))
    basis: list[tuple[int, int]] = []
    for i, pos in enumerate(free):
        probe = bytearray(len(chunk))
        probe[pos] = 1
        d, m = zlib.crc32(bytes(probe)) ^ base, 1 << i
        for bd, bm in basis:
            if d ^ bd < d:
                d, m = d ^ bd, m ^ bm
        if d:
            basis = sorted([*basis, (d, m)], reverse=True)
    d, m = zlib.crc32(chunk) ^ zlib.crc32(bytes(target)), 0
    for bd, bm in basis:
        if d ^ bd < d:
            d, m = d ^ bd, m ^ bm
    assert d == 0
    for i, pos in enumerate(free):
        if m >> i & 1:
            target[pos] ^= 1
    assert zlib.crc32(bytes(target)) == zlib.crc32(chunk)
    return bytes(target)


def test_a_rewrite_made_to_keep_each_chunks_crc_is_still_found(tmp_path) -> None:
    """Whoever can write a month file can keep a chunk's CRC-32 by fixing up 4 bytes; the digests are keyed per
    process, so no rewrite can be aimed at them: the index built from the old bytes is never kept."""
    root = tmp_path / "store"
    (root / "history").mkdir(parents=True)
    path = root / "history" / "2026-02.jsonl"
    line = {"event": "engram_updated", "engram_id": "ENG-1", "timestamp": "2026-02-01T00:00:00Z"}
    path.write_text("".join(json.dumps({**line, "data": {"to": "b" * 64}}) + "\n" for _ in range(3)))
    index = HistoryIndex(HistoryLog(root))
    index.load()
    assert len(index.timeline("ENG-1")) == 3
    data = path.read_bytes()
    pad = data.index(b"b" * 64)
    _rewrite_in_place(path, data, _keep_crc32(data, data.index(b"ENG-1") + 4, ord("3"), range(pad, pad + 64)))
    assert index.newest_first()[2]["event"] == CHANGED
    assert index.changed_on_disk() and index.refresh()
    assert len(index.timeline("ENG-3")) == 1 and len(index.timeline("ENG-1")) == 2


def test_a_read_that_failed_once_leaves_no_change_behind(tmp_path, monkeypatch) -> None:
    """A month briefly shortened and put back as it was (same file, same bytes): the read in between shows the
    change, the refresh after finds nothing changed, and the polls after that neither see a change nor read."""
    root = _store(tmp_path)
    path = root / "history" / "2026-02.jsonl"
    index = HistoryIndex(HistoryLog(root))
    index.load()
    data = path.read_bytes()
    with open(path, "r+b") as handle:
        handle.truncate(10)
        assert index.newest_first()[0]["event"] == CHANGED
        handle.seek(0)
        handle.write(data)
    assert index.changed_on_disk() and not index.refresh()
    reads: list[int] = []
    real = os.pread
    monkeypatch.setattr(os, "pread", lambda fd, n, at: (reads.append(n), real(fd, n, at))[1])
    version = index.disk.version
    for _poll in range(3):
        assert not index.changed_on_disk() and not index.refresh()
    assert index.disk.version == version and not reads
    assert _texts(index.newest_first()[0:1]) == ["before-0399"] and reads


def _torn(path: Path, ask: object) -> object:
    """What `ask()` answers while the month is briefly shortened; the same bytes are put back after."""
    data = path.read_bytes()
    with open(path, "r+b") as handle:
        handle.truncate(10)
        answer = ask()  # type: ignore[operator]
        handle.seek(0)
        handle.write(data)
    return answer


def test_rejections_read_while_a_month_was_torn_are_not_kept_as_current(tmp_path) -> None:
    """The verdicts answered while a read failed leave out what could not be read; when the month then turns out
    unchanged, the stamp a cache keeps them by must not say they are current (the queue would keep an answer
    without the human rejection: a resubmitted draft would lose its 'rejected before' flag)."""
    root = _store(tmp_path)
    path = root / "history" / "2026-02.jsonl"
    reject = {
        "event": "engram_retired",
        "engram_id": "ENG-7",
        "timestamp": "2026-02-02T00:00:00Z",
        "data": {"action": "reject", "content_hash": "abc", "reason": "wrong"},
        "actor": {"kind": "human", "asserted_by": "ann"},
    }
    with open(path, "a") as handle:
        handle.write(json.dumps(reject) + "\n")
    index = HistoryIndex(HistoryLog(root))
    index.load()
    first = _torn(path, lambda: (index.stamp(), index.rejections()))
    assert first[1] == {}  # type: ignore[index]
    assert index.changed_on_disk() and not index.refresh()  # unchanged after all
    stamp, verdicts = index.stamp(), index.rejections()
    assert "abc" in verdicts and stamp != first[0]  # type: ignore[index]
    assert index.stamp() == stamp and index.rejections() == verdicts  # and kept from then on


def test_reviews_read_while_a_month_was_torn_are_checked_again(session) -> None:
    """Which review records no signed event backs, answered while the month could not be read, is not kept once
    the month is found unchanged."""
    session.execute(RejectDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"])), "not true"))
    (path,) = (session.store.root / "history").glob("*.jsonl")
    assert _torn(path, session.verdicts.unverified_reviews) == {"ENG-2026-11-01-001"}
    assert session.history.changed_on_disk() and not session.reload_if_changed().events
    assert session.verdicts.unverified_reviews() == set()


def _rejected_by_record_only(session) -> None:
    """Draft 1 rejected, the rejection undone and redone (a redo is not a history rejection: only draft 1's record,
    which the signed redo backs, says its content was rejected); draft 2 then gets draft 1's content."""
    session.execute(RejectDrafts(tuple(session.writes.seen(["ENG-2026-11-01-001"])), "not true"))
    session.undo()
    session.redo()
    rewrite_block(session.store.root, "ENG-2026-11-02-001", "2" * 64, "1" * 64)


def test_a_review_record_checked_while_a_month_was_torn_is_checked_again(session) -> None:
    """A rejected review record's trust comes from its history event (`review_trust` reads the engram's timeline).
    Asked while the month could not be read, the answer ('no history event records this review') is a fallback:
    the queue must not keep it once the month is found unchanged, and the reload then says the queue changed, so
    the window shows the draft again."""
    root = session.store.root
    _rejected_by_record_only(session)
    (path,) = (root / "history").glob("*.jsonl")

    def engrams_read_again() -> object:  # what `reload_if_changed` does before it reads the history
        session.store.load()
        session.snapshot.reindex()
        return session.queue.rows()

    torn = _torn(path, engrams_read_again)
    twin = next(r for r in torn if r.id == "ENG-2026-11-02-001")  # type: ignore[attr-defined]
    assert twin.flags[:1] == ("rejection claim NOT VERIFIED",)  # the fallback, while the month is torn
    assert session.history.changed_on_disk()
    change = session.reload_if_changed()
    assert not change.engrams and change.events  # the month was unchanged after all; the window shows the queue
    twin = next(r for r in session.queue.rows() if r.id == "ENG-2026-11-02-001")
    assert twin.flags[:1] == ("rejected before",) and twin.rejected_before is not None
    assert twin.rejected_before.engram_id == "ENG-2026-11-01-001" and twin.rejected_before.trust.counts_as_human


def test_a_review_record_checked_before_the_history_was_read_is_checked_again(session) -> None:
    """The window shows the queue before the history is read: a record's verdict asked then is a fallback too, and
    is asked again once the history is in."""
    root = session.store.root
    _rejected_by_record_only(session)  # as above
    fresh = reopen(root)  # drafts first, the history not read yet
    twin = next(r for r in fresh.queue.rows() if r.id == "ENG-2026-11-02-001")
    assert twin.flags[:1] == ("rejection claim NOT VERIFIED",)
    fresh.load_history()
    twin = next(r for r in fresh.queue.rows() if r.id == "ENG-2026-11-02-001")
    assert twin.flags[:1] == ("rejected before",) and twin.rejected_before is not None
    assert twin.rejected_before.trust.counts_as_human


def test_a_review_record_is_checked_again_when_keys_yaml_disowns_its_signer(session) -> None:
    """A record's verdict rests on keys.yaml too: once the reviewer's key is disowned (a teammate's keys.yaml, as
    a pull brings it), the signed rejection no longer counts as a human's."""
    root = session.store.root
    _rejected_by_record_only(session)
    session.reload_if_changed()
    twin = next(r for r in session.queue.rows() if r.id == "ENG-2026-11-02-001")
    assert twin.flags[:1] == ("rejected before",)
    other = public_key_b64(Ed25519PrivateKey.generate())
    replace_key(root, "human:Ada Reviewer", other, "2026-12-02T13:00:00.000Z", revoke=True, revoked_from=EPOCH)
    twin = next(r for r in session.queue.rows() if r.id == "ENG-2026-11-02-001")
    assert twin.flags[:1] == ("rejection claim NOT VERIFIED",) and twin.rejected_before is not None
    assert not twin.rejected_before.trust.counts_as_human


def test_every_line_is_read_the_same_in_short_runs(tmp_path, monkeypatch) -> None:
    """Iterating and slicing the history read each month in runs of RANGE_LINES lines (a month's split in one call
    held the interpreter for tens of ms): the same lines, in order, across every run's and month's edge."""
    from plur_desk.app.history import history_table

    root = _store(tmp_path)
    index = HistoryIndex(HistoryLog(root))
    index.load()
    whole = list(index.lines)
    assert [(raw, month, number) for raw, month, number in whole] == _split(root)
    monkeypatch.setattr(history_table, "RANGE_LINES", 7)  # runs ending inside each month and at its end
    assert list(index.lines) == whole
    assert index.lines[395:405] == whole[395:405]  # a slice across the two months
    assert _texts(index.newest_first(HistoryFilter(text="before-0399"))) == ["before-0399", "before-0399"]


def _rekeyed(old: str, new: str, when: str) -> str:
    event = {"event": "engram_rekeyed", "engram_id": new, "timestamp": when, "data": {"from": old, "to": new}}
    return json.dumps(event, separators=(",", ":")) + "\n"


def test_renames_read_only_the_lines_appended_since_and_a_rewrite_reads_all_again(tmp_path, monkeypatch) -> None:
    """The rename trail is read on the loading thread by `load`; after that, lines appended (a decision, an agent)
    are the only ones read again: the window's thread asked for it after every decision and paid for the whole
    history (1,050,000 lines: the warm open's and each decision's longest stalls)."""
    root = _store(tmp_path)
    month = root / "history" / "2026-02.jsonl"
    with month.open("a") as handle:
        handle.write(_rekeyed("ENG-2026-0101-001", "ENG-2026-0101-001-D1", "2026-02-02T00:00:00.000Z"))
    index = HistoryIndex(HistoryLog(root))
    read: list[int] = []
    real = HistoryIndex.lines.fget  # type: ignore[attr-defined]

    class Counted:  # the line table, counting the lines each query walks through
        def __init__(self, table) -> None:
            self.table = table

        def __len__(self) -> int:
            return len(self.table)

        def __iter__(self):
            read.append(len(self.table))
            return iter(self.table)

        def __getitem__(self, index):
            got = self.table[index]
            read.append(len(got) if isinstance(index, slice) else 1)
            return got

    monkeypatch.setattr(HistoryIndex, "lines", property(lambda self: Counted(real(self))))
    index.load()
    assert read == [801] and index.renames().earlier("ENG-2026-0101-001-D1") == ["ENG-2026-0101-001"]
    assert read == [801]  # read by the load: the query reads nothing

    with month.open("a") as handle:
        handle.write(_line(900, 2, "later") + "\n")
        handle.write(_rekeyed("ENG-2026-0101-002", "ENG-2026-0101-002-D1", "2026-02-03T00:00:00.000Z"))
    assert index.refresh()
    renames = index.renames()
    assert read == [801, 2]  # the two lines appended, not the 803
    assert renames.earlier("ENG-2026-0101-002-D1") == ["ENG-2026-0101-002"]
    assert renames.earlier("ENG-2026-0101-001-D1") == ["ENG-2026-0101-001"]  # what was read before is kept

    _rewrite_in_place(month, b"ENG-2026-0101-001-D1", b"ENG-2026-0101-001-D2")  # a rewrite: a new load
    assert index.refresh()
    renames = index.renames()
    assert read[-1] == 803 and renames.earlier("ENG-2026-0101-001-D2") == ["ENG-2026-0101-001"]
    assert not renames.earlier("ENG-2026-0101-001-D1")
