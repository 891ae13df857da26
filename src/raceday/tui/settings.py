"""How the next session is played: the mode, the pace and its speed, where transcripts go.

The launcher changes them; the briefing and the play screen read them. A module of its own
so that the screens need not import the app to name them (the app imports the screens)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from raceday.engine.clock import Pace, speed_for

if TYPE_CHECKING:  # the first frame needs no exercise model (13 ms of dataclasses)
    from raceday.engine.unknown_night import DrawnNight
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
    unknown: bool = False
    """An unknown night (`--unknown`): the night is drawn as the session opens, told at the end."""
    night: str | None = None
    """With `unknown`: the facilitator's pick of the family's night (`--night`), not drawn."""

    def drawn_night(self, exercise: Exercise) -> DrawnNight | None:
        """The night the next session plays: drawn (or picked) now, for an unknown night."""
        if not self.unknown or exercise.replay is None or exercise.replay.nights is None:
            return None
        from raceday.engine.unknown_night import chosen_night

        return chosen_night(exercise, True, self.night)

    def speed_for(self, exercise: Exercise) -> float:
        if self.length:
            return speed_for(exercise.clock.length_minutes, self.length)
        return self.speed
