"""A host's loop without a console (`raceday host --headless`), for scripts, benchmarks and a
facilitator who runs the clock from the command line (Ctrl-C ends the session); and the join
lines every host says, console or not."""

from __future__ import annotations

import shlex
import signal
import threading
from collections.abc import Callable
from pathlib import Path

from raceday.team.group import Teams
from raceday.team.host import POLL_SECONDS, Host
from raceday.team.program import program
from raceday.transcript import events as ev
from raceday.transcript.render import describe

Say = Callable[[str], None]
_TOLD = (ev.SeatJoined, ev.SeatLeft, ev.CommandRefused, ev.Fault, ev.Restored, ev.Declaration,
         ev.TimelineEnd)  # SeatLost is a SeatLeft


def join_text(host: Host, group: Path | None = None) -> str:
    """What the host prints: where the session is and each seat's join command (for a team
    of a group: the group's folder and the team's name)."""
    if group is not None:
        group = group.resolve()
        lines = [f"Team {host.team} of {host.exercise.title}", f"  group folder: {group}",
                 "  join (one terminal per seat; hand each player their own line):"]
        lines += [f"    {line}" for line in host.join_lines(group)]
        lines.append(f"  projector:  {program()} watch {group} --team {host.team}")
        return "\n".join(lines)
    lines = [f"Team session of {host.exercise.title}",
             f"  session folder: {host.folder.resolve()}"]
    if host.meeting is not None:
        lines.append("  meeting on PostgreSQL: each seat's line carries a login of its own "
                     "(seats join from any machine that reaches the server)")
    lines.append("  join (one terminal per seat; hand each player their own line):")
    lines += [f"    {line}" for line in host.join_lines()]
    where = (shlex.quote(host.projector_address or host.where) if host.meeting is not None
             else shlex.quote(str(host.folder.resolve())))
    lines.append(f"  projector:  {program()} watch {where}")
    return "\n".join(lines)


JOIN_FILE = "join.txt"


def save_join_text(folder: Path, text: str) -> Path:
    """Keep the join lines in the session's (or group's) folder, readable by the host's user
    only (they hold the seats' tokens), to copy from rather than from a wrapped screen."""
    import os

    path = folder / JOIN_FILE
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        out.write(text + "\n")
    return path


def serve(host: Host, say: Say, stop: threading.Event, *, end_when_over: bool = True,
          announce: Callable[[], None] | None = None) -> ev.ScoreEvent:
    """Run a started host until `stop` is set or the night is over; then end and score.

    `announce` prints the join lines once Ctrl-C is heard: a Ctrl-C the moment they show
    ends and scores the session (it killed an unscored host, its seats left waiting)."""
    _hear_ctrl_c()
    session = host.need()
    try:
        session.subscribe(lambda event: _tell(event, say))
        if announce is not None:
            announce()
        while not stop.is_set() and not host.ended:
            if not host.pump():
                host.idle(stop, POLL_SECONDS)
            if host.in_lobby and _all_here([host]):
                host.start_clock()  # headless, the ready check is everyone having joined
                say(f"Every seat has joined: the clock runs at {host.live.speed:g}x.")
            if end_when_over and session.timeline_over:
                break
    except KeyboardInterrupt:  # the facilitator's Ctrl-C: end and score
        pass
    finally:
        if host.stopped is not None:  # the machine stopped it: closed, to be resumed
            host.close()
        elif not host.ended:
            reason = "the night is over" if session.timeline_over else "ended by the facilitator"
            score = host.end(reason)
        else:
            score = next(e for e in reversed(session.events) if isinstance(e, ev.ScoreEvent))
        host.close()
    return score


def _all_here(hosts: list[Host]) -> bool:
    return all(seat.player is not None for h in hosts for seat in h.seats.values())


def _hear_ctrl_c() -> None:
    """Ctrl-C (SIGINT) ends the session and scores it, as the host says: also when the host
    was started with SIGINT ignored, as a shell does for `raceday host --headless &` (the
    host would otherwise never end a turns-paced night)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)


def group_join_text(teams: Teams) -> str:
    """Where the group is, and each team's join commands (tokens are per team)."""
    folder = teams.folder.resolve() if teams.folder is not None else None
    lines = [f"{len(teams.hosts)} teams playing {teams.exercise.title} on one clock",
             f"  group folder: {folder}",
             "  join (one terminal per seat; hand each player their own team's line):"]
    lines += [f"    {line}" for line in teams.join_lines()]
    lines.append(f"  projector:  {program()} watch {folder} [--team NAME]  "
                 "(without --team: the leaderboard)")
    return "\n".join(lines)


def serve_teams(teams: Teams, say: Say, stop: threading.Event) -> dict[str, ev.ScoreEvent]:
    """Run a started group until `stop` or every team's night is over; end and score all."""
    _hear_ctrl_c()
    for name, host in teams.hosts.items():
        host.need().subscribe(_teller(say, f"[{name}] "))
    try:
        while not stop.is_set() and not teams.ended:
            if not teams.pump():
                stop.wait(POLL_SECONDS)
            if teams.in_lobby and _all_here(list(teams.hosts.values())):
                teams.start_clock()
                say(f"Every team's seats have joined: the clock runs at {teams.live.speed:g}x.")
            if all(h.need().timeline_over for h in teams.hosts.values()):
                break
    except KeyboardInterrupt:  # the facilitator's Ctrl-C: end and score every team
        pass
    finally:
        over = all(h.need().timeline_over for h in teams.hosts.values())
        scores = teams.end("the night is over" if over else "ended by the facilitator")
        teams.close()
    return scores


def _teller(say: Say, prefix: str) -> Callable[[ev.Event], None]:
    return lambda event: _tell(event, say, prefix)


def _tell(event: ev.Event, say: Say, prefix: str = "") -> None:
    if isinstance(event, ev.SeatLost):
        say(f"{prefix}{event.sim_time}  SEAT LOST: {event.player} at seat {event.seat} "
            f"({event.role}), silent for {event.silent_seconds} s")
    elif isinstance(event, _TOLD):
        say(f"{prefix}{event.sim_time}  {describe(event)}")
