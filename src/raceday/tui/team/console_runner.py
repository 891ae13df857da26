"""The facilitator's console's way to its host, as a seat's runner (`seat_runner.py`) is a
seat's way to it.

The host runs in a thread of its own (`raceday host`: in the console's process). The
facilitator's keys become calls the host's thread runs at its next pump (`Host.call`); one
that fails comes back to the console as a `JobFailed` message. One thread worker follows
the session in session.db as any seat does, private events included, and posts what it
reads as the same messages a seat's runner posts (`EngineEvent`, `Refreshed`, `HostClock`).
Nothing here touches a widget.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.worker import get_current_worker

from raceday.tui.messages import EngineEvent, JobFailed, Refreshed
from raceday.tui.team.seat_runner import HostClock

if TYPE_CHECKING:
    from textual.widget import Widget

    from raceday.engine.session import Session
    from raceday.team.client import View
    from raceday.team.host import Host

FOLLOW_SECONDS = 0.05
"""How long the follower waits for news between looks (on SQLite; PostgreSQL's NOTIFY
wakes it sooner)."""


class ConsoleRunner:
    """One console screen's calls to its host and its follower of the session; what comes
    back is posted to `target`, the screen, whose worker the follower is."""

    def __init__(self, host: Host, view: View, target: Widget) -> None:
        self.host = host
        self.view = view
        self.target = target

    def send(self, what: str, call: Callable[[Session], Any], *,
             host: Host | None = None) -> None:
        """Run `call(session)` in the host's thread (`host`'s: a group's console holds
        another team's fault step); a failure comes back as `JobFailed(what, ...)`."""
        future: Future[Any] = (host or self.host).call(call)
        future.add_done_callback(partial(self._told, what))

    def _told(self, what: str, future: Future[Any]) -> None:
        """In the host's thread (or at once, the host stopped): the failure, as a message."""
        error = future.exception()
        if error is not None:
            self.target.post_message(JobFailed(what, str(error)))

    def follow(self) -> None:
        """Start following the session: a thread worker of the screen, which ends with it."""
        self.target.run_worker(self._follow, thread=True, group="console",
                               exit_on_error=False, description="raceday: follow the session")

    def _follow(self) -> None:
        worker = get_current_worker()
        view = self.view
        first = True
        while not worker.is_cancelled:
            if not first and not view.changed():
                view.idle(FOLLOW_SECONDS)  # on PostgreSQL: until the host NOTIFYs
                continue
            first = False
            for event in view.new_events(private=True):
                self.target.post_message(EngineEvent(event))
            snapshot = view.snapshot()
            if snapshot is not None:
                self.target.post_message(Refreshed(snapshot))
            self.target.post_message(HostClock(view.clock()))
