"""Starting a team host from the CLI's words: its seats, teams, prepared injects, a resumed
session; and running it without a screen (`raceday host --headless`, a teams file)."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from raceday.engine.clock import Pace
from raceday.errors import InputError
from raceday.exercise.model import Exercise
from raceday.inert import json_text
from raceday.team.group import GroupError, Teams, TeamSpec, team_names
from raceday.team.host import Host
from raceday.team.inject_file import PreparedInject
from raceday.team.seats import SeatSpec, seats_from_roles

if TYPE_CHECKING:
    from rich.console import Console


def game_day_speed(exercise: Exercise, speed: float | None, length: float | None) -> float:
    """The live clock's speed: `speed` when given, else the one that plays the whole night in
    `length` real minutes, by default the exercise's own length (the guide's game day)."""
    from raceday.engine.clock import speed_for

    if speed is not None:
        if speed <= 0:
            raise InputError([f"--speed: must be above 0, not {speed:g}"])
        return speed
    minutes = length if length is not None else exercise.length
    if minutes <= 0:
        raise InputError([f"--length: a game day lasts more than 0 minutes, not {minutes:g}"])
    return speed_for(exercise.clock.length_minutes, minutes)


def build_host(exercise_name: str, seats: str | None, pace: str, speed: float | None,
               transcripts: Path, *, length: float | None = None, lobby: bool = False,
               injects: Path | None = None, unknown: bool = False,
               night: str | None = None) -> Host:
    """A host for the named exercise with the seats `responder,enactor-a,...` (not started).

    `raceday host --db postgresql://…` leaves the DSN in RACEDAY_DB (cli.py) for the world;
    the host meets its seats on the same server, so they can join from other machines."""
    import os

    from raceday.engine.load import load_named_exercise
    from raceday.exercise.catalog import resolve_exercise
    from raceday.store import DB_VARIABLE, is_postgres

    exercise = load_named_exercise(exercise_name)
    ref = str(Path(resolve_exercise(exercise_name)).resolve())
    db = os.environ.get(DB_VARIABLE)
    prepared = prepared_injects(injects, exercise)
    from raceday.engine.unknown_night import chosen_night

    host = Host(exercise, parse_seats(exercise, seats), exercise_ref=ref,
                transcripts=transcripts, pace=Pace(pace),
                speed=game_day_speed(exercise, speed, length),
                meeting=db if is_postgres(db) else None, lobby=lobby,
                night=chosen_night(exercise, unknown, night))
    host.prepared = prepared
    return host


def prepared_injects(path: Path | None, exercise: Exercise,
                     ) -> tuple[tuple[PreparedInject, ...], str] | None:
    """`--injects FILE` read and checked before any session starts (None: no file)."""
    if path is None:
        return None
    from raceday.team.inject_file import load_inject_file

    return load_inject_file(path, exercise), path.name


def build_teams(exercise_name: str, seats: str | None, teams: str, pace: str,
                speed: float | None, transcripts: Path, *, length: float | None = None,
                lobby: bool = False, injects: Path | None = None) -> Teams:
    """Several teams of the same seats on one clock (not started)."""
    from raceday.engine.load import load_named_exercise
    from raceday.exercise.catalog import resolve_exercise

    try:
        names = team_names(teams)
    except GroupError as exc:
        raise InputError([str(exc)]) from None
    exercise = load_named_exercise(exercise_name)
    ref = str(Path(resolve_exercise(exercise_name)).resolve())
    specs = parse_seats(exercise, seats)
    prepared = prepared_injects(injects, exercise)
    group = Teams(exercise, [TeamSpec(name, tuple(specs)) for name in names], exercise_ref=ref,
                  transcripts=transcripts, pace=Pace(pace),
                  speed=game_day_speed(exercise, speed, length), lobby=lobby)
    group.prepared = prepared
    return group


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


def host_headless(exercise_name: str, seats: str | None, pace: str, speed: float | None,
                  transcripts: Path, out: Console, teams: str | None = None, *,
                  length: float | None = None, lobby: bool = False,
                  injects: Path | None = None, unknown: bool = False,
                  night: str | None = None) -> int:
    from raceday.engine.unknown_night import facilitator_night_line
    from raceday.team.host_loop import join_text, serve
    from raceday.transcript.render import print_score

    def say(line: str) -> None:
        out.print(line, markup=False, highlight=False, soft_wrap=True)

    if teams is not None:
        return _host_teams_headless(build_teams(exercise_name, seats, teams, pace, speed,
                                                transcripts, length=length, lobby=lobby,
                                                injects=injects),
                                    say, out)
    host = build_host(exercise_name, seats, pace, speed, transcripts, length=length,
                      lobby=lobby, injects=injects, unknown=unknown, night=night)
    host.grace_all = True  # nobody watches a console: a quiet seat's held step is played
    host.start()
    if host.night is not None:  # the facilitator's terminal only: no file, no seat
        say(facilitator_night_line(host.night))

    def announce() -> None:  # once Ctrl-C is heard: a Ctrl-C at these lines ends and scores it
        _announce(join_text(host), host.folder, say, out,
                  lobby=f"every seat has joined; then it runs at {host.live.speed:g}x"
                  if host.in_lobby else None, ends="the session")

    score = serve(host, say, threading.Event(), announce=announce)
    print_score(score.score, out, host.folder)
    return 0


def _announce(text: str, folder: Path, say: Callable[[str], None], out: Console, *,
              lobby: str | None, ends: str) -> None:
    """The join lines, where they are kept, what holds the clock, and how to end."""
    from raceday.team.host_loop import save_join_text

    say(text)
    say(f"  (also in {save_join_text(folder, text).resolve()})")
    if lobby is not None:
        say(f"The clock is held at the start until {lobby}.")
    out.print(f"Ctrl-C ends {ends} and scores it.", style="dim")


def _host_teams_headless(teams: Teams, say: Callable[[str], None], out: Console) -> int:
    from raceday.team.group import read_group
    from raceday.team.host_loop import group_join_text, serve_teams
    from raceday.team.leaderboard import leaderboard_lines, standings

    folder = teams.start()
    stop = threading.Event()
    try:  # a Ctrl-C as soon as the join lines are out ends and scores every team, as later
        _announce(group_join_text(teams), folder, say, out,
                  lobby=f"every team's seats have joined; then it runs at "
                        f"{teams.live.speed:g}x" if teams.in_lobby else None,
                  ends="every team's session")
    except KeyboardInterrupt:
        stop.set()
    serve_teams(teams, say, stop)
    say("Leaderboard")
    for line in leaderboard_lines(standings(read_group(folder))):
        say(line)
    say(f"Teams saved in {folder}")
    return 0


def run_teams_file(exercise: Exercise, path: Path, transcripts: Path, as_json: bool,
                   out: Console) -> int:
    """`raceday run EXERCISE --team --script TEAMS.yaml`: every team plays, one leaderboard."""
    from raceday.team.group import read_group
    from raceday.team.group_script import load_teams_file, run_group_script
    from raceday.team.leaderboard import leaderboard_lines, standings
    from raceday.transcript.events import score_to_json

    group = run_group_script(exercise, load_teams_file(path, exercise), transcripts)
    rows = standings(read_group(group.folder))
    if as_json:
        result = {"exercise": exercise.id, "group": str(group.folder), "teams": [
            {"team": r.team, "session": str(r.folder),
             **(score_to_json(r.score) if r.score is not None else {})} for r in rows]}
        sys.stdout.write(json_text(result) + "\n")
        return 0
    for line in leaderboard_lines(rows):
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    out.print(f"Teams saved in {group.folder}", markup=False, highlight=False, soft_wrap=True)
    return 0


def resumed_host(folder: Path, exercise_name: str | None = None,
                 speed: float | None = None) -> Host:
    """A host for a team session whose host was killed, resumed (`raceday resume DIR` on a
    folder with a session.db): its seats from session.db, its exercise and pace from the
    transcript, its speed as its clock last published it (unless `speed` says another). A
    session that cannot be resumed says why in one line."""
    from raceday.engine.load import load_named_exercise
    from raceday.engine.resume import check_resumable
    from raceday.store.session_db import SessionDb
    from raceday.store.team_db import SESSION_DB
    from raceday.transcript.log import read_events

    played = check_resumable(folder)
    db = SessionDb.open(Path(folder) / SESSION_DB)
    try:
        seats = [SeatSpec(row.name, row.role) for row in db.seats()]
        ref = exercise_name or db.meta().get("exercise") or played
        team = db.meta().get("team", "")  # one team of a group: its commands name it
        if speed is None:
            speed = _published_speed(db.clock())
    finally:
        db.close()
    exercise = load_named_exercise(ref)
    start = read_events(folder).start
    pace = Pace(start.pace) if start is not None else Pace.LIVE
    host = Host(exercise, seats, exercise_ref=ref, transcripts=Path(folder).parent, pace=pace,
                speed=speed, team=team)
    host.resume_session(Path(folder))
    return host


def _published_speed(clock: str | None) -> float:
    """The speed the host's clock last showed its seats (60 if it never said)."""
    try:
        value = json.loads(clock or "{}").get("speed")
    except (ValueError, AttributeError):
        value = None
    return float(value) if isinstance(value, (int, float)) and value > 0 else 60.0


