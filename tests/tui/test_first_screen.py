"""The first screen is the screen stack's base: the ways back and forward still go where they
went when it was pushed over Textual's blank screen."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable
from tui_fixtures import MakeApp, settle, start_play

from raceday.exercise.model import Exercise
from raceday.tui.screens.briefing import BriefingScreen
from raceday.tui.screens.launcher import LauncherScreen
from raceday.tui.screens.play import PlayScreen

pytestmark = pytest.mark.tui


async def test_escape_from_a_briefing_the_launcher_opened_goes_back_to_it(
        make_app: MakeApp) -> None:
    app = make_app(None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        launcher = app.screen
        assert isinstance(launcher, LauncherScreen)
        assert launcher.query_one("#exercises", DataTable).row_count > 0
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, BriefingScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen_stack[-1] is launcher
        await pilot.press("enter")
        await settle(pilot)
        await start_play(pilot)
        assert isinstance(app.screen, PlayScreen)


async def test_escape_on_the_briefing_of_play_id_stays_and_enter_starts(
        make_app: MakeApp, mini: Exercise) -> None:
    app = make_app(mini)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        briefing = app.screen
        assert isinstance(briefing, BriefingScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen_stack[-1] is briefing
        await start_play(pilot)
        assert isinstance(app.screen, PlayScreen)


async def test_a_terminal_too_small_at_start_shows_one_notice_and_then_the_briefing(
        make_app: MakeApp, mini: Exercise) -> None:
    app = make_app(mini)
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(pilot)
        assert [type(s).__name__ for s in app.screen_stack] == ["BriefingScreen",
                                                               "TooSmallScreen"]
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert isinstance(app.screen, BriefingScreen)
