"""Simulated time: whole minutes since the exercise's start, shown as the clock shows them.

The engine owns no timers. In the `turns` pace time moves only when someone acts; in the
`live` pace the caller reads a `LiveClock` with wall-clock seconds it supplies itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from raceday.exercise.times import format_time


class Pace(StrEnum):
    TURNS = "turns"
    LIVE = "live"


def clock_time(start: datetime, minute: int) -> str:
    """The clock face at `minute`: '23:48'."""
    return format_time(minute, start)


@dataclass
class LiveClock:
    """Maps wall-clock seconds (supplied by the caller) to simulated minutes at a speed.

    `speed` 60 means one simulated minute per real second. Pausing freezes simulated time.
    """

    speed: float = 60.0
    _base_minutes: float = 0.0
    _since: float | None = None

    def start(self, wall: float, at_minutes: float = 0.0) -> None:
        self._base_minutes = at_minutes
        self._since = wall

    @property
    def paused(self) -> bool:
        return self._since is None

    def minutes(self, wall: float) -> float:
        if self._since is None:
            return self._base_minutes
        return self._base_minutes + (wall - self._since) * self.speed / 60.0

    def pause(self, wall: float) -> None:
        self._base_minutes = self.minutes(wall)
        self._since = None

    def resume(self, wall: float) -> None:
        if self._since is None:
            self._since = wall

    def set_speed(self, speed: float, wall: float) -> None:
        running = not self.paused
        self._base_minutes = self.minutes(wall)
        self.speed = speed
        self._since = wall if running else None

    def jump_to(self, minutes: float, wall: float) -> None:
        running = not self.paused
        self._base_minutes = minutes
        self._since = wall if running else None
