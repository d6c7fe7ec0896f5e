"""On two workers the files with a long test are handed out first: the collection order conftest.py makes is the
order pytest-xdist's file scheduler (`--dist loadfile`, as ./dev.sh test runs the suite) gives out the files."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from xdist.scheduler import LoadFileScheduling


class _Worker:
    """What the scheduler sees of a worker: the tests it was sent, by index into the collection."""

    def __init__(self, name: str) -> None:
        self.gateway = SimpleNamespace(id=name)
        self.shutting_down = False
        self.sent: list[int] = []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


def test_a_file_of_one_long_test_collected_first_is_handed_out_first(pytestconfig: pytest.Config, monkeypatch) -> None:
    # as pytest_collection_modifyitems orders them: the file of a test marked slow first, then files of many tests
    collection = ["tests/unit/store/test_crash_injection.py::test_killed_writers"] + [
        f"tests/unit/test_{name}.py::test_{n}" for name in ("many", "more") for n in range(8)
    ]
    monkeypatch.setattr(pytestconfig.option, "tx", ["2*popen"])  # two workers (-n 2)
    scheduler = LoadFileScheduling(pytestconfig)  # this session's other options, as conftest.py configured them
    workers = [_Worker("gw0"), _Worker("gw1")]
    for worker in workers:
        scheduler.add_node(worker)
        scheduler.add_node_collection(worker, collection)
    scheduler.schedule()
    assert workers[0].sent[:1] == [0]  # the first worker's first file is the long one
    assert sorted(workers[0].sent + workers[1].sent) == list(range(len(collection)))  # every test handed out once
