"""Several teams, one facilitator: each team plays the same exercise in its own world and
transcript, on one clock, hosted in one thread.

A group is a folder: `teams.json` names the teams and where each team's session folder is
(an ordinary team session, with its own session.db, seats and tokens). A player joins their
team's session; nothing of one team's world is reachable from another's seat. Every
command is signed with its team's name, so a row copied into another team's session.db is
refused, and the group names the team whose seat signed it in the refusal it records.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from raceday.engine.clock import LiveClock, Pace
from raceday.engine.session import Session, SessionError
from raceday.errors import RacedayError
from raceday.exercise.model import Exercise
from raceday.store.team_db import SESSION_DB, CommandRow
from raceday.team.host import HEARTBEAT_TIMEOUT_S, POLL_SECONDS, Host
from raceday.team.inject_file import PreparedInject
from raceday.team.seats import SeatSpec, verify
from raceday.textfile import UnreadableText, read_text
from raceday.transcript import events as ev
from raceday.transcript.log import session_folder

_log = logging.getLogger(__name__)

GROUP_FILE = "teams.json"
MAX_TEAMS = 12


class GroupError(RacedayError):
    """A group folder that is not one, a team it does not have."""


@dataclass(frozen=True)
class TeamSpec:
    """A team the facilitator hosts: its name and its seats."""

    name: str
    seats: tuple[SeatSpec, ...]


@dataclass(frozen=True)
class GroupInfo:
    """What `teams.json` says: the exercise and each team's session folder."""

    folder: Path
    exercise: str
    title: str
    teams: tuple[tuple[str, Path], ...]

    def team_folder(self, name: str) -> Path:
        for team, folder in self.teams:
            if team == name:
                return folder
        raise GroupError(f"{self.folder}: no team {name!r} (teams: "
                         f"{', '.join(t for t, _ in self.teams)})")


