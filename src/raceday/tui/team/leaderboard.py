"""The leaderboard of a group of teams, on the facilitator's console and on the projector
(`raceday watch GROUP`): every team's standing, read from the teams' transcripts in a thread
worker, ranked once they are scored."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static
from textual.worker import get_current_worker

from raceday.inert import inert
from raceday.team.group import GroupInfo
from raceday.team.leaderboard import Standing, leaderboard_lines, standings
from raceday.tui.notify import InertNotifications
from raceday.tui.widgets.footer import SteadyFooter

REFRESH_SECONDS = 1.0

LEADERBOARD_CSS = """
#leaderboard-header { dock: top; height: 2; padding: 0 2; background: $panel; }
#leaderboard-table { padding: 1 2; border: round $success 50%; height: auto; }
"""


@dataclass
class Standings(Message):
    rows: list[Standing]


class LeaderboardScreen(Screen[None]):
    """Reads the group's standings every second; writes nothing."""

    DEFAULT_CSS = LEADERBOARD_CSS

    def __init__(self, group: GroupInfo, *, bindings: str = "") -> None:
        super().__init__()
        self.group = group
        self.rows: list[Standing] = []
        self.keys_text = bindings

    def compose(self) -> ComposeResult:
        yield Static("", id="leaderboard-header")
        yield Static("", id="leaderboard-table")
        yield SteadyFooter(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one("#leaderboard-table", Static).border_title = "Leaderboard"
        self._show()
        self.run_worker(self._follow, thread=True, group="leaderboard", exit_on_error=False,
                        description="raceday: read the teams' standings")

    def _follow(self) -> None:
        worker = get_current_worker()
        while not worker.is_cancelled:
            self.post_message(Standings(standings(self.group)))
            time.sleep(REFRESH_SECONDS)

    @on(Standings)
    def _standings(self, message: Standings) -> None:
        if message.rows != self.rows:
            self.rows = message.rows
            self._show()

    @property
    def all_scored(self) -> bool:
        return bool(self.rows) and all(r.ended for r in self.rows)

    def _show(self) -> None:
        header = Text()
        header.append(f" {inert(self.group.title, one_line=True)} ", style="bold reverse")
        scored = sum(1 for r in self.rows if r.ended)
        playing = [r for r in self.rows if not r.ended and r.clock]
        if playing:
            header.append(f"  {playing[0].clock} ", style="bold reverse")
        header.append(f"  {len(self.group.teams)} teams, {scored} scored", style="bold")
        if self.all_scored:
            header.append("  ■ every team is scored", style="bold green")
        if self.keys_text:
            header.append(f"\n {self.keys_text}", style="dim")
        self.query_one("#leaderboard-header", Static).update(header)
        table = Text()
        lines = leaderboard_lines(self.rows) if self.rows else ["reading the teams…"]
        for n, line in enumerate(lines):
            style = "bold" if n == 0 else ("bold green" if line.startswith(" 1.") else "")
            table.append(line + "\n", style=style)
        self.query_one("#leaderboard-table", Static).update(table)


class LeaderboardApp(InertNotifications):
    """`raceday watch GROUP`: the room's leaderboard."""

    TITLE = "raceday watch"
    BINDINGS = [Binding("q", "quit", "Quit")]

    def __init__(self, group: GroupInfo) -> None:
        super().__init__()
        self.group = group

    def on_mount(self) -> None:
        self.push_screen(LeaderboardScreen(self.group, bindings="q quits; "
                                           "raceday watch GROUP --team NAME shows one team"))


def run_leaderboard(group: GroupInfo) -> int:
    result: Any = LeaderboardApp(group).run()
    return int(result) if isinstance(result, int) else 0
