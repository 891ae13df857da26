"""Starting the TUI for `raceday play [EXERCISE]` and `raceday resume DIR` (the CLI's one
import of it)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from raceday.engine.clock import Pace

if TYPE_CHECKING:
    from raceday.exercise.model import Exercise


class _Loading:
    """The exercise loaded (its world built and its SQL compiled) in a thread while the main
    one imports the TUI: SQLite lets go of the interpreter while it builds, so the two
    overlap, and the first screen comes sooner. Its head is kept for the next start (see
    briefing_head). Problems are raised where `result` is asked."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._exercise: Exercise | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._load, name="raceday-load", daemon=True)
        self._thread.start()

    def _load(self) -> None:
        from raceday.tui.briefing_head import load_keeping_head

        try:
            self._exercise = load_keeping_head(self._path)
        except BaseException as exc:  # raised again in the main thread
            self._error = exc

    def result(self) -> Exercise:
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._exercise is not None
        return self._exercise


def launch(
    exercise: str | None,
    *,
    mode: str | None = None,
    pace: str = "turns",
    speed: float | None = None,
    length: float | None = None,
    transcripts: Path = Path("transcripts"),
    unknown: bool = False,
    night: str | None = None,
) -> int:
    """Open the launcher (no exercise) or the exercise's briefing; returns the exit status.

    A bad exercise raises the loader's `ExerciseError`, so the CLI prints `file:line`
    problems and exits 2: an unknown id, or a problem of an exercise whose first frame is not
    kept, before the screen opens (it is loaded first); a problem found by the load the
    briefing runs after a kept first frame, once the screen is closed again. Any other error
    of a load (a bug) is raised the same ways, so the CLI's one "internal error" line and
    exit 1 read the same whichever load met it.
    """
    pending = None
    loading = None
    if exercise:
        from raceday.exercise.catalog import resolve_exercise
        from raceday.tui.briefing_head import read_head

        path = resolve_exercise(exercise)
        head = read_head(path)
        if head is None:  # not kept (or not as it is now): loaded first, as it always was
            loading = _Loading(path)
        else:
            from raceday.tui.screens.briefing import PendingExercise

            pending = PendingExercise(path, head)
    from raceday.tui.app import RacedayApp, run_app
    from raceday.tui.settings import GAME_DAY_MINUTES, Settings

    loaded = loading.result() if loading is not None else None
    settings = Settings(mode=mode or "solo", mode_given=mode is not None, pace=Pace(pace),
                        speed=speed or 60.0,
                        transcripts=Path(transcripts),
                        length=None if speed else (length or GAME_DAY_MINUTES),
                        unknown=unknown or night is not None, night=night)
    app = RacedayApp(loaded, settings=settings, pending=pending)
    status = run_app(app)
    if app.load_error is not None:
        raise app.load_error
    return status


def launch_resume(folder: Path, exercise: str | None = None, *, speed: float | None = None,
                  length: float | None = None) -> int:
    """`raceday resume DIR`: rebuild a session a crash cut short and play on in the TUI.

    What cannot be resumed (a finished session, a damaged transcript, another exercise) is
    one line before the screen opens."""
    from raceday.engine.load import load_named_exercise
    from raceday.engine.resume import check_resumable

    name = check_resumable(folder)
    loaded = load_named_exercise(exercise or name)
    from raceday.tui.app import RacedayApp, run_app
    from raceday.tui.settings import GAME_DAY_MINUTES, Settings

    settings = Settings(speed=speed or 60.0, transcripts=Path(folder).parent,
                        length=None if speed else (length or GAME_DAY_MINUTES))
    return run_app(RacedayApp(loaded, settings=settings, resume=Path(folder)))
