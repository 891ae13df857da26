"""Simulated time: whole minutes since the exercise's start, shown as the clock shows them.

The engine owns no timers. In the `turns` pace time moves only when someone acts; in the
`live` pace the caller reads a `LiveClock` with wall-clock seconds it supplies itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from raceday.exercise.times import format_time
from raceday.value import Value, frozen


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


GAME_DAY_LENGTHS = (30, 45, 60, 75, 90, 120)
"""Real minutes a facilitator may fit a whole exercise into (a game day is 60 to 90)."""
FIXED_SPEEDS = (1.0, 2.0, 3.0, 5.0, 10.0, 30.0, 60.0, 120.0)


def real_minutes(sim_minutes: int, speed: float) -> float:
    """How long `sim_minutes` of the exercise last in real minutes at `speed`."""
    return sim_minutes / speed if speed > 0 else float("inf")


def speed_for(sim_minutes: int, target_minutes: float) -> float:
    """The speed that plays `sim_minutes` in `target_minutes` real minutes (to 2 decimals);
    never slower than real time: a night shorter than the game day is played as it was."""
    return round(max(1.0, sim_minutes / max(1.0, target_minutes)), 2)


@frozen
class SpeedChoice(Value):
    """A live-pace speed on offer, and how long the whole night lasts at it."""

    speed: float
    real_minutes: float
    target: int | None = None  # the game-day length this speed was made for

    def label(self) -> str:
        lasts = length_words(self.real_minutes)
        if self.target is not None:
            return f"{self.target} min game day: {self.speed:g}x"
        return f"{self.speed:g}x: the whole night lasts {lasts}"


def speed_choices(sim_minutes: int, *also: float) -> list[SpeedChoice]:
    """Speeds to offer for an exercise `sim_minutes` long: one per game-day length, the
    fixed ones, and `also` (the speed in use, so it can be chosen again), slowest first."""
    choices: dict[float, SpeedChoice] = {}
    for speed in (*FIXED_SPEEDS, *also):
        if speed > 0:
            choices[speed] = SpeedChoice(speed, real_minutes(sim_minutes, speed))
    for target in GAME_DAY_LENGTHS:
        if target > sim_minutes:  # it would slow the night below real time
            continue
        speed = speed_for(sim_minutes, target)
        choices[speed] = SpeedChoice(speed, real_minutes(sim_minutes, speed), target)
    return sorted(choices.values(), key=lambda c: c.speed)


def length_words(minutes: float) -> str:
    """Real minutes for people: '45 s', '60 min', '2.5 h'."""
    if minutes < 1:
        return f"{minutes * 60:.0f} s"
    if minutes < 120:
        return f"{minutes:.0f} min"
    return f"{minutes / 60:.1f} h"
