"""The change broadcast: one publication, each subscriber told once, the visible ones at once and the deferred ones
in the turn the broadcast was given, in the order changes were published."""

from __future__ import annotations

from collections.abc import Callable

from plur_desk.app.broadcast import ChangeBroadcast
from plur_desk.domain.changes import ChangeSet


class Turns:
    """The window's event loop, by hand: what was deferred runs when `run()` is called."""

    def __init__(self) -> None:
        self.due: list[Callable[[], None]] = []

    def defer(self, run: Callable[[], None]) -> None:
        self.due.append(run)

    def run(self) -> None:
        due, self.due = self.due, []
        for run in due:
            run()


def test_visible_subscribers_are_told_at_once_and_deferred_ones_in_the_next_turn_in_order():
    turns, told = Turns(), []
    broadcast = ChangeBroadcast(turns.defer)
    broadcast.subscribe(lambda c: told.append(("list", c.message)))
    broadcast.subscribe(lambda c: told.append(("index", c.message)), deferred=True)
    broadcast.subscribe(lambda c: told.append(("pane", c.message)))
    broadcast.subscribe(lambda c: told.append(("banner", c.message)), deferred=True)
    broadcast.publish(ChangeSet(message="first"))
    broadcast.publish(ChangeSet(message="second"))
    assert told == [("list", "first"), ("pane", "first"), ("list", "second"), ("pane", "second")]
    assert len(turns.due) == 1 and broadcast.pending == 2  # one turn runs both changes' deferred wave
    assert [c.message for c in broadcast.waiting()] == ["first", "second"]
    turns.run()
    assert told[4:] == [("index", "first"), ("banner", "first"), ("index", "second"), ("banner", "second")]
    assert broadcast.pending == 0 and not turns.due


def test_a_change_published_by_a_deferred_subscriber_waits_for_a_turn_of_its_own():
    turns, told = Turns(), []
    broadcast = ChangeBroadcast(turns.defer)

    def index(change: ChangeSet) -> None:
        told.append(change.kind)
        if change.kind == "decided":
            broadcast.publish(ChangeSet(kind="reshown"))

    broadcast.subscribe(index, deferred=True)
    broadcast.publish(ChangeSet())
    turns.run()
    assert told == ["decided"] and len(turns.due) == 1
    turns.run()
    assert told == ["decided", "reshown"]


def test_without_a_deferred_subscriber_nothing_waits_for_a_turn():
    turns, told = Turns(), []
    broadcast = ChangeBroadcast(turns.defer)
    broadcast.subscribe(told.append)
    broadcast.publish(ChangeSet())
    assert len(told) == 1 and not turns.due and broadcast.pending == 0


def test_a_change_says_where_it_came_from():
    decided, undone = ChangeSet(frozenset({"e1"})), ChangeSet(frozenset({"e1"})).as_kind("undone")
    assert decided.by_reviewer and undone.by_reviewer and not decided.afresh
    reloaded = ChangeSet(frozenset({"e2"}), reloaded=True, kind="reloaded")
    assert reloaded.read_again and not reloaded.by_reviewer and not reloaded.afresh  # only what changed is shown
    for kind in ("reread", "synced"):
        assert ChangeSet(kind=kind).read_again and ChangeSet(kind=kind).afresh
    assert ChangeSet(kind="refreshed").afresh and ChangeSet(kind="refreshed").store_changed
    reshown = ChangeSet(kind="reshown")
    assert reshown.afresh and not reshown.store_changed and not reshown.read_again
    assert decided.merge(undone).kind == "decided"  # a merge keeps this change's kind, as it keeps its message