def resume_headless(folder: Path, exercise_name: str | None, speed: float | None,
                    out: Console) -> int:
    """`raceday resume DIR --headless` for a team session: serve it again until it ends."""
    from raceday.team.host_loop import join_text, save_join_text, serve
    from raceday.transcript.render import print_score

    host = resumed_host(folder, exercise_name, speed)
    out.print(f"Resumed at {host.need().clock_face}: every seat joins again with its new "
              "token.", markup=False, highlight=False)
    out.print(join_text(host), markup=False, highlight=False, soft_wrap=True)
    save_join_text(host.folder, join_text(host))
    out.print("Ctrl-C ends the session and scores it.", style="dim")
    score = serve(host, lambda line: out.print(line, markup=False, highlight=False,
                                               soft_wrap=True),
                  threading.Event())
    print_score(score.score, out, host.folder)
    return 0


def resume_to_end(folder: Path, exercise_name: str | None, as_json: bool,
                  out: Console) -> int:
    """`raceday resume DIR --end` for a team session: end it headless, with no seat and no
    console (the night plays itself out with the automation in every role, as when a team
    leaves early), and print the score (one JSON object with `as_json`). It used to open the
    console, which hung without a terminal, or, `--headless`, wait for seats for ever."""
    from raceday.transcript.events import score_to_json
    from raceday.transcript.render import print_score

    host = resumed_host(folder, exercise_name)
    try:
        score = host.end("ended on resume")
    finally:
        host.close()
    session = host.need()
    if as_json:
        result = {"exercise": session.exercise.id, "session": str(session.folder),
                  **score_to_json(score.score)}
        sys.stdout.write(json_text(result) + "\n")
    else:
        print_score(score.score, out, session.folder)
    return 0
