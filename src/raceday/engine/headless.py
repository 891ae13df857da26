"""Open a session and play a script without any UI."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from raceday.engine.actions import Action, Wait
from raceday.engine.clock import Pace
from raceday.engine.core import Listener
from raceday.engine.script import Script, Step, When
from raceday.engine.session import Session
from raceday.engine.unknown_night import DrawnNight, night_json
from raceday.errors import MachineError, ScriptError
from raceday.exercise.dialects import for_dialect
from raceday.exercise.model import Exercise
from raceday.exercise.times import parse_time
from raceday.judge.score import Score
from raceday.logfile import log_to
from raceday.store import chosen_db, create_world, dialect_of
from raceday.transcript.events import score_to_json
from raceday.transcript.log import EventLog, TranscriptWriteError, session_folder

_log = logging.getLogger(__name__)

DEFAULT_TRANSCRIPTS = Path("transcripts")


def open_session(
    exercise: Exercise,
    players: Sequence[str] | None = None,
    transcripts: Path = DEFAULT_TRANSCRIPTS,
    pace: Pace = Pace.TURNS,
    time_limit_s: float = 2.0,
    db: str | None = None,
    origin: str = "",
    ahead: bool = True,
    night: DrawnNight | None = None,
) -> Session:
    """Build a fresh world in a new session folder and start the clock.

    `db` is a PostgreSQL DSN (`--db postgresql://...`) for a world on that server, played
    with the exercise's PostgreSQL variant; None is the default, a world.db in the folder
    (or the server `raceday play --db` left in RACEDAY_DB). `ahead` False: the caller starts
    the replay's nights ahead itself (`replay.prepare_ahead`), once its first screen is up."""
    db = chosen_db(db)
    exercise = for_dialect(exercise, dialect_of(db))
    held = tuple(players) if players is not None else exercise.default_roles
    folder = session_folder(transcripts, exercise.id)
    try:
        log_to(folder)
    except OSError as exc:
        raise TranscriptWriteError(f"{folder}: cannot write the session's log "
                                   f"({exc.strerror or exc})") from None
    _log.info("session of %s opened in %s (roles held: %s, pace %s)", exercise.id, folder,
              ", ".join(held) or "none", pace.value)
    store = create_world(folder, exercise.world_sql, exercise.roles, db=db,
                         time_limit_s=time_limit_s)
    try:
        session = Session(exercise, store, EventLog(folder), held, pace, night)
        session.origin = origin
        session.start()
    except BaseException:
        store.close()
        raise
    if ahead:
        from raceday.engine.replay import prepare_ahead  # the replay's module, only once open

        prepare_ahead(session)  # every replay needs the original nights: started now, aside
    return session


def minute_of(when: When, session: Session, where: str) -> int:
    """The simulated minute a script's `at`/`wait` means, from where the clock is now."""
    if when.plus is not None:
        return session.minute + when.plus
    if when.clock is None:
        upcoming = session.next_inject_minute()
        return upcoming if upcoming is not None else session.end_minute
    target = parse_time(when.text, session.exercise.clock.start)
    if target < session.minute:
        raise ScriptError([f"{where}: {when.text} has already passed "
                           f"(the clock shows {session.clock_face})"])
    return target


def play_step(session: Session, step: Step, where: str) -> None:
    if step.at is not None and step.at.text == "next":
        session.run_to_next_inject()  # a fault's inject on the way stops it too
    elif step.at is not None:
        session.advance_to(minute_of(step.at, session, where))
    action = step_action(session, step, where)
    if action is not None:
        session.perform(action)


def step_action(session: Session, step: Step, where: str) -> Action | None:
    """The player's action a script step asks for (None: `end`, or only a time to go to)."""
    if step.action == "wait":
        assert step.until is not None
        return Wait(until=None if step.until.text == "next"
                    else minute_of(step.until, session, where))
    return step.player_action()


def run_script(exercise: Exercise, script: Script, transcripts: Path = DEFAULT_TRANSCRIPTS,
               db: str | None = None, watch: Listener | None = None,
               night: DrawnNight | None = None) -> tuple[Session, dict[str, Any]]:
    """Play a whole script, then let the clock run out (unless it says `end`), and score.
    `watch` is told every event from the session's open on (`raceday run`'s progress line);
    `night` is an unknown session's drawn night (`--unknown`)."""
    session = open_session(exercise, script.roles, transcripts, db=db, origin="script",
                           night=night)
    if watch is not None:
        session.subscribe(watch)
    score = play_script_on(session, script)
    result = {"exercise": exercise.id, "session": str(session.folder), **score_to_json(score)}
    told = night_json(session.events)
    if told is not None:  # an unknown night: which it was, once it is over
        result["night"] = told
    return session, result


def play_script_on(session: Session, script: Script) -> Score:
    """Play a script's steps on an open session (a new one, or one `raceday resume` rebuilt:
    steps whose time has passed are an error naming them), then end and score it."""
    try:
        for step in script.steps:
            if step.action == "end":
                break
            play_step(session, step, f"{script.path}:{step.line}")
        else:
            session.advance_to(session.end_minute)
        return session.end()
    except MachineError as exc:  # a full disk, a world deleted: close, say why once
        _log.exception("the script %s stopped", script.path)
        session.close()
        raise MachineError(stopped_words(session, exc)) from exc
    except BaseException:
        _log.exception("the script %s stopped", script.path)
        if session.score is None:
            session.end("aborted")
        raise


def stopped_words(session: Session, exc: BaseException) -> str:
    """One line for a session the machine stopped: why, where, and how to go on."""
    where = ("" if "transcript is whole" in str(exc) else
             f" with its transcript whole (event {session.log.seq})")
    return (f"{exc}; the session stopped at {session.clock_face}{where}: `raceday resume "
            f"{session.folder}` goes on from there once the world and the transcript can be "
            "written")
