"""A month file read on demand serves only the bytes it indexed: any byte changed since (at any offset, file
size and times kept) fails the read of the chunk it lies in and the next catch-up, and only bytes appended after
the indexed size are handed over as new lines."""

from __future__ import annotations

import os

import pytest

from plur_desk.store.history import month_lines
from plur_desk.store.history.month_lines import MonthChanged, MonthFile


def _lines(count: int, start: int = 0) -> bytes:
    return b"".join(b'{"n":%d,"pad":"%s"}\n' % (n, b"x" * (n % 13)) for n in range(start, start + count))


def _indexed(path) -> tuple[MonthFile, list[tuple[int, int, bytes]]]:
    file, runs = MonthFile(path), []
    file.catch_up(lambda offset, number, data: runs.append((offset, number, data)))
    return file, runs


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch) -> None:
    monkeypatch.setattr(month_lines, "CHUNK", 64)
    monkeypatch.setattr(month_lines, "READ", 200)


def test_every_changed_byte_is_found_by_the_reads_of_its_chunk_and_by_catch_up(tmp_path) -> None:
    path = tmp_path / "2026-01.jsonl"
    data = _lines(40)
    path.write_bytes(data)
    file, runs = _indexed(path)
    assert b"".join(r[2] for r in runs) == data and runs[0][:2] == (0, 0)
    assert file.read(0, len(data))[0] == data
    st = os.stat(path)
    for at in range(0, len(data), 7):
        changed = bytearray(data)
        changed[at] ^= 0x20
        with open(path, "r+b") as handle:
            handle.write(changed)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        chunk = at // 64 * 64
        clean = 0 if chunk >= 64 else 128  # a span in another chunk still reads
        assert file.read(clean, clean + 10)[0][clean % 64 : clean % 64 + 10] == data[clean : clean + 10]
        with pytest.raises(MonthChanged):
            file.read(at, at + 1)
        with pytest.raises(MonthChanged):
            file.catch_up(lambda *_run: pytest.fail("nothing is handed over from a changed file"))
        path.write_bytes(data)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_only_appended_complete_lines_are_handed_over(tmp_path) -> None:
    path = tmp_path / "2026-01.jsonl"
    path.write_bytes(_lines(30) + b'{"cut')
    file, runs = _indexed(path)
    size = len(_lines(30))
    assert file.extent.size == size and file.extent.lines == 30
    assert not file.changed_on_disk()
    with open(path, "ab") as handle:
        handle.write(b' off"}\n' + _lines(20, 30))
    assert file.changed_on_disk()
    runs.clear()
    assert file.catch_up(lambda offset, number, data: runs.append((offset, number, data)))
    assert runs[0][:2] == (size, 30)
    assert b"".join(r[2] for r in runs) == b'{"cut off"}\n' + _lines(20, 30)
    assert file.extent.lines == 51 and not file.changed_on_disk()
    assert file.read(size, size + 12)[0][size % 64 :][:12] == b'{"cut off"}\n'
    with pytest.raises(MonthChanged):
        file.read(0, file.extent.size + 1)  # beyond what was indexed


def test_a_file_replaced_or_shortened_is_not_read_on(tmp_path) -> None:
    path = tmp_path / "2026-01.jsonl"
    path.write_bytes(_lines(30))
    file, _runs = _indexed(path)
    other = tmp_path / "new"
    other.write_bytes(_lines(30) + _lines(5, 30))  # the same bytes and more, but another file (a git pull)
    os.replace(other, path)
    with pytest.raises(MonthChanged):
        file.catch_up(lambda *_run: None)
    file, _runs = _indexed(path)
    path.write_bytes(_lines(10))
    with pytest.raises(MonthChanged):
        file.catch_up(lambda *_run: None)
    assert file.changed and file.changed_on_disk()


def test_a_failed_read_is_cleared_once_every_indexed_byte_is_found_unchanged(tmp_path) -> None:
    """A read that failed while the file was briefly rewritten (same bytes put back) marks the month changed until
    a catch-up finds every byte indexed still there; then it is quiet again, and the next failure counts anew."""
    path = tmp_path / "2026-01.jsonl"
    data = _lines(40)
    path.write_bytes(data)
    file, _runs = _indexed(path)
    with open(path, "r+b") as handle:
        handle.truncate(10)
        with pytest.raises(MonthChanged):
            file.read(100, 110)
        handle.seek(0)
        handle.write(data)
    assert file.changed and file.changed_on_disk()
    assert not file.catch_up(lambda *_run: pytest.fail("nothing was appended"))
    assert not file.changed and not file.changed_on_disk()
    assert file.read(100, 110)[0][100 % 64 :][:10] == data[100:110]
    path.write_bytes(data.replace(b'"n":3,', b'"n":4,'))
    with pytest.raises(MonthChanged):
        file.read(0, 64)
    assert file.changed


def test_an_append_checks_only_the_chunk_it_goes_on_in(tmp_path, monkeypatch) -> None:
    """Appends do not read the month again: only the last, partly filled chunk is checked before the new lines are
    read. A rewrite of an earlier chunk that comes with an append is found by the next read of that chunk, and the
    catch-up after a failed read checks every byte again."""
    path = tmp_path / "2026-01.jsonl"
    data = _lines(40)
    path.write_bytes(data)
    file, _runs = _indexed(path)
    assert len(data) % 64  # the last chunk is partly filled
    reads: list[tuple[int, int]] = []
    real = os.pread
    monkeypatch.setattr(os, "pread", lambda fd, n, at: (reads.append((at, n)), real(fd, n, at))[1])
    with open(path, "ab") as handle:
        handle.write(_lines(5, 40))
    runs: list[tuple[int, int, bytes]] = []
    assert file.catch_up(lambda *run: runs.append(run))
    assert b"".join(r[2] for r in runs) == _lines(5, 40)
    assert [r for r in reads if r[0] < len(data)] == [(len(data) // 64 * 64, len(data) % 64)]

    grown = path.read_bytes()
    with open(path, "r+b") as handle:  # the first line rewritten, and a line appended
        handle.write(grown.replace(b'"n":0,', b'"n":9,', 1) + _lines(1, 45))
    assert file.catch_up(lambda *_run: None)  # the appended line: the first chunk was not read
    with pytest.raises(MonthChanged):
        file.read(0, 10)
    with pytest.raises(MonthChanged):
        file.catch_up(lambda *_run: pytest.fail("nothing is handed over from a changed file"))
