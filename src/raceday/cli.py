"""The command line: parses arguments and calls the core. Imports the TUI only for `play`.

stdout carries data (a score, a JSON object, a listing); errors go to stderr as one line
each. Exit status: 0 done, 2 bad input, 1 internal error.

Start-up time matters (`raceday play` should reach its briefing about as fast as any
Textual app starts), so this module imports only what every command needs; the rest is
imported by the command that uses it, and `raceday --version` imports nothing at all.
"""

from __future__ import annotations

import pathlib
import sys

from raceday import __version__
from raceday.errors import InputError, MachineError, RacedayError
from raceday.inert import InertStream, inert, json_text

TYPE_CHECKING = False  # as typing.TYPE_CHECKING (mypy knows the name), without importing typing
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from rich.console import Console

    from raceday.engine.unknown_night import DrawnNight
    from raceday.exercise.model import Exercise
    from raceday.terminal_progress import TerminalProgress
    from raceday.transcript.events import Event

EXIT_OK, EXIT_INTERNAL, EXIT_INPUT = 0, 1, 2
VERSION = f"raceday {__version__}"


def _add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str,
                *, help: str) -> argparse.ArgumentParser:  # noqa: A002 - argparse's own word
    """A command's parser, its `--help` opening with the line `raceday --help` lists it by."""
    return sub.add_parser(name, help=help, description=help[:1].upper() + help[1:] + ".")


