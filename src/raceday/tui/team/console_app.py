"""The facilitator's console apps: `raceday host`'s (one team: its console screen) and a
group's (several teams: a console screen per team, t moves on, l the leaderboard, one clock
for all). Each runs the host (or the group's hosts) in a thread of its own; the screens
reach it through their runners (`console_runner.py`)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

from textual import on
from textual.binding import Binding
from textual.message import Message
from textual.worker import get_current_worker

from raceday.inert import inert
from raceday.team.client import View
from raceday.team.group import Teams, read_group
from raceday.team.host import Host
from raceday.transcript import events as ev
from raceday.tui.notify import InertNotifications
from raceday.tui.team.console import ConsoleScreen
from raceday.tui.team.console_runner import FOLLOW_SECONDS

CONSOLE_CSS = """
#console-header { dock: top; height: 1; background: $panel; }
#console-body { height: 1fr; }
#console-main { width: 3fr; }
#console-seats { height: auto; max-height: 16; padding: 0 1; border: round $primary 40%; }
#console-feed, #console-feed-shared { height: 1fr; border: round $primary 40%; }
#console-feed-shared { display: none; }
#console-private { width: 2fr; border-left: vkey $error 50%; }
#console-world, #console-verdicts, #console-key { height: auto; padding: 0 1; }
#console-verdicts { border: round $error 50%; }
#console-key { border: round $warning 50%; }
"""


class ConsoleApp(InertNotifications):
    CSS = CONSOLE_CSS
    CSS_PATH = str(Path(__file__).parent.parent / "app.tcss")
    TITLE = "raceday host"
    BINDINGS = [Binding("ctrl+q", "quit", "Quit", priority=True)]

    def __init__(self, host: Host, *, run_host: bool = True) -> None:
        super().__init__()
        self.host = host
        self.run_host = run_host
        self.stop = threading.Event()
        self._thread: threading.Thread | None = None

    def on_mount(self) -> None:
        if self.run_host:
            self._thread = threading.Thread(target=self.host.run, args=(self.stop,),
                                            name="raceday-host", daemon=True)
            self._thread.start()
        self.push_screen(ConsoleScreen(self.host, View(self.host.folder)))

    async def action_quit(self) -> None:
        screen = self.screen
        if isinstance(screen, ConsoleScreen):
            screen.request_quit()
            return
        self.exit(0)

    def on_unmount(self) -> None:
        self.stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)


LEADERBOARD = "leaderboard"
GROUP_NEWS = (ev.SeatLost, ev.SeatJoined, ev.ScoreEvent)


@dataclass
class TeamNews(Message):
    """Something every team's facilitator should hear of, whichever console is open."""

    team: str
    event: ev.Event


class GroupConsoleApp(InertNotifications):
    """The facilitator's console for several teams: one console screen per team (t moves on),
    the leaderboard (l), one clock for all."""

    CSS = CONSOLE_CSS
    CSS_PATH = str(Path(__file__).parent.parent / "app.tcss")
    TITLE = "raceday host"
    BINDINGS = [Binding("ctrl+q", "quit", "Quit", priority=True),
                Binding("t", "next_team", "Next team"),
                Binding("l", "leaderboard", "Leaderboard")]

    def __init__(self, group: Teams, *, run_host: bool = True) -> None:
        super().__init__()
        self.group = group
        self.run_host = run_host
        self.stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.current = 0
        self._shown_scored = False

    def on_mount(self) -> None:
        from raceday.tui.team.leaderboard import LeaderboardScreen

        group = self.group
        if self.run_host:
            self._thread = threading.Thread(target=group.run, args=(self.stop,),
                                            name="raceday-teams", daemon=True)
            self._thread.start()
        assert group.folder is not None
        self.install_screen(LeaderboardScreen(read_group(group.folder),
                                              bindings="t: back to a team's console"),
                            LEADERBOARD)
        for name, host in group.hosts.items():
            self.install_screen(ConsoleScreen(host, View(host.folder), group), f"team-{name}")
        self.push_screen(f"team-{next(iter(group.hosts))}")
        self.run_worker(self._follow_teams, thread=True, group="teams", exit_on_error=False,
                        description="raceday: hear every team's seats and scores")

    def _follow_teams(self) -> None:
        """One reader for all teams: a seat lost or a team scored anywhere is heard here, as a
        team's console is only reading while it has been opened."""
        worker = get_current_worker()
        views = {name: View(host.folder) for name, host in self.group.hosts.items()}
        try:
            while not worker.is_cancelled:
                quiet = True
                for name, view in views.items():
                    if not view.changed():
                        continue
                    quiet = False
                    for event in view.new_events():
                        if isinstance(event, GROUP_NEWS):
                            self.post_message(TeamNews(name, event))
                if quiet:
                    time.sleep(FOLLOW_SECONDS * 4)
        finally:
            for view in views.values():
                view.close()

    @on(ConsoleScreen.EveryTeamScored)
    def _every_team_scored(self) -> None:
        self.all_scored()

    @on(TeamNews)
    def _team_news(self, message: TeamNews) -> None:
        event, team = message.event, inert(message.team, one_line=True)
        if isinstance(event, ev.SeatLost):
            self.notify(f"team {team}: {inert(event.player, one_line=True)} at seat "
                        f"{inert(event.seat)}: no heartbeat for {event.silent_seconds} s",
                        title="Seat lost", severity="warning")
        elif isinstance(event, ev.SeatJoined) and event.rejoin:
            self.notify(f"team {team}: {inert(event.player, one_line=True)} is back at seat "
                        f"{inert(event.seat)}", title="Seat back")
        elif isinstance(event, ev.ScoreEvent) and self.group.ended:
            self.all_scored()

    def action_next_team(self) -> None:
        names = list(self.group.hosts)
        if isinstance(self.screen, ConsoleScreen):
            self.current = (self.current + 1) % len(names)
        self.switch_screen(f"team-{names[self.current]}")

    def action_leaderboard(self) -> None:
        self.switch_screen(LEADERBOARD)

    def all_scored(self) -> None:
        """Every team is scored (whichever team's console heard it last): the leaderboard."""
        if self._shown_scored:
            return
        self._shown_scored = True
        while len(self.screen_stack) > 2:  # a dialog left open on a team's console
            self.pop_screen()
        self.switch_screen(LEADERBOARD)

    async def action_quit(self) -> None:
        screen = self.screen
        if isinstance(screen, ConsoleScreen) and not self.group.ended:
            screen.request_quit()
            return
        if not self.group.ended:
            self.switch_screen(f"team-{list(self.group.hosts)[self.current]}")
            return
        self.exit(0)

    def on_unmount(self) -> None:
        self.stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
