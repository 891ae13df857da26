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


def launch_resume(folder: Path, exercise: str | None = None, *, speed: float | None = None,
                  length: float | None = None) -> int:
    """`raceday resume DIR`: rebuild a session a crash cut short and play on in the TUI.

    What cannot be resumed (a finished session, a damaged transcript, another exercise) is
    one line before the screen opens."""
    from raceday.commands import load_named_exercise
    from raceday.engine.resume import check_resumable

    name = check_resumable(folder)
    loaded = load_named_exercise(exercise or name)
    from raceday.tui.app import GAME_DAY_MINUTES, RacedayApp, Settings, run_app

    settings = Settings(speed=speed or 60.0, transcripts=Path(folder).parent,
                        length=None if speed else (length or GAME_DAY_MINUTES))
    return run_app(RacedayApp(loaded, settings=settings, resume=Path(folder)))
