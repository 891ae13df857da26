"""Whether a team has changed what its final race night replays: the race is played on a
copy of the team's schema with the team's statements, so only a player's schema change
(DDL, a grant, a trigger) or an edited statement can make it differ from the exercise's own.

What a replay needs only when the race differs (the variant's nights: they judge a step
prevented or a harm kept away) is started the moment the team first changes either, not
when the session opens: a team that changes nothing never plays them, and on PostgreSQL
they took the server's and raceday's CPU from the night being played (1.1 s of a 4.6 s
headless night)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Protocol

from raceday.transcript import events as ev

_log = logging.getLogger(__name__)


def changes_race(event: ev.Event) -> bool:
    """A player's statement that changed the schema, or an edited statement."""
    if isinstance(event, ev.Edit):
        return True
    return (isinstance(event, ev.Statement) and event.ok and event.schema_changed
            and not event.automated)


class Subscribable(Protocol):
    """What `on_first_change` needs of a session (the engine's `Session` is one)."""

    events: list[ev.Event]

    def subscribe(self, listener: Callable[[ev.Event], None]) -> None: ...


def on_first_change(session: Subscribable, start: Callable[[], None]) -> None:
    """Call `start` once: now, if the session's events already hold a change (a resumed
    session), or from the session's thread on the first event that makes one. A `start`
    that fails is logged; whoever needs what it starts makes it itself."""
    done = threading.Event()

    def once() -> None:
        if done.is_set():
            return
        done.set()
        try:
            start()
        except Exception:  # noqa: BLE001 - the replay plays what was not started
            _log.info("what a changed race needs could not be started ahead", exc_info=True)

    if any(changes_race(event) for event in session.events):
        once()
        return
    session.subscribe(lambda event: once() if changes_race(event) else None)
