"""The CLI's door to the TUI: `raceday play [EXERCISE]`."""

from __future__ import annotations

from pathlib import Path

from raceday.engine.clock import Pace


def launch(
    exercise: str | None,
    *,
    mode: str = "solo",
    pace: str = "turns",
    speed: float | None = None,
    length: float | None = None,
    transcripts: Path = Path("transcripts"),
) -> int:
    """Open the launcher (no exercise) or the exercise's briefing; returns the exit status.

    A bad exercise raises the loader's `ExerciseError` before the screen changes, so the CLI
    prints `file:line` problems and exits 2.
    """
    from raceday.commands import load_named_exercise

    loaded = load_named_exercise(exercise) if exercise else None
    from raceday.tui.app import GAME_DAY_MINUTES, RacedayApp, Settings, run_app

    settings = Settings(mode=mode, pace=Pace(pace), speed=speed or 60.0,
                        transcripts=Path(transcripts),
                        length=None if speed else (length or GAME_DAY_MINUTES))
    return run_app(RacedayApp(loaded, settings=settings))
