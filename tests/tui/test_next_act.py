"""The end screen offers the exercise that plays the rest of the night (n), and the launcher it
opens says what Enter does: the line that leads the list promises a briefing only for the
exercise under the cursor."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Static
from tui_fixtures import MakeApp, drawn, end_play, settle, start_play, wait_until

from raceday.exercise.model import Exercise
from raceday.tui.screens.briefing import BriefingScreen
from raceday.tui.screens.launcher import LauncherScreen

pytestmark = pytest.mark.tui


async def test_n_on_the_flagships_end_opens_the_next_act_and_enter_reads_its_briefing(
        make_app: MakeApp, flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        end = await end_play(pilot)
        bar = end.query_one("#end-bar", Static)
        await wait_until(pilot, lambda: "n: the next act" in drawn(bar))
        assert "Recovery under load" in drawn(bar)

        await pilot.press("n")
        await settle(pilot)
        launcher = app.screen
        assert isinstance(launcher, LauncherScreen)
        table = launcher.query_one("#exercises", DataTable)
        assert launcher.entries[table.cursor_row].id == "recovery-under-load"
        # the night just finished: the launcher's lead line says the same, and Enter reads it
        lead = drawn(launcher.query_one("#launcher-start", Static))
        assert "Next: Recovery under load" in lead and "Enter reads its briefing" in lead

        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, BriefingScreen)
        assert app.screen.exercise is not None
        assert app.screen.exercise.id == "recovery-under-load"


async def test_the_lead_line_promises_the_briefing_of_the_exercise_under_the_cursor(
        make_app: MakeApp) -> None:
    app = make_app(None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        launcher = app.screen
        assert isinstance(launcher, LauncherScreen)
        table = launcher.query_one("#exercises", DataTable)
        lead = launcher.query_one("#launcher-start", Static)
        suggested = launcher.suggestion
        assert suggested is not None
        ids = [e.id for e in launcher.entries]
        assert ids[table.cursor_row] == suggested.id
        assert "Enter reads its briefing" in drawn(lead)
        other = next(i for i, ident in enumerate(ids) if ident != suggested.id)
        table.move_cursor(row=other)
        await settle(pilot)
        assert "Enter reads its briefing" not in drawn(lead)
        assert suggested.why.split(":")[0] in drawn(lead)  # still says where to start
        table.move_cursor(row=ids.index(suggested.id))
        await settle(pilot)
        assert "Enter reads its briefing" in drawn(lead)
