"""A ratification's baseline bookkeeping is found by its operation, never by an id another operation can have: a
freed operation's id goes to the next object made, and a plain approval taken for the undone ratification would
sign the agent's values as `ratified` (the change then leaving the list as reviewed)."""

from __future__ import annotations

from plur_desk.app.changes.ratification import Ratified, ratified_values


class _Op:
    """An operation as the undo history holds it (identity is all that matters here)."""


class _Approve:
    action = "approve"


def test_a_plain_decision_under_a_reused_id_takes_nothing_from_an_undone_ratification() -> None:
    ratify, approve = _Op(), _Op()
    moved = Ratified({"ENG-1": (("before",), ("agent's",))}, {}, {}, "ratified")
    kept = {id(approve): (ratify, moved)}  # as if the ratify were freed and `approve` got its id
    engrams: dict[str, tuple[object, ...]] = {"ENG-2": ("approved",)}
    claim, since = ratified_values(kept, None, None, (_Approve(), approve, False), (engrams, {}, {}))  # type: ignore[arg-type]
    assert (claim, since) == ("decided", None)
    assert engrams == {"ENG-2": ("approved",)}  # nothing of the ratification's values in the approval's line


def test_the_ratifications_own_operation_still_finds_what_it_moved() -> None:
    ratify = _Op()
    moved = Ratified({"ENG-1": (("before",), ("agent's",))}, {}, {}, "ratified")
    engrams: dict[str, tuple[object, ...]] = {}
    claim, _since = ratified_values(
        {id(ratify): (ratify, moved)}, None, None, (_Approve(), ratify, False), (engrams, {}, {})
    )  # type: ignore[arg-type]
    assert claim == "ratified" and engrams == {"ENG-1": ("agent's",)}
