"""A month file read on demand serves only the bytes it indexed: any byte changed since (at any offset, file
size and times kept) fails the read of the chunk it lies in and the next catch-up, and only bytes appended after
the indexed size are handed over as new lines."""

from __future__ import annotations

import os

import pytest

from plur_desk.store import month_lines
from plur_desk.store.month_lines import MonthChanged, MonthFile


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
        file.changed = False
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
