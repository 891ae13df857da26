"""Keys and pastes typed faster than the screen draws arrive whole and in order: what is in
the editor when F5 is handled is what runs (a burst of keys, as a fast typist or a terminal
replaying buffered input sends them, is posted at once, with no pause between keys)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual import events
from tui_fixtures import MakeApp, settle, start_play, wait_until

from raceday.engine.load import load_named_exercise
from raceday.exercise.model import Exercise
from raceday.transcript import events as ev
from raceday.tui.screens.play import PlayScreen

pytestmark = pytest.mark.tui

KEY_NAMES = {" ": "space", "(": "left_parenthesis", ")": "right_parenthesis", ",": "comma",
             "*": "asterisk", "'": "apostrophe", "=": "equals_sign", ";": "semicolon"}


@pytest.fixture(scope="module")
def lost_update() -> Exercise:
    return load_named_exercise(str(Path(__file__).parents[2] / "exercises" / "lost-update-basics"))


def burst(app: Any, *keys: str) -> None:
    """Post every key to the app at once, as the terminal's reader does for buffered input.
    A key is a name ("f5", "backspace") or a run of characters typed one by one."""
    for key in keys:
        if len(key) > 1 and key in ("f2", "f5", "f6", "backspace", "ctrl+l", "ctrl+a", "enter",
                                    "ctrl+s", "down", "up"):
            app.post_message(events.Key(key, None))
            continue
        for char in key:
            app.post_message(events.Key(KEY_NAMES.get(char, char), char))


def typed(screen: PlayScreen) -> list[str]:
    assert screen.runner is not None and screen.runner.session is not None
    return [e.sql for e in screen.runner.session.events
            if isinstance(e, ev.Statement) and not e.automated]


async def test_the_example_is_selected_so_typing_replaces_it(
        make_app: MakeApp, lost_update: Exercise) -> None:
    app = make_app(lost_update)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        assert screen.editor.selected_text == screen.editor.text != ""
        await pilot.press("S", "E", "L")
        assert screen.editor.text == "SEL"


async def test_a_burst_of_keys_then_f5_runs_what_was_typed(
        make_app: MakeApp, lost_update: Exercise) -> None:
    app = make_app(lost_update)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        burst(app, "SELECT 41 AS answer", "f5",
              "ctrl+l", "SELECT max(version) FROM confix", "backspace", "g", "f5",
              "ctrl+l", "SELECT 2 AS two", "f5")
        await wait_until(pilot, lambda: len(typed(screen)) == 3, timeout=10)
        await settle(pilot)
        assert typed(screen) == ["SELECT 41 AS answer", "SELECT max(version) FROM config",
                                 "SELECT 2 AS two"]
        assert screen.editor.text == "SELECT 2 AS two"


async def test_a_paste_then_f5_runs_the_paste(make_app: MakeApp, lost_update: Exercise) -> None:
    app = make_app(lost_update)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        app.post_message(events.Paste("SELECT 7 AS seven, 8 AS eight"))
        burst(app, "f5")
        await wait_until(pilot, lambda: len(typed(screen)) == 1, timeout=10)
        assert typed(screen) == ["SELECT 7 AS seven, 8 AS eight"]


def test_a_hint_goes_into_the_editor_as_sql_with_its_words_as_comments() -> None:
    from raceday.tui.screens.play import hint_sql

    assert hint_sql("UPDATE config SET value = 'db-2' WHERE key = 'primary_db';") == \
        "UPDATE config SET value = 'db-2' WHERE key = 'primary_db';"
    assert hint_sql("Edit writer-b-save to: UPDATE config SET version = version + 1\n"
                    "WHERE version = :version  (0 rows changed = the save was stale)") == (
        "-- Edit writer-b-save to:\nUPDATE config SET version = version + 1 WHERE version = "
        ":version\n-- 0 rows changed = the save was stale")
    assert hint_sql("Compare each host's queue depth with what it serves.") == \
        "-- Compare each host's queue depth with what it serves."


async def test_no_glyph_is_lost_or_doubled_when_the_terminal_is_resized(
        make_app: MakeApp, lost_update: Exercise) -> None:
    from tui_fixtures import drawn

    sql = ("SELECT name FROM host WHERE generation < 3 AND address <> '' AND name <> 'db-9' "
           "AND status <> 'gone' OR generation < 1")
    app = make_app(lost_update)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        screen.editor.text = sql
        await pilot.pause()
        for width in (100, 84, 80, 97, 113, 120, 100):
            await pilot.resize_terminal(width, 30)
            await pilot.pause()
            lines = drawn(screen.editor).splitlines()[1:-1]  # inside the border
            shown = " ".join(line.strip(" │") for line in lines).split()
            assert shown == sql.split(), (width, lines)


async def test_names_typed_fast_on_the_cast_screen_land_in_their_own_roles(
        make_app: MakeApp, lost_update: Exercise) -> None:
    app = make_app(lost_update, mode="team")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("enter")  # briefing -> cast
        await settle(pilot)
        burst(app, "Ana", "enter", "Bo", "ctrl+s")  # operator Ana, writer-a Bo, start
        await wait_until(pilot, lambda: isinstance(app.screen, PlayScreen), timeout=10)
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        assert [(s.role, s.player) for s in screen.seats] == [("operator", "Ana"),
                                                               ("writer-a", "Bo")]
        await settle(pilot)
        burst(app, "f2", "SELECT 1", "f5")  # the next seat's example is replaced, not glued
        await wait_until(pilot, lambda: len(typed(screen)) == 1, timeout=10)
        assert typed(screen) == ["SELECT 1"]


async def test_keys_typed_before_f2_stay_with_the_seat_they_were_typed_for(
        make_app: MakeApp, lost_update: Exercise) -> None:
    app = make_app(lost_update, mode="team")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        burst(app, "Ana", "enter", "Bo", "ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, PlayScreen), timeout=10)
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        await settle(pilot)
        burst(app, "SELECT 9", "f2", "SELECT 8", "f5")
        await wait_until(pilot, lambda: len(typed(screen)) == 1, timeout=10)
        assert typed(screen) == ["SELECT 8"]
        assert screen.seats[0].text == "SELECT 9" and screen.role == "writer-a"


async def test_a_monitor_named_and_saved_in_one_burst_is_saved_with_its_name(
        make_app: MakeApp, lost_update: Exercise) -> None:
    from raceday.tui.screens.dialogs import MonitorDialog

    app = make_app(lost_update)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        burst(app, "ctrl+a", "SELECT key FROM config WHERE value <> 'db-2'")
        app.post_message(events.Key("f7", None))
        await wait_until(pilot, lambda: isinstance(app.screen, MonitorDialog), timeout=10)
        burst(app, "wrong-primary", "enter", "ctrl+a", "SELECT", "enter", "1", "ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, PlayScreen), timeout=10)
        await settle(pilot)
        assert screen.runner is not None and screen.runner.session is not None
        saved = [e for e in screen.runner.session.events if isinstance(e, ev.MonitorSaved)]
        # Enter moved from the name to the SQL; in the SQL it was a new line
        assert [(m.name, m.sql) for m in saved] == [("wrong-primary", "SELECT\n1")]


async def test_down_down_enter_at_once_opens_the_row_the_cursor_reached(
        make_app: MakeApp) -> None:
    """Enter is a priority key on the launcher: it used to read the table's cursor before
    the arrows pressed just ahead of it had moved it, and opened the row it had left."""
    from textual.widgets import DataTable

    from raceday.tui.screens.briefing import BriefingScreen

    app = make_app(None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#exercises", DataTable)
        ids = [str(key.value) for key in table.rows]
        assert len(ids) >= 3
        burst(app, "up", "up", "up", "up", "up")  # from the first row (the suggestion is not)
        await settle(pilot)
        assert table.cursor_row == 0
        burst(app, "down", "down", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, BriefingScreen), timeout=10)
        assert app.exercise is not None and app.exercise.id == ids[2]
