"""The launcher shows each exercise's best and last score, read from the history."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable
from tui_fixtures import MakeApp, settle

from raceday.engine.headless import open_session
from raceday.engine.load import load_named_exercise

pytestmark = pytest.mark.tui


async def test_the_launcher_shows_best_and_last_beside_a_played_exercise(
        make_app: MakeApp) -> None:
    exercise = load_named_exercise("lost-update-basics")
    totals: list[int] = []
    top = 0
    for repair in (True, False):  # a repaired session, then one that does nothing
        session = open_session(exercise, ("operator",), Path("transcripts"))
        if repair:
            session.advance_to(4)
            session.execute("operator", "UPDATE config SET value = 'db-2', version = 9 "
                                        "WHERE key = 'primary_db'")
        score = session.end()
        totals.append(score.total)
        top = score.max
    assert totals[0] != totals[1]
    app = make_app(None)
    async with app.run_test(size=(140, 30)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#exercises", DataTable)
        headers = [str(c.label) for c in table.columns.values()]
        assert headers[:2] == ["exercise", "your scores"]
        row = table.get_row("lost-update-basics")
        assert row[1] == f"best {max(totals)}/{top} · last {totals[1]}/{top}"
        assert table.get_row("dynamodb-dns-race")[1] == ""


async def test_without_history_the_launcher_has_no_scores_column(make_app: MakeApp) -> None:
    app = make_app(None)
    async with app.run_test(size=(140, 30)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#exercises", DataTable)
        assert "your scores" not in [str(c.label) for c in table.columns.values()]
        assert not Path("transcripts").exists()


async def test_a_statement_that_does_not_compile_stops_the_exercise_when_chosen(
        make_app: MakeApp) -> None:
    """The launcher reads what it lists; the SQL is compiled (the world built) for the
    exercise chosen, and what does not compile is shown as `raceday check` shows it."""
    import shutil

    from tui_fixtures import DATA

    from raceday.tui.screens.launcher import LauncherScreen

    folder = Path("exercises") / "mini-dns"
    shutil.copytree(DATA / "mini-dns", folder)
    yaml = folder / "exercise.yaml"
    yaml.write_text(yaml.read_text(encoding="utf-8").replace(
        "DELETE FROM plan WHERE id < 2", "DELETE FROM no_such_plans WHERE id < 2"),
        encoding="utf-8")
    app = make_app(None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        launcher = app.screen
        assert isinstance(launcher, LauncherScreen)
        table = launcher.query_one("#exercises", DataTable)
        ids = [e.id for e in launcher.entries]
        table.move_cursor(row=ids.index("mini-dns"))
        await pilot.press("enter")
        await settle(pilot)
        (entry,) = [e for e in launcher.entries if e.id == "mini-dns"]
        assert not entry.ok and entry.error is not None
        assert "exercise.yaml:" in entry.error and "no_such_plans" in entry.error
        shown = str(launcher.query_one("#exercise-detail").render())
        assert "Does not load" in shown and "no_such_plans" in shown
        assert app.screen is launcher  # no briefing


async def test_the_first_run_opens_the_easiest_exercise_guided(make_app: MakeApp) -> None:
    from raceday.tui.screens.briefing import BriefingScreen
    from raceday.tui.screens.launcher import LauncherScreen

    app = make_app(None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        launcher = app.screen
        assert isinstance(launcher, LauncherScreen)
        table = launcher.query_one("#exercises", DataTable)
        assert launcher.entries[table.cursor_row].id == "lost-update-basics"
        assert app.settings.mode == "onboarding"
        start = str(launcher.query_one("#launcher-start").render())
        assert start.startswith("▶ Start here: The lost update (20 min, beginner)")
        assert "start here" in str(table.get_row("lost-update-basics")[0])
        assert "game day: 0." not in str(launcher.query_one("#launcher-settings").render())
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, BriefingScreen)
        assert app.screen.exercise is not None
        assert app.screen.exercise.id == "lost-update-basics"


async def test_a_mode_given_on_the_command_line_is_kept_on_the_first_run(
        make_app: MakeApp) -> None:
    app = make_app(None)
    app.settings.mode_given = True
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.settings.mode == "solo"


async def test_after_the_first_exercise_the_launcher_offers_the_next(make_app: MakeApp) -> None:
    from raceday.tui.screens.launcher import LauncherScreen

    session = open_session(load_named_exercise("lost-update-basics"), ("operator",),
                           Path("transcripts"))
    session.end()
    app = make_app(None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        launcher = app.screen
        assert isinstance(launcher, LauncherScreen)
        table = launcher.query_one("#exercises", DataTable)
        assert launcher.entries[table.cursor_row].id == "dynamodb-dns-race"
        assert app.settings.mode == "solo"
        assert str(launcher.query_one("#launcher-start").render()).startswith(
            "▶ Next: The DNS race")
