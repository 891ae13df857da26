"""Escape codes and markup in data reach the TUI's grid, status line, feed and toasts inert."""

from __future__ import annotations

from typing import Any

import pytest
from tui_fixtures import MakeApp, settle, start_play

from raceday.exercise.model import Exercise
from raceday.tui.screens.play import PlayScreen
from raceday.tui.widgets.feed import EventFeed
from raceday.tui.widgets.results import ResultsView

pytestmark = pytest.mark.tui
OSC = "\x1b]0;PWNED\x07"


def _plain(widget: Any) -> str:
    return str(widget.render())


async def test_escape_codes_in_values_sql_and_errors_are_shown_not_sent(
        make_app: MakeApp, flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        editor = screen.editor
        editor.text = "SELECT char(27) || ']0;PWNED' || char(7) AS title, '[/]' AS markup;"
        await pilot.press("f5")
        await settle(pilot)
        grid = screen.query_one(ResultsView).table
        assert grid.cell(0, 0) == "\u241b]0;PWNED\u2407"
        assert grid.cell(0, 1) == "[/]"
        editor.text = f"SELECT * FROM \"{OSC}[/]\";"
        await pilot.press("f5")
        await settle(pilot)
        status = _plain(screen.query_one(ResultsView).status)
        assert "\u241b]0;PWNED" in status and "\x1b" not in status
        feed = "\n".join(str(line) for line in screen.query_one(EventFeed).lines)
        assert "\x1b" not in feed and "\u241b" in feed
        app.notify(f"boom {OSC} [/] [bold]", title=OSC)  # neither crashes nor obeys
        await settle(pilot)