def _parser(*, play_only: bool = False) -> argparse.ArgumentParser:
    """Every command's parser; `play_only`: the `play` command's alone (see _parse)."""
    import argparse
    from pathlib import Path

    parser = argparse.ArgumentParser(
        prog="raceday",
        description="A terminal tabletop incident exercise: relive the us-east-1 DNS race "
        "of 19-20 October 2025 in real SQL.",
    )
    parser.add_argument("--version", action="version", version=VERSION)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    play = _add_parser(sub, "play", help="play an exercise in the terminal (the default)")
    play.add_argument("exercise", nargs="?", help="exercise id or folder (omit for the launcher)")
    play.add_argument("--mode", choices=["solo", "team", "onboarding"], default=None,
                      help="solo (the default), team, or onboarding (guided); the "
                           "launcher's first run opens the easiest exercise guided")
    play.add_argument("--pace", choices=["turns", "live"], default="turns",
                      help="turns (the default): the clock moves when you act or wait; live: "
                           "it runs on its own")
    play.add_argument("--speed", type=float, default=None,
                      help="simulated seconds per real second in the live pace")
    play.add_argument("--length", type=float, default=None, metavar="MINUTES",
                      help="live pace: fit the whole exercise into this many real minutes "
                           "(default 60, a game day; --speed overrides it)")
    play.add_argument("--transcripts", type=Path, default=Path("transcripts"),
                      help="where the session folder is written (default ./transcripts)")
    play.add_argument("--db", default=None, metavar="postgresql://...",
                      help="build worlds on this PostgreSQL server (default: SQLite)")
    play.add_argument("--keep-world", action="store_true",
                      help="with --db: keep the world on the server after the session ends")
    _night_arguments(play)
    if play_only:
        return parser

    run = _add_parser(sub, "run", help="play a script headless and print the score")
    run.add_argument("exercise", help="exercise id or folder")
    run.add_argument("--script", type=Path, required=True, help="play script (YAML)")
    run.add_argument("--json", action="store_true", help="print one JSON object")
    run.add_argument("--transcripts", type=Path, default=Path("transcripts"),
                     help="where the session folder is written (default ./transcripts)")
    run.add_argument("--db", default=None, metavar="postgresql://...",
                     help="build the world on this PostgreSQL server (default: SQLite, in the folder)")
    run.add_argument("--keep-world", action="store_true",
                     help="with --db: keep the world on the server after the session ends")
    run.add_argument("--team", action="store_true",
                     help="play it as a team session: a host and one client per seat")
    _night_arguments(run)

    _add_parser(sub, "list", help="list the exercises")

    check = _add_parser(sub, "check", help="validate exercise folders or files")
    check.add_argument("paths", nargs="+", type=Path,
                       help="exercise folders, or exercise.yaml, play script, teams or inject "
                            "files")
    check.add_argument("--strict", action="store_true",
                       help="also play the reference plays and warn about what plays but "
                            "teaches badly (keys that moved, steps no play prevents, ...)")

    new = _add_parser(sub, "new", help="start a new exercise from a small working one")
    new.add_argument("id", help="the new exercise's id (lower-case letters, digits, dashes)")
    new.add_argument("--into", type=Path, default=Path("exercises"),
                     help="the folder the exercise is made in (default ./exercises)")

    brief = _add_parser(sub, "brief", help="print an exercise's briefing")
    brief.add_argument("exercise", help="exercise id or folder")
    brief.add_argument("--facilitator", action="store_true",
                       help="the facilitator's timeline instead: what each inject is for, "
                            "the answer key (keep it from the players; `raceday guide` "
                            "writes the whole facilitator guide)")

    guide = _add_parser(sub, "guide", help="write an exercise's facilitator guide (MSEL, "
                        "answer key, pauses, hot wash) as Markdown or HTML")
    guide.add_argument("exercise", help="exercise id or folder")
    guide.add_argument("--format", dest="fmt", choices=["md", "html"], default="md",
                       help="Markdown (the default) or a standalone, printable HTML page")
    guide.add_argument("--html", dest="fmt", action="store_const", const="html",
                       help="the same as --format html")
    guide.add_argument("-o", "--output", type=Path, metavar="FILE",
                       help="write to FILE instead of stdout")

    deb = _add_parser(sub, "debrief", help="write a played session's debrief (md, html or json)")
    deb.add_argument("session", type=Path, help="the session folder (or its events.jsonl)")
    deb.add_argument("--format", dest="fmt", choices=["md", "html", "json", "terminal"],
                     help="Markdown (the default), a standalone HTML page, JSON, or the "
                          "terminal's tables",
                     default="md")
    deb.add_argument("-o", "--output", type=Path, help="write to FILE instead of stdout")

    aar = _add_parser(sub, "aar", help="fill in a session's after-action report (the hot wash): "
                         "analysis, owners, dates, observations")
    aar.add_argument("session", type=Path,
                     help="the session folder; a group's folder (raceday host --teams) writes "
                          "the room's AAR (aar.md, aar.html) from every team's")
    for name, what in (("analysis", "why area for improvement N happened"),
                       ("recommendation", "what to do about area for improvement N"),
                       ("issue", "the issue row N of the improvement plan addresses"),
                       ("owner", "who owns row N of the improvement plan (N: new for the "
                                 "row this call's --action adds)"),
                       ("start", "when row N starts (YYYY-MM-DD)"),
                       ("due", "when row N is due (YYYY-MM-DD)")):
        aar.add_argument(f"--{name}", nargs=2, action="append", default=[],
                         metavar=("N", "TEXT"), help=what)
    aar.add_argument("--action", action="append", default=[], metavar="TEXT",
                     help="add a row to the improvement plan")
    aar.add_argument("--note", action="append", default=[], metavar="TEXT",
                     help="an observation: '+ TEXT' a strength, '- TEXT' an area for "
                     "improvement")
    aar.add_argument("--at", default="", metavar="HH:MM",
                     help="the moment the --note observations belong to")
    aar.add_argument("--by", default="", metavar="NAME", help="who observed it")
    aar.add_argument("--evaluators", default=None, metavar="TEXT",
                     help="the facilitator and evaluators, by name")
    aar.add_argument("--mark", nargs=2, action="append", default=[],
                     metavar=("INJECT:N", "MARK"),
                     help="mark what inject INJECT expected of the team (its Nth expected "
                          "action) met, partly or not-met: the AAR's inject responses and "
                          "objectives show it (never the score)")

    review = _add_parser(sub, "review", help="walk a saved session event by event (read-only)")
    review.add_argument("session", type=Path, help="the session folder (or its events.jsonl)")

    transcript = _add_parser(sub, "transcript", help="print a saved session readably")
    transcript.add_argument("session", type=Path,
                            help="the session folder (or its events.jsonl)")

    history = _add_parser(sub, "history", help="each exercise's attempts over time, with charts")
    history.add_argument("--transcripts", type=Path, default=Path("transcripts"),
                         help="the transcripts folder whose sessions to show (history.db "
                              "beside them)")
    history.add_argument("--exercise", default=None, help="only this exercise (its id)")
    history.add_argument("--player", default=None, help="only the sessions this person played")
    history.add_argument("--by", choices=["team", "player"], default="team",
                         help="group attempts by team (default) or by each player")
    history.add_argument("--all", action="store_true", dest="all_sessions",
                         help="also the headless runs of play scripts (`raceday run`)")

    resume = _add_parser(sub, "resume", help="go on with a session a crash or a kill cut short")
    resume.add_argument("session", type=Path, help="the session folder (transcripts/...)")
    resume.add_argument("--exercise", default=None,
                        help="the exercise id or folder, when it is not found by its id")
    resume.add_argument("--script", type=Path, default=None,
                        help="headless: play this script on from where it stopped, then score")
    resume.add_argument("--end", action="store_true",
                        help="headless: end it now (the night plays itself out) and score")
    resume.add_argument("--json", action="store_true", help="headless: print one JSON object")
    resume.add_argument("--headless", action="store_true",
                        help="a team session: host it again without the console")
    resume.add_argument("--speed", type=float, default=None,
                        help="simulated seconds per real second in the live pace")
    resume.add_argument("--length", type=float, default=None, metavar="MINUTES",
                        help="live pace: fit the whole exercise into this many real minutes")
    _team_parsers(sub)
    _serve_parser(sub)
    return parser


