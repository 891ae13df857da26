"""`raceday check` on an exercise's family of nights (`replay: nights`): each night an
unknown session may draw plays, and is a night worth drawing.

A night whose fault no monitor could see (no harm the customers would notice) teaches
detection nothing, and a "quiet" night with a harm would charge a team for a fault it was
told could not happen. Each is played with nobody at the keyboard, at the earliest and the
latest minute its fault may be drawn."""

from __future__ import annotations

import tempfile
from pathlib import Path

from raceday.engine.headless import run_script
from raceday.engine.script import Script
from raceday.engine.unknown_night import QUIET, named_night
from raceday.errors import RacedayError
from raceday.exercise.model import Exercise


def night_problems(exercise: Exercise) -> list[str]:
    """One `file:line: night "X": ...` for each night of the family that does not play, or
    plays without the harm it is drawn for (a quiet night: with one)."""
    spec = exercise.replay.nights if exercise.replay is not None else None
    if spec is None or exercise.path is None:
        return []
    problems: list[str] = []
    nobody = Script(exercise.path.parent / "nobody", exercise.id, None, ())
    with tempfile.TemporaryDirectory(prefix="raceday-nights-") as tmp:
        for night in spec.family:
            where = f'{exercise.path}:{night.line}: night "{night.night}"'
            if night.later is None:
                bounds = [0]
            else:  # the earliest and the latest lateness a draw can give
                least, most, step = night.later
                bounds = sorted({least, least + step * ((most - least) // step)})
            for later in bounds:
                try:
                    drawn = named_night(exercise, night.night, later)
                    _session, result = run_script(exercise, nobody, Path(tmp), night=drawn)
                except RacedayError as exc:
                    problems.append(f"{where}: does not play ({str(exc).splitlines()[0]})")
                    break
                began = result["fault"].get("started_at")
                moved = f" ({later} minutes later)" if later else ""
                if drawn.kind == QUIET and began is not None:
                    problems.append(f"{where}: a quiet night, but the customers see harm from "
                                    f"{began}{moved}: a team would be charged for a fault it "
                                    "cannot have caused")
                elif drawn.kind != QUIET and began is None:
                    problems.append(f"{where}: played with nobody at the keyboard{moved}, no "
                                    "harm the customers would see ever begins: no monitor "
                                    "could catch it, so it teaches detection nothing")
    return problems
