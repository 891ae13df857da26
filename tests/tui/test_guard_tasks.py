"""A guard closes its task the moment it is in place: after a schema change or an edit, the
race is played on a copy of the team's database in the background, with no ctrl+r, and
nothing is recorded. Taking the guard away opens the task again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from tui_fixtures import MakeApp, settle, start_play, type_text, wait_until

from raceday.engine.actions import EditStatement
from raceday.engine.load import load_named_exercise
from raceday.exercise.model import Exercise
from raceday.transcript import events as ev
from raceday.tui.screens.play import PlayScreen
from raceday.tui.widgets.tasks import TaskList

pytestmark = pytest.mark.tui


@pytest.fixture(scope="module")
def lost_update() -> Exercise:
    return load_named_exercise(str(Path(__file__).parents[2] / "exercises" / "lost-update-basics"))


def task_line(screen: PlayScreen, title: str) -> str:
    text = str(screen.query_one(TaskList).render())
    return next((line for line in text.splitlines() if title in line), "")


async def run_sql(pilot: Pilot[Any], screen: PlayScreen, sql: str) -> None:
    screen.editor.text = ""
    await type_text(pilot, sql)
    await pilot.press("f5")
    await settle(pilot)


async def test_a_unique_index_closes_its_guard_task_at_once_and_dropping_it_reopens_it(
        make_app: MakeApp, lost_update: Exercise) -> None:
    app = make_app(lost_update)
    async with app.run_test(size=(140, 44)) as pilot:
        await start_play(pilot)
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        title = "Guard 5: make the retry harmless"
        assert "guard-retry" not in screen.handled_tasks()
        await run_sql(pilot, screen, "CREATE UNIQUE INDEX one_each ON read_pool (host)")
        await wait_until(pilot, lambda: "guard-retry" in screen.handled_tasks())
        assert screen.snapshot is not None and screen.snapshot.clock_face < "09:17"
        assert "✓" in task_line(screen, title)
        assert "Guard 1" in task_line(screen, "Guard 1") and "✓" not in task_line(
            screen, "Guard 1")  # only the guard in place closes
        session = screen.runner.session if screen.runner else None
        assert session is not None
        assert not [e for e in session.events if isinstance(e, ev.Replay)]  # nothing recorded
        await run_sql(pilot, screen, "DROP INDEX one_each")
        await wait_until(pilot, lambda: "guard-retry" not in screen.handled_tasks())
        assert "✓" not in task_line(screen, title)


async def test_a_guard_that_does_not_stop_its_step_leaves_the_task_open(
        make_app: MakeApp, lost_update: Exercise) -> None:
    """A schema change that is not the guard (an index that is not unique) closes nothing."""
    app = make_app(lost_update)
    async with app.run_test(size=(140, 44)) as pilot:
        await start_play(pilot)
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        await run_sql(pilot, screen, "CREATE INDEX by_host ON read_pool (host)")
        await settle(pilot)
        assert screen.stopped_steps == set()
        assert "guard-retry" not in screen.handled_tasks()


async def test_an_edited_statement_closes_its_guard_task(make_app: MakeApp,
                                                         lost_update: Exercise) -> None:
    """Guard 1 is an edit (the save states the version it read), saved as the harden screen
    saves it: its task closes before 09:05, when it falls due."""
    app = make_app(lost_update)
    async with app.run_test(size=(140, 44)) as pilot:
        await start_play(pilot)
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        guarded = ("UPDATE config SET value = :value, version = version + 1, "
                   "updated_by = 'writer-b', updated_at = :now_hhmm "
                   "WHERE key = 'primary_db' AND version = :version")
        screen.perform("edit", EditStatement(role="operator", statement="writer-b-save",
                                             sql=guarded))
        await wait_until(pilot, lambda: "guard-version" in screen.handled_tasks())
        assert "✓" in task_line(screen, "Guard 1: a save must prove it is")


async def test_a_guard_that_stops_the_service_doing_its_job_closes_nothing(
        make_app: MakeApp, lost_update: Exercise) -> None:
    """Dropping the jobs' table "stops" every step of the race, and the normal morning's
    good writes with them: no task closes, and one that had closed opens again."""
    app = make_app(lost_update)
    async with app.run_test(size=(140, 44)) as pilot:
        await start_play(pilot)
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        await run_sql(pilot, screen, "CREATE UNIQUE INDEX one_each ON read_pool (host)")
        await wait_until(pilot, lambda: "guard-retry" in screen.handled_tasks())
        await run_sql(pilot, screen, "DROP TABLE job_run")
        await wait_until(pilot, lambda: "guard-retry" not in screen.handled_tasks())
        assert not {t.id for t in lost_update.tasks if t.proves} & screen.handled_tasks()
