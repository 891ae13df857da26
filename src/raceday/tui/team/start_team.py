"""Starting the team screens: `raceday host` (the console), `join` (a seat, `SeatApp`) and
`watch`, and a team session resumed at its console."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from textual import events

from raceday.engine.clock import Pace
from raceday.inert import has_controls, inert
from raceday.team.client import Client, View
from raceday.tui.app import RacedayApp, run_app
from raceday.tui.settings import Settings

MAX_PLAYER = 40  # as the host keeps a player's name


class SeatApp(RacedayApp):
    """A player's app: straight to the seat's play screen (the host did the briefing)."""

    CSS_PATH = str(Path(__file__).parent.parent / "app.tcss")

    def __init__(self, client: Client, settings: Settings, *, host_gone_closes: bool = False,
                 ask_name: bool = False, **kwargs: Any) -> None:
        from raceday.engine.load import load_named_exercise

        exercise = load_named_exercise(client.meta["exercise"])
        super().__init__(exercise, settings=settings, **kwargs)
        self.client = client
        self.host_gone_closes = host_gone_closes
        """A browser's seat (`raceday serve --join`): nobody there can run a new join line, so
        a host that stops answering (or restarted, with new tokens) closes the seat, and its
        page says the session ended, instead of a screen waiting for a host that is gone."""
        self.closed_why: str | None = None
        """Why the seat closed itself (its host gone), for the line `join` prints."""
        self.ask_name = ask_name
        """A browser's seat: its player is asked their name before the seat is taken (the
        others see it, the transcript and the AAR keep it)."""
        self.sub_title = f"{client.player} at seat {client.seat} ({client.role})"

    def _on_mount(self, event: events.Mount) -> None:
        event.prevent_default()  # RacedayApp's on_mount would open the briefing
        self._check_size(self.size.width, self.size.height)
        if not self.ask_name:
            self._take_seat()
            return
        from raceday.tui.team.console_dialogs import NoteDialog

        self.push_screen(NoteDialog(f"Your name, for seat {self.client.seat} "
                                    f"({self.client.role}): the others see it"), self._named)

    def _named(self, name: str | None) -> None:
        cleaned = " ".join((name or "").split())[:MAX_PLAYER]
        if cleaned and not has_controls(cleaned, one_line=True):
            self.client.player = cleaned
        self.sub_title = f"{self.client.player} at seat {self.client.seat} ({self.client.role})"
        self._take_seat()

    def _take_seat(self) -> None:
        from raceday.tui.team.seat_screen import SeatScreen

        assert self.exercise is not None
        self.push_screen(SeatScreen(self.exercise, self.client, self.settings))


def seat_settings(client: Client) -> Settings:
    clock = client.clock()
    return Settings(mode="team", pace=Pace(client.meta.get("pace", "live")), speed=clock.speed,
                    transcripts=client.folder.parent)


def join(session: Path | str, player: str, role: str | None, token: str,
         team: str | None = None, *, host_gone_closes: bool = False,
         ask_name: bool = False) -> int:
    from raceday.team.client import TeamError
    from raceday.team.group import is_group, read_group, team_of_token, team_session

    # a str is a PostgreSQL session's address (raceday join postgresql://…?session=ID)
    folder = session if isinstance(session, str) else team_session(session, team)
    try:
        client = Client(folder, token, player, role)
    except TeamError:
        owner = (team_of_token(read_group(session), token)
                 if isinstance(session, Path) and is_group(session) else None)
        if owner is not None and owner != team:
            raise TeamError(f"that token is for a seat of team {owner}, not team {team}: "
                            "a player plays in their own team's world") from None
        raise
    if client.ended:
        client.close()
        sys.stderr.write(f"raceday: the session in {session} is over; "
                         f"`raceday debrief {session}` shows how it went\n")
        return 2
    try:
        app = SeatApp(client, seat_settings(client), host_gone_closes=host_gone_closes,
                      ask_name=ask_name)
        code = run_app(app)
        if app.closed_why is not None:
            sys.stderr.write(inert(f"raceday: {app.closed_why}", one_line=True) + "\n")
        return code
    finally:
        client.close()


def watch(session: Path | str, team: str | None = None) -> int:
    from raceday.team.group import is_group, read_group, team_session
    from raceday.tui.team.watch import run_watch

    if isinstance(session, str):  # a PostgreSQL session's address
        return run_watch(View(session))
    if is_group(session) and team is None:
        from raceday.tui.team.leaderboard import run_leaderboard

        return run_leaderboard(read_group(session))
    return run_watch(View(team_session(session, team)))


def host_console(exercise: str, seats: str | None, pace: str, speed: float | None,
                 transcripts: Path, teams: str | None = None, *, length: float | None = None,
                 lobby: bool = False, injects: Path | None = None, unknown: bool = False,
                 night: str | None = None) -> int:
    from raceday.team.host_loop import join_text, save_join_text
    from raceday.team.start_host import build_host
    from raceday.tui.team.console_app import ConsoleApp

    if teams is not None:
        return _host_teams_console(exercise, seats, teams, pace, speed, transcripts,
                                   length=length, lobby=lobby, injects=injects)
    host = build_host(exercise, seats, pace, speed, transcripts, length=length, lobby=lobby,
                      injects=injects, unknown=unknown, night=night)
    host.start()
    info = join_text(host)
    save_join_text(host.folder, info)
    sys.stdout.write(info + "\n")
    if host.night is not None:  # the facilitator's terminal only: no file, no seat
        from raceday.engine.unknown_night import facilitator_night_line

        sys.stdout.write(facilitator_night_line(host.night) + "\n")
    try:
        result: Any = ConsoleApp(host).run()
    finally:
        host.close()
    sys.stdout.write(info + "\n" if not host.ended else f"Session saved in {host.folder}\n")
    return int(result) if isinstance(result, int) else 0


def _host_teams_console(exercise: str, seats: str | None, teams: str, pace: str,
                        speed: float | None, transcripts: Path, *, length: float | None = None,
                        lobby: bool = False, injects: Path | None = None) -> int:
    from raceday.team.group import read_group
    from raceday.team.host_loop import group_join_text, save_join_text
    from raceday.team.leaderboard import leaderboard_lines, standings
    from raceday.team.start_host import build_teams
    from raceday.tui.team.console_app import GroupConsoleApp

    group = build_teams(exercise, seats, teams, pace, speed, transcripts, length=length,
                        lobby=lobby, injects=injects)
    folder = group.start()
    info = group_join_text(group)
    save_join_text(folder, info)
    sys.stdout.write(info + "\n")
    try:
        result: Any = GroupConsoleApp(group).run()
    finally:
        group.close()
    if group.ended:
        sys.stdout.write("Leaderboard\n" + "\n".join(
            leaderboard_lines(standings(read_group(folder)))) + f"\nTeams saved in {folder}\n")
    else:
        sys.stdout.write(info + "\n")
    return int(result) if isinstance(result, int) else 0


def resume_console(folder: Path, exercise: str | None = None,
                   speed: float | None = None) -> int:
    """`raceday resume DIR` on a team session: the host comes back with its console; every
    seat joins again with the new join lines printed here."""
    from raceday.team.host_loop import join_text, save_join_text
    from raceday.team.start_host import resumed_host
    from raceday.tui.team.console_app import ConsoleApp

    host = resumed_host(folder, exercise, speed)
    info = join_text(host)
    save_join_text(host.folder, info)
    sys.stdout.write(f"Resumed at {host.need().clock_face}: every seat joins again.\n"
                     + info + "\n")
    try:
        result: Any = ConsoleApp(host).run()
    finally:
        host.close()
    sys.stdout.write(info + "\n" if not host.ended else f"Session saved in {host.folder}\n")
    return int(result) if isinstance(result, int) else 0
