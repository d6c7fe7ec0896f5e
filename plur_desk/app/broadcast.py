"""One change, published once: every view of the open store subscribes and decides for itself what to show again.

A change (a decision, an undo or redo, a reload, a sync, a ratified or reverted change, the store opened) is a
`ChangeSet` whose `kind` says where it came from. It is published once, on the window's thread; each subscriber
reads it and refreshes what it shows of it, or nothing. Subscribers come in two waves, in the order they subscribed:
the first ("visible") is what the reviewer looks at, run at once; the second ("deferred": the search index, the
contradiction check, the banner, dialogs) runs in a turn of its own (`defer`), so the lists' repaint and the keys
typed meanwhile come first. Changes published before that turn are handed to the second wave in order.

Qt-free: the window passes the `defer` that schedules the second wave (a single-shot timer)."""

from __future__ import annotations

from collections.abc import Callable

from plur_desk.domain.changes import ChangeSet

Subscriber = Callable[[ChangeSet], object]


class ChangeBroadcast:
    def __init__(self, defer: Callable[[Callable[[], None]], None] | None = None) -> None:
        self._defer = defer if defer is not None else (lambda run: run())
        self._visible: list[Subscriber] = []
        self._deferred: list[Subscriber] = []
        self._waiting: list[ChangeSet] = []  # published, their deferred wave not run yet

    def subscribe(self, subscriber: Subscriber, *, deferred: bool = False) -> None:
        """`subscriber(change)` for every change from now on: at once, or (`deferred`) in a turn of its own."""
        (self._deferred if deferred else self._visible).append(subscriber)

    def publish(self, change: ChangeSet) -> None:
        for subscriber in list(self._visible):
            subscriber(change)
        if self._deferred:
            self._waiting.append(change)
            if len(self._waiting) == 1:  # one turn runs every change waiting by then
                self._defer(self._run_deferred)

    def _run_deferred(self) -> None:
        waiting, self._waiting = self._waiting, []
        for change in waiting:  # in order: each change's subscribers before the next change's
            for subscriber in list(self._deferred):
                subscriber(change)

    @property
    def pending(self) -> int:
        """Changes published whose deferred wave has not run yet."""
        return len(self._waiting)

    def waiting(self) -> tuple[ChangeSet, ...]:
        """Those changes, in the order they were published."""
        return tuple(self._waiting)
