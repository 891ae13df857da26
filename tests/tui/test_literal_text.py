"""Text an exercise's author or a player typed is shown as typed: `[red]`, `[link=...]` or a
stray `[/]` in a title, a finding, a name or a value is neither obeyed as Rich markup nor
allowed to break the screen."""

from __future__ import annotations

import dataclasses
import io
import shutil
import threading
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import DataTable, Input, OptionList, Static
from tui_fixtures import DATA, MakeApp, drawn, settle, start_play

from raceday.engine import load
from raceday.engine.snapshot import WorldView
from raceday.exercise.model import Exercise
from raceday.tui.briefing_head import load_keeping_head, read_head
from raceday.tui.screens.briefing import BriefingScreen, PendingExercise
from raceday.tui.screens.cast import CastScreen
from raceday.tui.screens.dialogs import ChoiceDialog, ConfirmDialog
from raceday.tui.screens.harden import HardenScreen
from raceday.tui.screens.launcher import LauncherScreen
from raceday.tui.screens.play import PlayScreen
from raceday.tui.widgets.world import Alarms, render_world

pytestmark = pytest.mark.tui

TITLES = [
    "Drill [red]x[/red] [bold",  # styled, and an open tag left hanging
    "[link=https://example.com]Drill night[/link]",  # a link that hides its own tag
    "Drill [/] night",  # a closing tag with nothing to close: a MarkupError in markup
]


def titled(exercise: Exercise, title: str) -> Exercise:
    return dataclasses.replace(exercise, title=title)


@pytest.mark.parametrize("title", TITLES)
async def test_the_briefing_bar_shows_the_title_as_typed(make_app: MakeApp, mini: Exercise,
                                                         title: str) -> None:
    app = make_app(titled(mini, title))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, BriefingScreen)
        assert drawn(app.screen.query_one("#briefing-bar", Static)) == \
            f" Briefing · {title} · 23:00 PDT   Enter starts"


async def test_the_first_frame_of_play_id_shows_the_kept_title_as_typed(
        make_app: MakeApp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`raceday play ID` draws the kept head before the load: its bar too."""
    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "mini-dns"
    shutil.copytree(DATA / "mini-dns", folder)
    yaml_file = folder / "exercise.yaml"
    yaml_file.write_text(yaml_file.read_text().replace(
        "title: Mini DNS race\n", "title: \"Drill [red]x[/red] [bold\"\n"))
    load_keeping_head(folder)
    head = read_head(folder)
    assert head is not None
    app = make_app(None)
    app.pending = PendingExercise(folder, head)
    gate = threading.Event()
    real = load.load_exercise
    monkeypatch.setattr(load, "load_exercise", lambda *a, **k: (gate.wait(10), real(*a, **k))[1])
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        bar = app.screen.query_one("#briefing-bar", Static)
        assert app.exercise is None  # the first frame, from the kept head
        assert "Briefing · Drill [red]x[/red] [bold · 23:00" in drawn(bar)
        gate.set()
        await settle(pilot)
        assert app.exercise is not None
        assert "Briefing · Drill [red]x[/red] [bold · 23:00" in drawn(bar)


@pytest.mark.parametrize("title", TITLES[:1] + TITLES[2:])
async def test_the_cast_bar_shows_the_title_as_typed(make_app: MakeApp, mini: Exercise,
                                                     title: str) -> None:
    app = make_app(titled(mini, title), mode="team")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, CastScreen)
        assert drawn(app.screen.query_one("#cast-bar", Static)).startswith(
            f" Cast · {title}   who plays which role?")


async def test_a_player_name_with_brackets_is_the_editor_title_as_typed(
        make_app: MakeApp, mini: Exercise) -> None:
    app = make_app(mini, mode="team")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, CastScreen)
        app.screen.query_one("#cast-responder", Input).value = "Dee [b]on call[/b] [/]"
        await pilot.press("ctrl+s")
        await settle(pilot)
        play = app.screen
        assert isinstance(play, PlayScreen)
        assert "responder · Dee [b]on call[/b] [/]" in drawn(play.editor).splitlines()[0]


async def test_a_dialog_shows_findings_and_messages_as_typed(make_app: MakeApp,
                                                             mini: Exercise) -> None:
    """A finding's text, a hint's or an error message reaches a dialog as it is."""
    app = make_app(mini)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.push_screen(ChoiceDialog("Declare [b]a[/b] finding", [
            ("one", "The [red]regional[/red] endpoint"), ("two", "A [/] stray tag")],
            note="[link=https://example.com]read me[/link]"))
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ChoiceDialog)
        shown = "\n".join(drawn(w) for w in dialog.query(Static))
        assert "Declare [b]a[/b] finding" in shown
        assert "[link=https://example.com]read me[/link]" in shown
        choices = dialog.query_one(OptionList)
        options = drawn(choices)
        assert "The [red]regional[/red] endpoint" in options and "A [/] stray tag" in options
        await pilot.press("escape")
        await pilot.pause()
        app.push_screen(ConfirmDialog("The session cannot go on: near \"[/]\": syntax error"))
        await pilot.pause()
        question = app.screen.query_one(".dialog-text", Static)
        assert "near \"[/]\": syntax error" in drawn(question)


async def test_a_statement_description_is_shown_as_typed_on_the_harden_screen(
        make_app: MakeApp, mini: Exercise) -> None:
    statements = tuple(dataclasses.replace(s, description="Sets [bold]the[/bold] plan [/]")
                       for s in mini.statements)
    app = make_app(dataclasses.replace(mini, statements=statements))
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        await pilot.press("f4")
        await pilot.pause()
        harden = app.screen
        assert isinstance(harden, HardenScreen)
        notes = [drawn(w) for w in harden.query(".harden-note").results(Static)]
        assert notes and all(n == "Sets [bold]the[/bold] plan [/]" for n in notes)


def test_the_world_panel_shows_a_table_of_the_world_as_it_holds_it() -> None:
    """A row the players wrote (`UPDATE ... SET note = '[/]'`) is data, never markup."""
    world = WorldView(tables=(("Plans [b]now[/b]", ("note [i]", "id"),
                               (("[red]stale[/red]", "1"), ("[/]", "2"))),))
    out = io.StringIO()
    Console(file=out, width=80, color_system=None).print(render_world(world, Alarms()))
    text = out.getvalue()
    assert "Plans [b]now[/b]" in text and "note [i]" in text
    assert "[red]stale[/red]" in text and "[/]" in text


async def test_the_launcher_lists_a_broken_exercise_as_its_file_says(
        make_app: MakeApp, tmp_path: Path) -> None:
    """An exercise that does not load is listed with what can be read of it: its level and
    role ids are whatever its file says (the tests run in tmp_path: ./exercises is here)."""
    folder = tmp_path / "exercises" / "broken-drill"
    folder.mkdir(parents=True)
    (folder / "exercise.yaml").write_text(
        'id: broken-drill\ntitle: "Broken [b]drill[/b]"\nlevel: "[/]"\n'
        'roles:\n  - id: "[red]ops[/red]"\n')
    app = make_app(None)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, LauncherScreen)
        table = app.screen.query_one("#exercises", DataTable)
        row = next(i for i, key in enumerate(table.rows) if key.value == "broken-drill")
        table.move_cursor(row=row)
        await pilot.pause()
        shown = drawn(table)
        assert "Broken [b]drill[/b]" in shown
        assert "[/]" in shown and "[red]ops[/red]" in shown
