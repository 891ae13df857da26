"""How the next session is played: the mode, the pace and its speed, where transcripts go.

The launcher changes them; the briefing and the play screen read them. A module of its own
so that the screens need not import the app to name them (the app imports the screens)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from raceday.engine.clock import Pace, speed_for

if TYPE_CHECKING:  # the first frame needs no exercise model (13 ms of dataclasses)
    from raceday.exercise.model import Exercise

MODES = ("solo", "team", "onboarding")
GAME_DAY_MINUTES = 60.0
"""The live pace's default: the whole exercise in an hour of real time."""


@dataclass
class Settings:
    """How the next session is played; the launcher changes them.

    `length` (real minutes the whole exercise should last) wins over `speed` when set: the
    speed then follows from the exercise's own length."""

    mode: str = "solo"
    pace: Pace = Pace.TURNS
    speed: float = 60.0
    transcripts: Path = Path("transcripts")
    length: float | None = None
    mode_given: bool = False
    """The mode was chosen (`--mode`): the launcher's first run does not switch to onboarding."""

    def speed_for(self, exercise: Exercise) -> float:
        if self.length:
            return speed_for(exercise.clock.length_minutes, self.length)
        return self.speed