def team_names(text: str) -> list[str]:
    """`red,blue` -> ['red', 'blue'], each a plain name a shell and a folder can hold."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    for name in names:
        if not name.replace("-", "").replace("_", "").isalnum() or len(name) > 24:
            raise GroupError(f"--teams: {name!r} is not a team name (letters, digits, - and _)")
    if len(set(names)) != len(names):
        raise GroupError("--teams: two teams have the same name")
    if not 1 <= len(names) <= MAX_TEAMS:
        raise GroupError(f"--teams: between 1 and {MAX_TEAMS} teams")
    return names


def is_group(path: Path) -> bool:
    return (path / GROUP_FILE).is_file()


def read_group(path: Path) -> GroupInfo:
    """The group in a folder (or its teams.json), or a one-line `GroupError`."""
    file = path / GROUP_FILE if path.is_dir() else path
    try:
        data = json.loads(read_text(file))
        teams = tuple((str(t["name"]), file.parent / str(t["folder"])) for t in data["teams"])
        return GroupInfo(file.parent, str(data["exercise"]), str(data.get("title", "")), teams)
    except (OSError, UnreadableText) as exc:
        raise GroupError(f"{file}: cannot read the group of teams ({exc})") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise GroupError(f"{file}: not a raceday group of teams ({exc!r})") from None


class Teams:
    """Hosts several teams: one clock (shared by every host), one thread that pumps them all,
    the facilitator's clock keys applied to every team at once."""

    def __init__(self, exercise: Exercise, teams: Sequence[TeamSpec], *,
                 exercise_ref: str | None = None, transcripts: Path = Path("transcripts"),
                 pace: Pace = Pace.LIVE, speed: float = 60.0,
                 wall: Callable[[], float] = time.monotonic,
                 tokens: dict[str, dict[str, str]] | None = None,
                 heartbeat_timeout_s: float = HEARTBEAT_TIMEOUT_S, lobby: bool = False) -> None:
        names = [t.name for t in teams]
        if not teams or len(set(names)) != len(names):
            raise SessionError("a group needs teams with different names")
        self.exercise = exercise
        self.exercise_ref = exercise_ref or exercise.id
        self.transcripts = transcripts
        self.pace = pace
        self.wall = wall
        self.live = LiveClock(speed=speed)
        self.folder: Path | None = None
        self.hosts: dict[str, Host] = {}
        self._specs = list(teams)
        self._tokens = tokens or {}
        self._heartbeat_timeout_s = heartbeat_timeout_s
        self.in_lobby = lobby and pace is Pace.LIVE
        self.prepared: tuple[tuple[PreparedInject, ...], str] | None = None
        """The facilitator's prepared injects (`--injects`): every team's list gets them."""

    @property
    def ended(self) -> bool:
        return bool(self.hosts) and all(h.ended for h in self.hosts.values())

    def host(self, team: str) -> Host:
        try:
            return self.hosts[team]
        except KeyError:
            raise GroupError(f"no team {team!r} (teams: {', '.join(self.hosts)})") from None

    def start(self) -> Path:
        """Open every team's world and transcript under one group folder; start the clock."""
        folder = session_folder(self.transcripts, f"{self.exercise.id}-teams")
        self.folder = folder
        for spec in self._specs:
            host = Host(self.exercise, spec.seats, exercise_ref=self.exercise_ref,
                        transcripts=folder / spec.name, pace=self.pace, wall=self.wall,
                        tokens=self._tokens.get(spec.name), live=self.live, team=spec.name,
                        foreign=self._signed_elsewhere(spec.name),
                        heartbeat_timeout_s=self._heartbeat_timeout_s, lobby=self.in_lobby)
            host.prepared = self.prepared
            host.start()
            self.hosts[spec.name] = host
        if self.pace is Pace.LIVE and not self.in_lobby:
            self.live.start(self.wall(), 0)
        (folder / GROUP_FILE).write_text(json.dumps({
            "exercise": self.exercise_ref, "title": self.exercise.title,
            "teams": [{"name": name, "folder": str(h.folder.relative_to(folder))}
                      for name, h in self.hosts.items()],
        }, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        _log.info("group of %d teams hosted in %s", len(self.hosts), folder)
        return folder

    def _signed_elsewhere(self, team: str) -> Callable[[CommandRow], str | None]:
        """For `team`'s host: which other team's seat signed a command it cannot verify."""

        def who(row: CommandRow) -> str | None:
            for name, host in self.hosts.items():
                if name == team:
                    continue
                for seat in host.seats.values():
                    if verify(seat.token, row.seat, row.nonce, row.kind, row.payload, row.mac,
                              name):
                        return f"team {name}'s seat {seat.name}"
            return None

        return who

    def join_lines(self) -> list[str]:
        lines: list[str] = []
        for name, host in self.hosts.items():
            lines.append(f"team {name}:")
            lines += [f"  {line}" for line in host.join_lines(self.folder)]
        return lines

    # -- the loop ----------------------------------------------------------------------

    def pump(self) -> int:
        return sum(host.pump() for host in self.hosts.values())

    def run(self, stop: threading.Event, poll: float = POLL_SECONDS) -> None:
        while not stop.is_set() and not self.ended:
            if not self.pump():
                stop.wait(poll)

    # -- the facilitator's clock, for every team at once --------------------------------

    def _playing(self) -> list[Host]:
        return [h for h in self.hosts.values() if not h.ended]

    def start_clock(self) -> bool:
        """Leave the lobby: every team's night starts at once (False: it had started)."""
        if not self.in_lobby:
            return False
        self.in_lobby = False
        for host in self._playing():
            host.start_clock()  # records who was there; the shared clock is started here
        self.live.start(self.wall(), 0)
        return True

    def pause(self) -> None:
        if self.in_lobby or self.live.paused:
            return
        self.live.pause(self.wall())
        for host in self._playing():
            host.facilitated("pause")

    def resume(self) -> None:
        if self.start_clock() or not self.live.paused:
            return
        self.live.resume(self.wall())
        for host in self._playing():
            host.facilitated("resume")

    def set_speed(self, speed: float) -> None:
        if speed <= 0:
            raise SessionError(f"a speed must be above 0, not {speed:g}")
        self.live.set_speed(speed, self.wall())
        for host in self._playing():
            host.set_speed(speed)  # records it (a team's host does not own the clock)

    def advance_to(self, minute: int) -> None:
        for host in self.hosts.values():
            if not host.ended:
                host.advance_to(minute)

    def skip(self) -> None:
        """Every team's clock to the next inject any team hears: the next timed one, or
        sooner one a fault brings on the way (teams' worlds differ, so may their alarms), or
        sooner still the next time any team's seat has a task fall due."""
        if self.in_lobby:
            raise SessionError("the clock is held in the lobby: start it first")
        hosts = self._playing()
        sessions = [h.need() for h in hosts]
        if not sessions:
            return
        upcoming = [m for s in sessions if (m := s.next_inject_minute()) is not None]
        target = min(upcoming) if upcoming else max(s.end_minute for s in sessions)
        why = "the next inject"
        for host in hosts:
            at, because = host.next_stop()
            if at is not None and at < target:
                target, why = at, f"team {host.team}: {because}"
        for host in hosts:
            host.facilitated("skip", detail=why)
        heard = [s.injects_heard for s in sessions]
        minute = min(s.minute for s in sessions)
        while minute < target and heard == [s.injects_heard for s in sessions]:
            minute += 1
            self.advance_to(minute)

    def end(self, reason: str = "ended by the facilitator") -> dict[str, ev.ScoreEvent]:
        return {name: (h.end(reason) if not h.ended else _score_of(h.need()))
                for name, h in self.hosts.items()}

    def close(self) -> None:
        for host in self.hosts.values():
            host.close()


def _score_of(session: Session) -> ev.ScoreEvent:
    return next(e for e in reversed(session.events) if isinstance(e, ev.ScoreEvent))


def team_session(path: Path, team: str | None) -> Path:
    """The session folder a join or a watch means: a group's team, or the folder itself."""
    if is_group(path):
        info = read_group(path)
        if team is None:
            raise GroupError(f"{path} hosts teams {', '.join(t for t, _ in info.teams)}: "
                             "name yours with --team NAME")
        return info.team_folder(team)
    if team is not None:
        if not (path / SESSION_DB).is_file():
            raise GroupError(f"{path}: no group of teams here (no {GROUP_FILE})")
        from raceday.store.session_db import SessionDb

        db = SessionDb.open(path / SESSION_DB)
        try:
            its = db.meta().get("team")
        finally:
            db.close()
        if its != team:
            raise GroupError(f"{path} is " + (f"team {its}'s session, not team {team}'s" if its
                                              else "one team's session: leave out --team"))
    return path


def team_of_token(info: GroupInfo, token: str) -> str | None:
    """Which team of the group a seat token belongs to (to say so when it is used at another)."""
    from raceday.store.session_db import SessionDb
    from raceday.team.seats import token_hash

    wanted = token_hash(token)
    for name, folder in info.teams:
        try:
            db = SessionDb.open(folder / SESSION_DB)
        except RacedayError:
            continue
        try:
            if any(seat.token_hash == wanted for seat in db.seats()):
                return name
        finally:
            db.close()
    return None
