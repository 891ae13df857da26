"""The CLI's door to team play without a screen: build a host from the command's words."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from raceday.engine.clock import Pace
from raceday.errors import InputError
from raceday.exercise.model import Exercise
from raceday.team.host import Host
from raceday.team.seats import SeatSpec, seats_from_roles

if TYPE_CHECKING:
    from rich.console import Console


def build_host(exercise_name: str, seats: str | None, pace: str, speed: float,
               transcripts: Path) -> Host:
    """A host for the named exercise with the seats `responder,enactor-a,...` (not started)."""
    from raceday.commands import load_named_exercise
    from raceday.exercise.catalog import resolve_exercise

    exercise = load_named_exercise(exercise_name)
    ref = str(Path(resolve_exercise(exercise_name)).resolve())
    return Host(exercise, parse_seats(exercise, seats), exercise_ref=ref,
                transcripts=transcripts, pace=Pace(pace), speed=speed)


def parse_seats(exercise: Exercise, text: str | None) -> list[SeatSpec]:
    roles = [r.strip() for r in text.split(",") if r.strip()] if text else \
        list(exercise.default_roles)
    unknown = [r for r in roles if r not in exercise.role_ids]
    if unknown:
        raise InputError([f"--seats: unknown role {unknown[0]!r} (roles are "
                          f"{', '.join(exercise.role_ids)})"])
    if not roles:
        raise InputError(["--seats: a team session needs at least one seat"])
    return seats_from_roles(roles)


def host_headless(exercise_name: str, seats: str | None, pace: str, speed: float,
                  transcripts: Path, out: Console) -> int:
    from raceday.team.serve import join_text, serve
    from raceday.transcript.render import print_score

    host = build_host(exercise_name, seats, pace, speed, transcripts)
    host.start()
    out.print(join_text(host), markup=False, highlight=False, soft_wrap=True)
    out.print("Ctrl-C ends the session and scores it.", style="dim")
    score = serve(host, lambda line: out.print(line, markup=False, highlight=False,
                                               soft_wrap=True),
                  threading.Event())
    print_score(score.score, out, host.folder)
    return 0
