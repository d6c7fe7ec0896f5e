"""The journal record's steps change only through its own three calls: `add` (planned steps), `make_exact` (a step
as it will be written, saved before its file is replaced) and `drop_from` (the one way a step is taken back)."""

from __future__ import annotations

import pytest

from plur_desk.domain.review import Patch
from plur_desk.store.journal import Journal, JournalRecord, Step


def _patch(key: str) -> Patch:
    return Patch("engrams", key, (("commitment", "draft", "decided"),))


def _exact(key: str) -> Step:
    return Step("engrams", [_patch(key)], [], "a" * 64, "b" * 64)


def test_a_plan_is_saved_only_once_a_step_is_made_exact_and_replaced_by_it(tmp_path):
    record = Journal(tmp_path).begin("approve", "approve two")
    first = record.add(Step.placeholder("tensions"), Step("engrams", [_patch("E-2")], [], planned=True))
    assert first == 0 and not record.path.exists()
    record.make_exact(0, Step("tensions", [], [], "c" * 64, "d" * 64))
    on_disk = JournalRecord.read(record.path, tmp_path)
    assert [(s.file, s.planned) for s in on_disk.steps] == [("tensions", False), ("engrams", True)]
    record.make_exact(2, _exact("E-3"))  # the next step after the plans
    assert len(JournalRecord.read(record.path, tmp_path).steps) == 3
    with pytest.raises(ValueError, match="step 5 of a record with 3 steps"):
        record.make_exact(5, _exact("E-4"))  # never a gap


def test_dropping_later_steps_saves_the_record_without_them_and_dropping_all_removes_it(tmp_path):
    record = Journal(tmp_path).begin("settle", "settle T")
    record.add(Step.placeholder("tensions"), Step("engrams", [_patch("E-1")], [], planned=True))
    record.make_exact(0, _exact("E-0"))
    record.drop_from(1)  # the second file was not replaced
    assert [s.changes[0].key for s in JournalRecord.read(record.path, tmp_path).steps] == ["E-0"]
    saved = record.path.stat().st_mtime_ns
    record.drop_from(1)  # nothing left to drop: not saved again
    assert record.path.stat().st_mtime_ns == saved
    record.drop_from(0)
    assert not record.path.exists() and record.steps == ()


def test_a_record_never_saved_is_not_written_by_dropping_steps(tmp_path):
    record = Journal(tmp_path).begin("undo", "undo")
    record.add(Step.placeholder("tensions"), Step("engrams", [_patch("E-1")], [], planned=True))
    record.drop_from(1)
    assert not record.path.parent.exists() and len(record.steps) == 1


def test_the_steps_cannot_be_edited_from_outside(tmp_path):
    record = Journal(tmp_path).begin("approve", "approve")
    record.add(_exact("E-1"))
    with pytest.raises(TypeError):
        record.steps[0] = _exact("E-2")  # type: ignore[index]
    with pytest.raises(AttributeError):
        record.steps.append(_exact("E-2"))  # type: ignore[attr-defined]
