"""How far a night has got, in one line, for whoever waits on it.

recovery-under-load's night takes 15 s and more: `raceday run` said nothing until the score,
and the TUI's end showed a bare "Scoring…". Both now show a line made here from the session's
events as they come: the clock time a few times a second at most, then, once, that the night
is over and is being judged. A night shorter than `EVERY_S` shows only that last line.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from raceday.engine.clock import clock_time
from raceday.exercise.model import Exercise
from raceday.transcript import events as ev

EVERY_S = 0.25
"""How often at most a new line is given."""


class NightProgress:
    """Events in, now and then a line out (`line`); the caller shows it its own way."""

    def __init__(self, exercise: Exercise, *, every_s: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        length = exercise.clock.length_minutes
        self._night = length
        self._until = clock_time(exercise.clock.start, length)
        self._replays = exercise.replay is not None
        self._every_s = EVERY_S if every_s is None else every_s
        self._clock = clock
        self._told_at = clock()
        self._over = False

    def line(self, event: ev.Event) -> str | None:
        """The line to show after `event`, or None: nothing new to say yet."""
        over = event.minute >= self._night or isinstance(event, ev.Chart | ev.ScoreEvent)
        if over and self._over:
            return None  # said once: the replay and the score give no event until done
        now = self._clock()
        if not over and now - self._told_at < self._every_s:
            return None
        self._told_at = now
        if over:
            self._over = True
            return ("the night is over: replaying the race on a copy of your world, to judge "
                    "your guards" if self._replays else "the night is over: judging it")
        if event.after_team_left:
            return (f"{event.sim_time} of {self._until}: the rest of the night plays itself "
                    "out, with only the automation")
        return f"playing the night: {event.sim_time} of {self._until}"
