"""`gc_paused`: what a block built with the collector off is kept out of its passes before the collector is on
again, so no young collection ever walks it (another thread allocating at that moment would start one)."""

from __future__ import annotations

import gc
import types

from plur_desk.infra import memory


def test_the_collector_comes_back_on_only_once_what_was_built_is_kept(monkeypatch):
    young_when_enabled: list[int] = []

    def enable() -> None:  # the moment another thread's allocation could start a young collection
        young_when_enabled.append(gc.get_count()[0])
        gc.enable()

    monkeypatch.setattr(memory, "gc", types.SimpleNamespace(**{**vars(gc), "enable": enable}))
    was = gc.isenabled()
    gc.enable()
    try:
        with memory.gc_paused():
            built = [[n] for n in range(50_000)]  # tracked objects, none of them garbage
        assert gc.isenabled()
        assert young_when_enabled and young_when_enabled[0] < 1_000, young_when_enabled  # not the 50,000 lists
        assert len(built) == 50_000
    finally:
        gc.unfreeze()  # (what the block kept goes back to the collector for the rest of the suite)
        if not was:
            gc.disable()
