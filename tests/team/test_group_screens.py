"""The facilitator's console with several teams (Pilot): one console per team, a lost seat
shown, the leaderboard at the end; and the projector's leaderboard."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from team_fixtures import SEATS, until
from test_screens import text_of
from textual.widgets import Static

from raceday.engine.clock import Pace
from raceday.exercise.model import Exercise
from raceday.team.client import Client
from raceday.team.group import Teams, TeamSpec, read_group
from raceday.team.seats import seats_from_roles
from raceday.transcript import events as ev
from raceday.transcript.log import of_kind, read_events
from raceday.tui.team.console import ConsoleScreen
from raceday.tui.team.console_app import LEADERBOARD, GroupConsoleApp
from raceday.tui.team.leaderboard import LeaderboardApp, LeaderboardScreen

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
pytestmark = pytest.mark.tui


def ranked(board: str) -> set[str]:
    """The teams the leaderboard gives a place (tied teams share one)."""
    return {m.group(1) for m in re.finditer(r"^\s*\d+\. (\w+)", board, re.MULTILINE)}


@pytest.fixture
def group(flagship: Exercise, tmp_path: Path) -> Iterator[Teams]:
    teams = Teams(flagship, [TeamSpec("red", tuple(seats_from_roles(SEATS))),
                             TeamSpec("blue", tuple(seats_from_roles(SEATS)))],
                  transcripts=tmp_path / "t", pace=Pace.TURNS, heartbeat_timeout_s=0.6)
    teams.start()
    yield teams
    teams.close()


async def test_the_console_shows_each_team_a_lost_seat_and_the_leaderboard(group: Teams) -> None:
    red, blue = group.host("red"), group.host("blue")
    app = GroupConsoleApp(group)  # pumps every team in its own thread, as `raceday host` does
    async with app.run_test(size=(150, 44)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ConsoleScreen))
        rita = Client(blue.folder, blue.seats["responder"].token, "Rita")
        rita.wait(rita.join(beat=0.2))  # then her terminal dies: no beat ever comes
        ana = Client(red.folder, red.seats["enactor-a"].token, "Ana")
        ana.wait(ana.join())
        first = app.screen
        assert isinstance(first, ConsoleScreen) and first.host is red
        await until(pilot, lambda: first.seated["enactor-a"][1:] == ("Ana", "joined"))
        assert "team red (1/2)" in text_of(first.query_one("#console-header", Static))
        await pilot.press("t")
        second = app.screen
        assert isinstance(second, ConsoleScreen) and second.host is blue
        await until(pilot, lambda: second.seated["responder"][2] == "LOST", timeout=15)
        assert "SEAT LOST" in text_of(second.query_one("#console-verdicts", Static))
        assert "Ana" not in str(second.seated)  # red's player is not at blue's table
        [gone] = of_kind(read_events(blue.folder).events, ev.SeatLost)
        assert gone.player == "Rita"
        await pilot.press("t")  # back to red, which is scored first: blue's scoring ends it
        assert app.screen is first
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("enter")  # "End and score": every team
        await until(pilot, lambda: group.ended, timeout=60)
        await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen)
                    and app.screen.all_scored, timeout=20)
        board = app.screen
        assert isinstance(board, LeaderboardScreen)
        shown = text_of(board.query_one("#leaderboard-table", Static))
        assert ranked(shown) == {"red", "blue"}
        assert app.get_screen(LEADERBOARD) is board
        rita.close()
        ana.close()


async def test_the_projector_leaderboard_says_who_plays_then_ranks(group: Teams) -> None:
    red = group.host("red")
    ana = Client(red.folder, red.seats["enactor-a"].token, "Ana")
    command = ana.join()
    group.pump()
    ana.wait(command)
    assert group.folder is not None
    app = LeaderboardApp(read_group(group.folder))
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen)
                    and bool(app.screen.rows))
        board = app.screen
        assert isinstance(board, LeaderboardScreen)
        shown = text_of(board.query_one("#leaderboard-table", Static))
        assert "playing" in shown and "Ana" in shown and ranked(shown) == set()
        group.end()
        await until(pilot, lambda: board.all_scored, timeout=20)
        shown = text_of(board.query_one("#leaderboard-table", Static))
        assert ranked(shown) == {"red", "blue"}
    ana.close()


async def test_the_projector_of_one_team_names_it_and_shows_its_world_only(group: Teams) -> None:
    from raceday.team.client import View
    from raceday.team.group import team_session
    from raceday.tui.team.watch import WatchApp, WatchScreen

    red, blue = group.host("red"), group.host("blue")
    for host, player in ((red, "Ana"), (blue, "Bea")):
        client = Client(host.folder, host.seats["enactor-a"].token, player)
        command = client.join()
        group.pump()
        client.wait(command)
        client.close()
    assert group.folder is not None
    app = WatchApp(View(team_session(group.folder, "blue")))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, WatchScreen)
                    and bool(app.screen.seated))
        screen = app.screen
        assert isinstance(screen, WatchScreen)
        header = text_of(screen.query_one("#watch-header", Static))
        assert "team blue" in header and "Bea (enactor-a)" in header and "Ana" not in header


async def test_the_leaderboard_comes_when_every_team_is_scored_even_teams_never_opened(
        group: Teams) -> None:
    app = GroupConsoleApp(group)
    async with app.run_test(size=(150, 44)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ConsoleScreen))
        first = app.screen
        assert isinstance(first, ConsoleScreen) and first.host is group.host("red")
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen)
                    and app.screen.all_scored, timeout=60)
        board = app.screen
        assert isinstance(board, LeaderboardScreen)
        assert ranked(text_of(board.query_one("#leaderboard-table", Static))) == {"red", "blue"}


async def test_the_fault_step_key_asks_which_team_and_holds_only_that_one(group: Teams) -> None:
    """With several teams, f names the teams (this console's marked) and every team; the
    hold goes to the team chosen, recorded in its transcript alone."""
    from raceday.tui.screens.dialogs import ChoiceDialog

    red, blue = group.host("red"), group.host("blue")
    task = red.fault_task()
    assert task is not None
    app = GroupConsoleApp(group)
    async with app.run_test(size=(150, 44)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ConsoleScreen))
        console = app.screen
        assert isinstance(console, ConsoleScreen) and console.host is red
        await pilot.press("f")
        await until(pilot, lambda: isinstance(app.screen, ChoiceDialog))
        dialog = app.screen
        assert isinstance(dialog, ChoiceDialog)
        words = str([label for _, label in dialog.options])
        assert "team red (this console): hold its fault step" in words
        assert "team blue: hold its fault step" in words and "every team" in words
        await pilot.press("down", "enter")  # blue
        await until(pilot, lambda: task in blue.need().held)
        assert task not in red.need().held
        await pilot.press("f")
        await until(pilot, lambda: isinstance(app.screen, ChoiceDialog))
        await pilot.press("down", "down", "enter")  # every team: red is held too
        await until(pilot, lambda: task in red.need().held)
        assert task in blue.need().held

    def holds(folder: Path) -> list[str]:
        return [e.action for e in of_kind(read_events(folder).events, ev.Facilitation)
                if e.action in ("hold", "release")]

    assert holds(blue.folder) == ["hold"] and holds(red.folder) == ["hold"]
