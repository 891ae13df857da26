"""Enter on a result cell opens its whole value (issue 59: a table's DDL was cut with "…"
and alt+→ showed no more): newlines kept, shown inert, Esc back to the grid."""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import TextArea
from tui_fixtures import MakeApp, drawn, settle, start_play

from raceday.exercise.model import Exercise
from raceday.tui.screens.cell_view import CellViewScreen, value_text
from raceday.tui.screens.play import PlayScreen
from raceday.tui.widgets.grid import ResultGrid
from raceday.tui.widgets.results import ResultsView

pytestmark = pytest.mark.tui


def play_screen(app: Any) -> PlayScreen:
    screen = app.screen
    assert isinstance(screen, PlayScreen), type(screen).__name__
    return screen


async def run(pilot: Pilot[Any], sql: str) -> ResultGrid:
    """Run `sql` from the editor, then Tab into the results: the grid, focused."""
    screen = play_screen(pilot.app)
    screen.editor.text = sql
    screen.editor.move_cursor(screen.editor.document.end)
    await pilot.press("f5")
    await settle(pilot)
    await pilot.press("tab")
    await pilot.pause()
    grid = screen.query_one(ResultsView).table
    assert pilot.app.focused is grid, pilot.app.focused
    return grid


def shown_value(app: Any) -> str:
    screen = app.screen
    assert isinstance(screen, CellViewScreen), type(screen).__name__
    return screen.query_one("#cell-value", TextArea).text


async def test_enter_on_a_ddl_cell_shows_the_whole_ddl_and_esc_returns(
        make_app: MakeApp, flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        grid = await run(pilot, "SELECT sql FROM sqlite_master;")
        rows = play_screen(app).results.grids[-1].rows
        ddls = [str(row[0]) for row in rows]
        longest = max(range(len(ddls)), key=lambda i: len(ddls[i]) if rows[i][0] else -1)
        ddl = ddls[longest]
        assert "\n" in ddl and len(ddl) > 48  # the grid cuts it: "…", newlines as "↵"
        assert grid.cell(longest, 0) != ddl
        for _ in range(longest):
            await pilot.press("down")
        assert grid.cursor_row == longest
        await pilot.press("enter")
        await pilot.pause()
        assert shown_value(app) == ddl  # the whole of it, newlines kept
        view = app.screen
        body = drawn(view.query_one("#cell-value", TextArea))
        assert ddl.splitlines()[1].strip() in body  # drawn on lines of its own
        await pilot.press("escape")
        await pilot.pause()
        assert play_screen(app).results.table is grid and app.focused is grid


async def test_null_numbers_long_lines_and_markup_are_shown_whole_and_inert(
        make_app: MakeApp, flagship: Exercise) -> None:
    long = "start-" + "x" * 3000 + "-end"
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        grid = await run(pilot, "SELECT NULL AS missing, 42 AS answer, 2.5 AS half, "
                                "'[red]boo[/red] ' || char(27) || '[2J' AS markup, "
                                "'start-' || replace(hex(zeroblob(1500)), '0', 'x') || '-end'"
                                " AS long, x'DEADBEEF' AS blob;")
        expected = ["NULL", "42", "2.5", "[red]boo[/red] \u241b[2J", long]
        for column, want in enumerate(expected):
            assert grid.cursor_column == column
            await pilot.press("enter")
            await pilot.pause()
            assert shown_value(app) == want
            note = drawn(app.screen.query_one("#cell-about"))
            assert grid.columns[column] in note
            if column == 0:
                assert "NULL" in note and "no value" in note
            await pilot.press("escape")
            await pilot.pause()
            assert app.focused is grid
            await pilot.press("right")
        assert grid.cursor_column == 5
        await pilot.press("enter")
        await pilot.pause()
        assert "de ad be ef" in shown_value(app)
        body = drawn(app.screen)
        assert "\x1b" not in body


def test_value_text_says_what_a_value_is() -> None:
    assert value_text(None) == ("NULL", "NULL: no value")
    assert value_text(7) == ("7", "integer")
    assert value_text(0.1) == ("0.1", "real")
    assert value_text("a\nb\n") == ("a\nb\n", "text, 4 characters, 2 lines")
    assert value_text("\x1b]0;x\x07") == ("\u241b]0;x\u2407", "text, 6 characters")
    text, about = value_text(b"\x00\x01")
    assert about == "blob, 2 bytes" and text.startswith("0000  00 01")
