"""Tab in the SQL editor completes a name when there is one to complete, and otherwise moves
on to the next widget (shift+Tab to the previous), as the help says (issue 59)."""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App
from tui_fixtures import MakeApp, start_play

from raceday.exercise.model import Exercise
from raceday.tui.screens.play import PlayScreen
from raceday.tui.widgets.editor import SqlEditor
from raceday.tui.widgets.feed import EventFeed
from raceday.tui.widgets.grid import ResultGrid

pytestmark = pytest.mark.tui


def editor_of(app: Any) -> SqlEditor:
    screen = app.screen
    assert isinstance(screen, PlayScreen), type(screen).__name__
    return screen.editor


def focused(app: App[Any]) -> object:
    """The widget with focus now, read afresh (mypy would keep `app.focused` narrowed across
    the keys pressed since it was last looked at)."""
    return app.focused


async def test_tab_on_the_offered_example_moves_on(make_app: MakeApp, flagship: Exercise) -> None:
    """The play screen opens with the role's example query selected: nothing to complete."""
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        editor = editor_of(app)
        assert editor.selected_text  # the example, offered selected
        text = editor.text
        await pilot.press("tab")
        await pilot.pause()
        assert isinstance(focused(app), ResultGrid), focused(app)
        assert editor.text == text


@pytest.mark.parametrize("typed", ["SELECT xyzzy", "SELECT * FROM endpoint", "SELECT 1;",
                                   "SELECT 1 "])
async def test_tab_with_nothing_to_complete_moves_on(make_app: MakeApp, flagship: Exercise,
                                                     typed: str) -> None:
    """A word nothing completes (or that is already whole), or no word at all."""
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        editor = editor_of(app)
        editor.text = typed
        editor.move_cursor(editor.document.end)
        await pilot.press("tab")
        await pilot.pause()
        assert isinstance(focused(app), ResultGrid), focused(app)
        assert editor.text == typed  # nothing was inserted on the way out
        await pilot.press("shift+tab")
        await pilot.pause()
        assert focused(app) is editor


async def test_tab_with_a_completion_completes_and_stays(make_app: MakeApp,
                                                         flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        editor = editor_of(app)
        editor.text = "SELECT * FROM endp"
        editor.move_cursor(editor.document.end)
        await pilot.press("tab")
        await pilot.pause()
        assert editor.text == "SELECT * FROM endpoint"
        assert focused(app) is editor


async def test_tab_with_several_choices_shows_them_and_stays(make_app: MakeApp,
                                                             flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        editor = editor_of(app)
        editor.text = "SELECT * FROM plan"  # plan, plan_record: a choice to make
        editor.move_cursor(editor.document.end)
        await pilot.press("tab")
        await pilot.pause()
        assert focused(app) is editor
        assert "plan_record" in str(editor.border_subtitle)


async def test_shift_tab_moves_back_and_ctrl_space_never_leaves(make_app: MakeApp,
                                                                flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        editor = editor_of(app)
        editor.text = "SELECT xyzzy"
        editor.move_cursor(editor.document.end)
        await pilot.press("ctrl+space")  # asks for a completion only: none, so it stays
        await pilot.pause()
        assert focused(app) is editor and editor.text == "SELECT xyzzy"
        await pilot.press("shift+tab")
        await pilot.pause()
        assert isinstance(focused(app), EventFeed), focused(app)