def _night_arguments(parser: argparse.ArgumentParser) -> None:
    """`--unknown` (and a facilitator's `--night`): the live night drawn from the family."""
    parser.add_argument("--unknown", action="store_true",
                        help="an unknown night: drawn from the exercise's family (tonight's "
                             "race, its practice nights, a quiet night) and told only at the "
                             "end; RACEDAY_SEED reproduces a draw")
    parser.add_argument("--night", default=None, metavar="ID",
                        help="with --unknown: play this night of the family (race, quiet or a "
                             "practice night's id) instead of drawing one; the players are "
                             "not told")


def _drawn_night(args: argparse.Namespace, exercise: Exercise) -> DrawnNight | None:
    """The unknown night `--unknown` / `--night` ask for (None: tonight's race, as told)."""
    from raceday.engine.unknown_night import chosen_night

    return chosen_night(exercise, getattr(args, "unknown", False), getattr(args, "night", None))


def _serve_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from pathlib import Path

    serve = _add_parser(sub, "serve", help="raceday in browsers (textual-serve): each browser "
                           "plays its own session, or takes a seat with --join")
    serve.add_argument("exercise", nargs="?", help="exercise id or folder (omit for the launcher)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="the address to listen on (default 127.0.0.1; 0.0.0.0 for a room)")
    serve.add_argument("--port", type=int, default=8000,
                       help="the port browsers connect to (default 8000)")
    serve.add_argument("--public-url", default=None, metavar="URL",
                       help="the address browsers reach the server by (behind a proxy)")
    serve.add_argument("--transcripts", type=Path, default=Path("transcripts"),
                       help="where each browser's session folder is written "
                            "(default ./transcripts)")
    serve.add_argument("--join", type=Path, default=None, metavar="SESSION",
                       help="a team session's folder: each browser takes the next free seat")
    serve.add_argument("--token", action="append", default=None, dest="tokens", metavar="TOKEN",
                       help="with --join: a seat's token from the host (once per seat; "
                       "or RACEDAY_TOKENS=T1,T2,...)")
    serve.add_argument("--team", default=None, help="with --join: the team, when the host "
                       "runs several")
    serve.add_argument("--max-sessions", type=int, default=None, metavar="N",
                       help="browsers playing at once (default 40; 0: no limit); one more "
                       "is told the server is full")
    _night_arguments(serve)


def _team_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from pathlib import Path

    host = _add_parser(sub, "host", help="host a team session: players join from other terminals")
    host.add_argument("exercise", help="exercise id or folder")
    host.add_argument("--seats", default=None,
                      help="the roles people play, one seat each: responder,enactor-a,... "
                      "(default: the exercise's player roles)")
    host.add_argument("--pace", choices=["turns", "live"], default="live",
                      help="live (the default): the clock runs on its own; turns: it moves "
                           "when the team acts or waits")
    host.add_argument("--length", type=float, default=None, metavar="MINUTES",
                      help="live pace: the game day's length in real minutes; the speed "
                      "follows from it (default: the exercise's own length, 45 for the "
                      "flagship: 5x)")
    host.add_argument("--speed", type=float, default=None,
                      help="simulated seconds per real second in the live pace (overrides "
                      "--length)")
    host.add_argument("--start-now", action="store_true",
                      help="start the clock at once (default: a lobby holds it at the start "
                      "until the facilitator starts it, or, headless, until every seat joined)")
    host.add_argument("--transcripts", type=Path, default=Path("transcripts"),
                      help="where the session folder is written (default ./transcripts)")
    host.add_argument("--db", default=None, metavar="postgresql://...",
                      help="build the world on this PostgreSQL server (default: SQLite)")
    host.add_argument("--keep-world", action="store_true",
                      help="with --db: keep the world on the server after the session ends")
    host.add_argument("--headless", action="store_true",
                      help="no console: print how to join, run until the night is over "
                      "(Ctrl-C ends it)")
    host.add_argument("--injects", type=Path, default=None, metavar="FILE",
                      help="the facilitator's prepared injects (YAML: injects: - title, at or "
                      "when, kind, to, text), in the console's master list (m)")
    host.add_argument("--teams", default=None,
                      help="several teams on one clock, each with the seats of --seats in "
                      "its own world: red,blue,... (a leaderboard at the end)")
    _night_arguments(host)

    join = _add_parser(sub, "join", help="take a seat in a team session")
    join.add_argument("session", type=_team_address,
                      help="the session folder (or postgresql://…?session=ID) the host printed")
    join.add_argument("--as", dest="player", required=True, help="your name")
    join.add_argument("--role", default=None, help="the seat's role (checked against the token)")
    join.add_argument("--token", default=None,
                      help="the seat's token from the host (or RACEDAY_TOKEN)")
    join.add_argument("--team", default=None, help="your team, when the host runs several")

    watch = _add_parser(sub, "watch", help="the projector view of a team session (read-only)")
    watch.add_argument("session", type=_team_address,
                       help="the session folder (or postgresql://…?session=ID)")
    watch.add_argument("--team", default=None,
                       help="one team of several (without it: the leaderboard)")


def _team_address(text: str) -> pathlib.Path | str:
    """A team session's address: a folder, or a PostgreSQL session's `postgresql://…`."""
    return text if text.startswith(("postgresql://", "postgres://")) else pathlib.Path(text)


def main(argv: Sequence[str] | None = None) -> int:
    if (sys.argv[1:] if argv is None else list(argv)) == ["--version"]:
        # What argparse's version action does (print, exit 0), without importing argparse.
        sys.stdout.write(VERSION + "\n")
        raise SystemExit(0)
    args = _parse(sys.argv[1:] if argv is None else list(argv))
    # Every line a command prints passes `inert`: one rule at the edge, so no command can
    # forget it. The streams are put back when the command returns.
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = InertStream(stdout), InertStream(stderr)
    try:
        return _main(args)
    finally:
        sys.stdout, sys.stderr = stdout, stderr


def _main(args: argparse.Namespace) -> int:
    # rich (about 15 ms to import) only when something is printed through it: `run --json`
    # prints its one line without it.
    out = _as_console(_LazyConsole(highlight=False))
    err = _as_console(_LazyConsole(stderr=True, highlight=False, soft_wrap=True))
    try:
        return _dispatch(args, out)
    except MachineError as exc:  # a full disk, a read-only folder: not the input's fault
        err.print(inert(f"raceday: {exc}", one_line=True), markup=False)
        return EXIT_INTERNAL
    except InputError as exc:
        for problem in exc.problems:
            err.print(inert(f"raceday: {problem}"), markup=False)
        return EXIT_INPUT
    except RacedayError as exc:
        err.print(inert(f"raceday: {exc}"), markup=False)
        return EXIT_INPUT
    except KeyboardInterrupt:
        err.print("raceday: interrupted")
        return EXIT_INTERNAL
    except Exception as exc:  # an internal error: say so plainly, keep the traceback for a report
        import traceback

        traceback.print_exc()
        err.print(inert(f"raceday: internal error: {exc!r}"), markup=False)
        return EXIT_INTERNAL


def _parse(argv: list[str]) -> argparse.Namespace:
    """`raceday play ...` (and `raceday` alone) are read by a parser that knows only `play`:
    building every command's parser takes 6 ms of the wait for the first screen. What that
    parser leaves over goes to the whole one, so help and errors read as they always did."""
    if not argv or argv[0] == "play":
        args, rest = _parser(play_only=True).parse_known_args(argv)
        if not rest:
            return args
    return _parser().parse_args(argv)


class _LazyConsole:
    """A rich Console made at its first use: rich is imported only by a command that prints
    through it."""

    def __init__(self, **options: object) -> None:
        self._options = options
        self._console: Console | None = None

    def __getattr__(self, name: str) -> object:
        console = self._console
        if console is None:
            from raceday.inert_console import InertConsole

            console = self._console = InertConsole(**self._options)  # type: ignore[arg-type]
        return getattr(console, name)


def _as_console(console: _LazyConsole) -> Console:
    """The lazy console as the Console it stands for (every use goes through __getattr__)."""
    return console  # type: ignore[return-value]


def _dispatch(args: argparse.Namespace, out: Console) -> int:
    from pathlib import Path

    command = args.command or "play"
    if getattr(args, "db", None) and (command in ("play", "host") or getattr(args, "team", False)):
        import os

        from raceday.store import DB_VARIABLE

        # The sessions these commands open are opened deep in the TUI or the team host: they
        # read the choice from the environment (engine/headless.py, open_session).
        os.environ[DB_VARIABLE] = args.db
    if getattr(args, "keep_world", False):
        import os

        from raceday.store import KEEP_VARIABLE

        os.environ[KEEP_VARIABLE] = "1"  # read where the session ends (store.end_world)
    if command == "play":
        from raceday.tui.start_play import launch  # the only import of the TUI

        return launch(
            getattr(args, "exercise", None),
            mode=getattr(args, "mode", None),
            pace=getattr(args, "pace", "turns"),
            speed=getattr(args, "speed", None),
            length=getattr(args, "length", None),
            transcripts=getattr(args, "transcripts", Path("transcripts")),
            unknown=getattr(args, "unknown", False),
            night=getattr(args, "night", None),
        )
    if command == "list":
        from raceday.commands import list_exercises

        return list_exercises(out)
    if command == "check":
        from raceday.commands import check_paths

        code = check_paths(args.paths, out)
        return _check_strict(args.paths, out) if getattr(args, "strict", False) else code
    if command == "new":
        from raceday.exercise.scaffold import scaffold

        folder = scaffold(args.id, args.into)
        out.print(inert(f"Made {folder}: check it with `raceday check {folder}`, play it "
                        f"with `raceday play {folder}`; docs/exercise-format.md has the "
                        f"tutorial."), markup=False, soft_wrap=True)
        return EXIT_OK
    if command == "brief":
        from raceday.commands import print_briefing, print_facilitator_guide

        if getattr(args, "facilitator", False):
            return print_facilitator_guide(args.exercise, out)
        return print_briefing(args.exercise, out)
    if command == "guide":
        from raceday.commands import write_guide
        from raceday.team.program import program

        return write_guide(args.exercise, args.fmt, args.output, out, program())
    if command == "transcript":
        from raceday.transcript.render import print_transcript

        return print_transcript(args.session, out)
    if command == "run":
        return _run(args, out)
    if command == "debrief":
        from raceday.transcript.debrief import debrief_command

        return debrief_command(args.session, args.fmt, args.output, out)
    if command == "aar":
        return _aar(args, out)
    if command == "review":
        from raceday.tui.screens.review import run_review  # the TUI, imported only here

        return run_review(args.session)
    if command == "history":
        from raceday.history.report import print_history

        return print_history(args.transcripts, out, exercise=args.exercise,
                             player=args.player, by=args.by, scripts=args.all_sessions)
    if command in ("host", "join", "watch"):
        return _team(args, out)
    if command == "resume":
        return _resume(args, out)
    if command == "serve":
        return _serve(args)
    raise AssertionError(command)


def _check_strict(paths: Sequence[pathlib.Path], out: Console) -> int:
    """`check --strict`: each exercise's warnings on stderr, a count on stdout; exit 0."""
    from raceday.engine.load import load_exercise
    from raceday.engine.strict import strict_warnings

    for path in paths:
        warnings = strict_warnings(load_exercise(path))
        for warning in warnings:
            sys.stderr.write(inert(warning) + "\n")
        out.print(inert(f"{path}: {len(warnings) or 'no'} warning{'' if len(warnings) == 1 else 's'}"
                        f" (strict)"), markup=False, soft_wrap=True)
    return EXIT_OK


def _resume(args: argparse.Namespace, out: Console) -> int:
    """`raceday resume DIR`: in the TUI, or headless with --script or --end."""

    if (args.session / "session.db").is_file():  # a team session: the host comes back
        if args.end:  # to end it: headless, no seat awaited
            from raceday.team.start_host import resume_to_end

            return resume_to_end(args.session, args.exercise, args.json, out)
        if args.headless:
            from raceday.team.start_host import resume_headless

            return resume_headless(args.session, args.exercise, args.speed, out)
        from raceday.tui.team import start_team  # the TUI, imported only here

        return start_team.resume_console(args.session, args.exercise, args.speed)
    if args.script is None and not args.end:
        from raceday.tui.start_play import launch_resume  # the TUI, imported only here

        return launch_resume(args.session, args.exercise, speed=args.speed, length=args.length)
    from raceday.engine.headless import play_script_on
    from raceday.engine.load import load_named_exercise
    from raceday.engine.resume import check_resumable, resume_session
    from raceday.engine.script import load_script
    from raceday.transcript.events import ScoreEvent, score_to_json
    from raceday.transcript.render import print_score

    exercise = load_named_exercise(args.exercise or check_resumable(args.session))
    script = load_script(args.script, exercise) if args.script is not None else None
    resumed = resume_session(args.session, exercise)
    session = resumed.session
    sys.stderr.write(f"raceday: resumed {session.folder} at {session.clock_face}"
                     + (f" ({inert(resumed.note, one_line=True)})" if resumed.note else "") + "\n")
    if not resumed.finished:
        if script is not None:
            play_script_on(session, script)
        else:
            session.end()
    _write_debrief(session.folder)
    score = next(e for e in reversed(session.events) if isinstance(e, ScoreEvent))
    if args.json:
        result = {"exercise": exercise.id, "session": str(session.folder),
                  **score_to_json(score.score)}
        sys.stdout.write(json_text(result) + "\n")
    else:
        print_score(score.score, out, session.folder)
    return EXIT_OK


def _aar(args: argparse.Namespace, out: Console) -> int:
    """`raceday aar SESSION [edits]`: the hot wash's words into the after-action report."""
    from raceday.team.group import is_group
    from raceday.transcript.debrief.aar import NEWEST, AarChange
    from raceday.transcript.debrief.hotwash import aar_command

    if args.session.is_dir() and is_group(args.session):
        return _room_aar(args, out)
    # the rows an --action adds first, so --owner 1 (or --due 1) in the same call can fill in
    # the row it adds to a plan that had none
    changes: list[AarChange] = [AarChange("action", text) for text in args.action]
    for name in ("analysis", "recommendation", "issue", "owner", "start", "due"):
        for number, text in getattr(args, name):
            try:
                n = NEWEST if number == "new" else int(number)
            except ValueError:
                raise InputError([f"--{name} {number}: N is a number (`raceday aar "
                                  "SESSION` lists them) or new (the row --action adds)"]
                                 ) from None
            changes.append(AarChange(name, text, n))
    changes += [AarChange("note", text, at=args.at, by=args.by) for text in args.note]
    if args.evaluators is not None:
        changes.append(AarChange("evaluators", args.evaluators))
    for target, mark in args.mark:
        inject, _, number = target.rpartition(":")
        if not inject or not number.isdigit():
            raise InputError([f"--mark {target}: name the inject and its expected action as "
                              "INJECT:N (`raceday aar SESSION` lists them)"])
        changes.append(AarChange("mark", mark, int(number), inject=inject))
    lines: list[str] = []
    code = aar_command(args.session, changes, lines)
    for line in lines:
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    return code


def _room_aar(args: argparse.Namespace, out: Console) -> int:
    """`raceday aar GROUP`: the room's after-action report from every team's session."""
    from raceday.team.group import read_group
    from raceday.transcript.debrief.room_render import room_command

    info = read_group(args.session)
    edits = [f"--{name}" for name in ("action", "note", "analysis", "recommendation", "issue",
                                      "owner", "start", "due", "mark") if getattr(args, name)]
    edits += ["--evaluators"] if args.evaluators is not None else []
    if edits:
        first = info.teams[0][1] if info.teams else args.session
        raise InputError([f"{edits[0]}: a group's AAR is built from its teams' own; edit a "
                          f"team's (`raceday aar {first} {edits[0]} ...`), then run "
                          f"`raceday aar {args.session}` again"])
    lines: list[str] = []
    code = room_command(info.title or info.exercise, info.exercise, info.folder,
                        info.teams, lines)
    for line in lines:
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    return code


def _team(args: argparse.Namespace, out: Console) -> int:
    """`raceday host`, `join` and `watch`: team play across terminals."""
    import os

    if args.command == "host" and args.teams and (args.unknown or args.night):
        raise InputError(["--unknown with --teams: several teams on one clock play the night "
                          "the exercise tells (host each team's unknown night on its own)"])
    if args.command == "host" and args.headless:
        from raceday.team.start_host import host_headless

        return host_headless(args.exercise, args.seats, args.pace, args.speed,
                             args.transcripts, out, teams=args.teams, length=args.length,
                             lobby=not args.start_now, injects=args.injects,
                             unknown=args.unknown, night=args.night)
    from raceday.tui.team import start_team  # the TUI, imported only here

    if args.command == "host":
        return start_team.host_console(args.exercise, args.seats, args.pace, args.speed,
                                       args.transcripts, teams=args.teams, length=args.length,
                                       lobby=not args.start_now, injects=args.injects,
                                       unknown=args.unknown, night=args.night)
    if args.command == "join":
        token = args.token or os.environ.get("RACEDAY_TOKEN")
        if not token:
            raise InputError(["a seat needs its token: --token T (the host printed one per seat)"])
        return start_team.join(args.session, args.player, args.role, token, team=args.team)
    return start_team.watch(args.session, team=args.team)


def _serve(args: argparse.Namespace) -> int:
    """`raceday serve`: textual-serve, imported by web/browser_server.py only (the `[web]`
    extra)."""
    import os

    from raceday.web.browser_server import MAX_SESSIONS, Join, serve

    join = None
    if args.join is not None:
        tokens = args.tokens or [t for t in os.environ.get("RACEDAY_TOKENS", "").split(",") if t]
        if not tokens:
            raise InputError(["--join needs the seats' tokens: --token T once per seat (the "
                              "host printed one per seat) or RACEDAY_TOKENS=T1,T2,..."])
        if args.exercise is not None:
            raise InputError(["--join takes no exercise: the host chose it"])
        if not args.join.is_dir():
            raise InputError([f"{args.join}: no such session folder (the host printed it)"])
        join = Join(args.join, tuple(tokens), args.team)
    elif args.tokens or args.team:
        raise InputError(["--token and --team go with --join SESSION"])
    if join is not None and (args.unknown or args.night):
        raise InputError(["--unknown goes with the host (raceday host --unknown): a seat plays "
                          "the night the host drew"])
    night = (("--night", args.night) if args.night
             else ("--unknown",) if args.unknown else ())
    if args.max_sessions is not None and args.max_sessions < 0:
        raise InputError([f"--max-sessions {args.max_sessions}: give 0 (no limit) or more"])
    return serve(args.exercise, host=args.host, port=args.port, public_url=args.public_url,
                 transcripts=args.transcripts, join=join,
                 max_sessions=MAX_SESSIONS if args.max_sessions is None else args.max_sessions,
                 night=night)


def _run(args: argparse.Namespace, out: Console) -> int:

    from raceday.engine.headless import run_script
    from raceday.engine.load import load_named_exercise
    from raceday.engine.script import load_script
    from raceday.transcript.events import ScoreEvent

    if getattr(args, "team", False):
        return _run_team(args, out)
    exercise = load_named_exercise(args.exercise)
    script = load_script(args.script, exercise)
    db = getattr(args, "db", None)
    twin = _dialect_twin(args.script, db)
    if twin is not None:
        sys.stderr.write(twin + "\n")
    progress = _run_progress(exercise)
    try:
        session, result = run_script(exercise, script, args.transcripts, db=db, watch=progress,
                                     night=_drawn_night(args, exercise))
    finally:
        if progress is not None:
            progress.wipe()
    whole = session.log.broken is None and len(session.events) == session.log.seq
    _write_debrief(session.folder, session.events if whole else None)  # whole: none read back
    if args.json:
        sys.stdout.write(json_text(result) + "\n")
    else:
        from raceday.transcript.events import NightRevealed
        from raceday.transcript.render import print_score  # rich: not for --json

        score = next(e for e in reversed(session.events) if isinstance(e, ScoreEvent))
        night = next((e for e in session.events if isinstance(e, NightRevealed)), None)
        print_score(score.score, out, session.folder, night)
    return EXIT_OK


def _dialect_twin(script: pathlib.Path, db: str | None) -> str | None:
    """A line naming the script's twin for the database it is played on, when it has one: a
    play's guards are written in one dialect (`scripts/postgres/` holds the PostgreSQL
    twins), and the other database refuses them, so the play scores as unguarded there."""
    from raceday.store import chosen_db, is_postgres

    on_postgres = is_postgres(chosen_db(db))
    script = pathlib.Path(script)
    in_twins = script.parent.name == "postgres"
    if on_postgres == in_twins:
        return None
    twin = (script.parent.parent if in_twins else script.parent / "postgres") / script.name
    if not twin.is_file():
        return None
    here, there = ("PostgreSQL", "SQLite") if in_twins else ("SQLite", "PostgreSQL")
    return (f"raceday: {script} is written for {here}; its {there} twin is {twin} (played as "
            f"it is, its guards in {here}'s dialect will be refused)")


def _run_progress(exercise: Exercise) -> TerminalProgress | None:
    """How far the night has got, on stderr when it is a terminal (None: a pipe, a file)."""
    stream = getattr(sys.stderr, "raw", sys.stderr)  # the line is raceday's own: no `inert`
    if not stream.isatty():
        return None
    from raceday.engine.progress import NightProgress
    from raceday.terminal_progress import TerminalProgress

    return TerminalProgress(stream, NightProgress(exercise))


def _run_team(args: argparse.Namespace, out: Console) -> int:
    """`raceday run --team`: the script's seats play through a host (debrief included)."""

    from raceday.engine.load import load_named_exercise
    from raceday.engine.script import load_script
    from raceday.engine.unknown_night import night_json
    from raceday.team.script import run_team_script
    from raceday.transcript.events import NightRevealed, ScoreEvent, score_to_json
    from raceday.transcript.log import read_events
    from raceday.transcript.render import print_score

    exercise = load_named_exercise(args.exercise)
    from raceday.team.group_script import is_teams_file

    night = _drawn_night(args, exercise)
    if is_teams_file(args.script):  # several teams, one host: a leaderboard
        if night is not None:
            raise InputError(["--unknown with a teams file: several teams on one clock play "
                              "the night the exercise tells"])
        from raceday.team.start_host import run_teams_file

        return run_teams_file(exercise, args.script, args.transcripts, args.json, out)
    team = run_team_script(exercise, load_script(args.script, exercise), args.transcripts,
                           night=night)
    folder = team.host.folder
    events = read_events(folder).events
    score = next(e for e in reversed(events) if isinstance(e, ScoreEvent))
    told = next((e for e in events if isinstance(e, NightRevealed)), None)
    if args.json:
        result = {"exercise": exercise.id, "session": str(folder), **score_to_json(score.score)}
        said = night_json(events)
        if said is not None:  # an unknown night, as `raceday run --unknown` says it
            result["night"] = said
        sys.stdout.write(json_text(result) + "\n")
    else:
        print_score(score.score, out, folder, told)
    return EXIT_OK


def _write_debrief(folder: pathlib.Path, events: Sequence[Event] | None = None) -> None:
    """The session is saved whatever happens here; a debrief can be written again later.

    Any failure is a warning, not the command's: the score is decided and the transcript
    complete, so `raceday run` still prints them and exits 0. `events`: the session's own,
    all its transcript holds (None: read from the folder)."""
    from raceday.transcript.debrief.files import write_debrief

    try:
        write_debrief(folder, events)
    except Exception as exc:  # the debrief is a rendering; the session stands
        why = str(exc) if isinstance(exc, (RacedayError, OSError)) else repr(exc)
        sys.stderr.write(f"raceday: warning: debrief not written ({why}); "
                         f"`raceday debrief {folder}` writes it again\n")


if __name__ == "__main__":
    raise SystemExit(main())
