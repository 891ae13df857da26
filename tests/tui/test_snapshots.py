"""Every screen at a fixed size, fixed clock, no blink, no animation (a small test exercise).

Update after checking the report: `pytest tests/tui --snapshot-update`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from textual.pilot import Pilot
from tui_fixtures import DATA, MakeApp, settle, start_play, wait_until

import raceday.exercise.catalog as catalog
import raceday.tui.widgets.results as results
from raceday.engine.load import load_exercise
from raceday.exercise.catalog import ExerciseEntry
from raceday.exercise.model import Exercise

pytestmark = pytest.mark.tui

Snap = Callable[..., bool]


@pytest.fixture(autouse=True)
def steady(monkeypatch: pytest.MonkeyPatch, mini: Exercise) -> None:
    """Elapsed times vary from run to run; the launcher lists only the test exercise."""
    monkeypatch.setattr(results, "format_elapsed", lambda ms: "0.1 ms")
    entry = ExerciseEntry(id=mini.id, path=DATA / "mini-dns", title=mini.title,
                          summary=mini.summary, length=mini.length, level=mini.level,
                          roles=mini.role_ids, exercise=mini)
    monkeypatch.setattr(catalog, "find_exercises", lambda *a, **k: [entry])


def test_launcher(snap_compare: Snap, make_app: MakeApp) -> None:
    assert snap_compare(make_app(None), terminal_size=(100, 30), run_before=settle)


def test_briefing(snap_compare: Snap, make_app: MakeApp, mini: Exercise) -> None:
    assert snap_compare(make_app(mini), terminal_size=(100, 30), run_before=settle)


def test_cast(snap_compare: Snap, make_app: MakeApp, mini: Exercise) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await start_play(pilot)
        await pilot.press(*"Ana")

    assert snap_compare(make_app(mini, mode="team"), terminal_size=(100, 30),
                        run_before=run_before)


async def _after_the_fault(pilot: Pilot[Any]) -> None:
    await start_play(pilot)
    await pilot.press("f5")
    await settle(pilot)
    for _ in range(2):
        await pilot.press("ctrl+n")
        await settle(pilot)


def test_play_wide_after_the_fault(snap_compare: Snap, make_app: MakeApp,
                                   mini: Exercise) -> None:
    assert snap_compare(make_app(mini), terminal_size=(120, 40), run_before=_after_the_fault)


def test_play_at_80x24(snap_compare: Snap, make_app: MakeApp, mini: Exercise) -> None:
    assert snap_compare(make_app(mini), terminal_size=(80, 24), run_before=_after_the_fault)


def test_play_zero_rows_changed(snap_compare: Snap, make_app: MakeApp, mini: Exercise) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await start_play(pilot)
        editor = pilot.app.screen.query_one("#editor")
        editor.text = "UPDATE automation SET enabled = 0 WHERE name = 'nope';"  # type: ignore[attr-defined]
        await pilot.press("f5")
        await settle(pilot)

    assert snap_compare(make_app(mini), terminal_size=(100, 30), run_before=run_before)


def test_onboarding(snap_compare: Snap, make_app: MakeApp, mini: Exercise) -> None:
    assert snap_compare(make_app(mini, mode="onboarding"), terminal_size=(100, 30),
                        run_before=start_play)


def test_end(snap_compare: Snap, make_app: MakeApp, mini: Exercise) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await _after_the_fault(pilot)
        await pilot.press("ctrl+q")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot)

    assert snap_compare(make_app(mini), terminal_size=(100, 40), run_before=run_before)


def test_help(snap_compare: Snap, make_app: MakeApp, mini: Exercise) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await start_play(pilot)
        await pilot.press("f1")
        await pilot.pause()

    assert snap_compare(make_app(mini), terminal_size=(100, 30), run_before=run_before)


def test_too_small(snap_compare: Snap, make_app: MakeApp, mini: Exercise) -> None:
    assert snap_compare(make_app(mini), terminal_size=(60, 20), run_before=settle)


def test_harden(snap_compare: Snap, make_app: MakeApp) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await start_play(pilot)
        await pilot.press("f4")
        await pilot.pause()
        editor = pilot.app.screen.query_one("#sql-0")
        editor.text = ("UPDATE endpoint SET rollback_plan_id = active_plan_id, active_plan_id = 1,"  # type: ignore[attr-defined]
                       "\nupdated_by = 'enactor' WHERE name = 'regional.example' "
                       "AND active_plan_id < 1")
        await pilot.press("ctrl+s")
        await settle(pilot)

    race = load_exercise(DATA / "mini-race")
    assert snap_compare(make_app(race), terminal_size=(100, 30), run_before=run_before)


async def _replay_to_the_empty_answer(pilot: Pilot[Any]) -> None:
    await start_play(pilot)
    await pilot.press("ctrl+r")
    await pilot.pause()
    screen: Any = pilot.app.screen
    await wait_until(pilot, lambda: screen.walk is not None, timeout=30)
    while not screen.step.empty:
        await pilot.press("n")
    await pilot.pause()


def test_replay_step(snap_compare: Snap, make_app: MakeApp) -> None:
    race = load_exercise(DATA / "mini-race")
    assert snap_compare(make_app(race), terminal_size=(100, 30),
                        run_before=_replay_to_the_empty_answer)


def test_replay_verdict(snap_compare: Snap, make_app: MakeApp) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await _replay_to_the_empty_answer(pilot)
        await pilot.press("end")
        await pilot.pause()

    race = load_exercise(DATA / "mini-race")
    assert snap_compare(make_app(race), terminal_size=(100, 30), run_before=run_before)


def test_review_what_matters(snap_compare: Snap) -> None:
    from pathlib import Path

    from raceday.tui.screens.review import ReviewApp

    fixtures = Path(__file__).parents[1] / "transcript" / "fixtures"
    app = ReviewApp.from_folder(fixtures / "night")
    app.animation_level = "none"

    async def listed(pilot: Pilot[Any]) -> None:
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 32), run_before=listed)


def test_debrief_screen(snap_compare: Snap) -> None:
    from pathlib import Path

    from raceday.tui.screens.review import ReviewApp

    fixtures = Path(__file__).parents[1] / "transcript" / "fixtures"
    app = ReviewApp.from_folder(fixtures / "night")
    app.animation_level = "none"

    async def open_debrief(pilot: Pilot[Any]) -> None:
        await pilot.press("d")
        for _ in range(3):  # the screen, then its text rendered in a worker
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 32), run_before=open_debrief)
